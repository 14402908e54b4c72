// SPDX-License-Identifier: BSD-3-Clause
// export_onnx: the source ModelProto, parsed whole (weights included), its initializers rewritten
// as raw little-endian float32 (float_data cleared) and serialized again. The nodes, inputs,
// outputs and opset are the source's: the file is the forward graph that was imported.
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include "toru/core/error.hpp"
#include "toru/train/onnx_export.hpp"

namespace toru::train {

namespace {

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw error(errc::io, fmt::format("{}: cannot open the ONNX file to export from", p.string()));
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::int64_t elements(const onnx::TensorProto& t) {
  std::int64_t n = 1;
  for (const auto d : t.dims()) n *= d;
  return n;
}

void set_floats(onnx::TensorProto& t, std::span<const float> v, const std::filesystem::path& source) {
  if (t.data_type() != onnx::TensorProto_DataType_FLOAT)
    throw error(errc::unsupported, fmt::format("{}: initializer '{}': only float32 initializers are written back, "
                                               "this one has ONNX data type {}",
                                               source.string(), t.name(), t.data_type()));
  if (t.data_location() == onnx::TensorProto_DataLocation_EXTERNAL)
    throw error(errc::unsupported, fmt::format("{}: initializer '{}' is stored in an external file; toru writes "
                                               "initializers into the model file only",
                                               source.string(), t.name()));
  if (elements(t) != static_cast<std::int64_t>(v.size()))
    throw error(errc::invalid_argument,
                fmt::format("{}: initializer '{}': expected {} values (the model's), the file has {}", source.string(),
                            t.name(), v.size(), elements(t)));
  t.clear_float_data();
  // ONNX's raw_data is little-endian, as every host toru runs on.
  t.set_raw_data(std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float)));
}

}  // namespace

bool onnx_export_available() noexcept { return true; }

void export_onnx(const std::filesystem::path& source, const model& m, std::span<const float> params,
                 std::span<const float> buffers, const std::filesystem::path& out) {
  std::size_t nb = 0;
  for (const auto& b : m.buffers()) nb += static_cast<std::size_t>(b.count);
  if (params.size() != static_cast<std::size_t>(m.parameter_count()))
    throw error(errc::invalid_argument,
                fmt::format("params: expected the model's {} parameters, got {}", m.parameter_count(), params.size()));
  if (buffers.size() != nb)
    throw error(errc::invalid_argument,
                fmt::format("buffers: expected the model's {} running-statistics floats, got {}", nb, buffers.size()));
  onnx::ModelProto proto;
  if (!proto.ParseFromString(read_file(source)))
    throw error(errc::invalid_argument,
                fmt::format("{}: expected a serialized ONNX ModelProto, could not parse it", source.string()));
  auto* gp = proto.mutable_graph();
  std::map<std::string, onnx::TensorProto*> init;
  for (auto& t : *gp->mutable_initializer()) init[t.name()] = &t;
  // A weight imported through Transpose (PyTorch's weight.t()) is named after the Transpose's output.
  std::map<std::string, std::string> transposed;
  for (const auto& n : gp->node())
    if (n.op_type() == "Transpose" && n.input_size() == 1 && n.output_size() == 1 && init.contains(n.input(0)))
      transposed[n.output(0)] = n.input(0);

  std::set<std::string> written;
  for (const auto& slot : m.parameters()) {
    const auto v = params.subspan(static_cast<std::size_t>(slot.offset), static_cast<std::size_t>(slot.count));
    if (const auto it = init.find(slot.name); it != init.end()) {
      set_floats(*it->second, v, source);
      written.insert(slot.name);
    } else if (const auto tr = transposed.find(slot.name); tr != transposed.end() && slot.shape.size() == 2) {
      // The model holds the transposed weight [cols, rows]; the file the original [rows, cols].
      const auto cols = slot.shape[0], rows = slot.shape[1];
      std::vector<float> w(v.size());
      for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t c = 0; c < cols; ++c)
          w[static_cast<std::size_t>(r * cols + c)] = v[static_cast<std::size_t>(c * rows + r)];
      set_floats(*init.at(tr->second), w, source);
      written.insert(tr->second);
    } else {
      throw error(errc::invalid_argument,
                  fmt::format("{}: expected an initializer for the model's parameter '{}', found none (export "
                              "writes into the ONNX file the model was imported from)",
                              source.string(), slot.name));
    }
  }
  for (const auto& b : m.buffers()) {
    const auto it = init.find(b.name);
    if (it == init.end())
      throw error(errc::invalid_argument,
                  fmt::format("{}: expected an initializer for the model's running statistic '{}', found none",
                              source.string(), b.name));
    set_floats(*it->second, buffers.subspan(static_cast<std::size_t>(b.offset), static_cast<std::size_t>(b.count)),
               source);
  }
  std::string bytes;
  if (!proto.SerializeToString(&bytes))
    throw error(errc::internal, fmt::format("{}: protobuf could not serialize the model", out.string()));
  std::ofstream f(out, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  f.close();
  if (!f) throw error(errc::io, fmt::format("{}: cannot write the exported ONNX file", out.string()));
}

}  // namespace toru::train
