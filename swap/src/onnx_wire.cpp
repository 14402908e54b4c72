// SPDX-License-Identifier: BSD-3-Clause
// Protobuf wire format (https://protobuf.dev/programming-guides/encoding/): a message is a sequence
// of (tag = field << 3 | wire type, payload); wire types 0 varint, 1 fixed64, 2 length-delimited,
// 5 fixed32. ONNX: ModelProto.graph = 7, GraphProto.initializer = 5, TensorProto.data_type = 2,
// name = 8, raw_data = 9; FLOAT = 1.
#include "onnx_wire.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <vector>

#include <fmt/format.h>

#include "toru/core/error.hpp"

namespace toru::swap::detail {

namespace {

constexpr std::uint64_t model_graph = 7, graph_initializer = 5, tensor_type = 2, tensor_name = 8, tensor_raw = 9;
constexpr std::uint64_t float_type = 1;

struct field {
  std::uint64_t number = 0, wire = 0, value = 0;  // value: varint value (wire 0)
  std::string_view all;                           // tag and payload, as in the input
  std::string_view payload;                       // wire 2: the bytes after the length
};

bool varint(std::string_view in, std::size_t& at, std::uint64_t& v) {
  v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (at >= in.size()) return false;
    const auto b = static_cast<std::uint8_t>(in[at++]);
    v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) return true;
  }
  return false;
}

void put_varint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

// Splits a message into its fields; false when it is not well formed.
bool fields(std::string_view in, std::vector<field>& out) {
  std::size_t at = 0;
  while (at < in.size()) {
    const std::size_t start = at;
    std::uint64_t tag = 0;
    if (!varint(in, at, tag)) return false;
    field f;
    f.number = tag >> 3;
    f.wire = tag & 7;
    switch (f.wire) {
      case 0:
        if (!varint(in, at, f.value)) return false;
        break;
      case 1:
        at += 8;
        break;
      case 5:
        at += 4;
        break;
      case 2: {
        std::uint64_t len = 0;
        if (!varint(in, at, len) || len > in.size() - at) return false;
        f.payload = in.substr(at, len);
        at += len;
        break;
      }
      default:
        return false;  // groups (3, 4) are not used by ONNX
    }
    if (at > in.size()) return false;
    f.all = in.substr(start, at - start);
    out.push_back(f);
  }
  return true;
}

void put_message(std::string& out, std::uint64_t number, const std::string& payload) {
  put_varint(out, number << 3 | 2);
  put_varint(out, payload.size());
  out += payload;
}

bool strip_tensor(std::string_view in, std::size_t min_bytes, std::string& out, stripped_model& m) {
  std::vector<field> fs;
  if (!fields(in, fs)) return false;
  std::uint64_t type = 0;
  std::string_view name, raw;
  for (const auto& f : fs) {
    if (f.number == tensor_type && f.wire == 0) type = f.value;
    if (f.number == tensor_name && f.wire == 2) name = f.payload;
    if (f.number == tensor_raw && f.wire == 2) raw = f.payload;
  }
  const bool cut = type == float_type && raw.size() >= min_bytes && !name.empty();
  for (const auto& f : fs)
    if (!(cut && f.number == tensor_raw)) out += f.all;
  if (cut) m.weights[std::string(name)] = raw;
  return true;
}

bool strip_graph(std::string_view in, std::size_t min_bytes, std::string& out, stripped_model& m) {
  std::vector<field> fs;
  if (!fields(in, fs)) return false;
  for (const auto& f : fs) {
    if (f.number == graph_initializer && f.wire == 2) {
      std::string t;
      if (!strip_tensor(f.payload, min_bytes, t, m)) return false;
      put_message(out, f.number, t);
    } else {
      out += f.all;
    }
  }
  return true;
}

}  // namespace

std::optional<stripped_model> strip_initializer_data(std::string_view in, std::size_t min_bytes) {
  std::vector<field> fs;
  if (!fields(in, fs)) return std::nullopt;
  stripped_model m;
  for (const auto& f : fs) {
    if (f.number == model_graph && f.wire == 2) {
      std::string g;
      if (!strip_graph(f.payload, min_bytes, g, m)) return std::nullopt;
      put_message(m.bytes, f.number, g);
    } else {
      m.bytes += f.all;
    }
  }
  return m;
}

mapped_file::mapped_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw error(errc::io, fmt::format("onnx file '{}': expected a readable file, could not open it", path));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_size <= 0) {
    ::close(fd);
    throw error(errc::invalid_argument,
                fmt::format("onnx file '{}': expected a serialized ModelProto, the file is empty", path));
  }
  size_ = static_cast<std::size_t>(st.st_size);
  data_ = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (data_ == MAP_FAILED) throw error(errc::io, fmt::format("onnx file '{}': could not map it", path));
}

mapped_file::~mapped_file() { ::munmap(data_, size_); }

}  // namespace toru::swap::detail
