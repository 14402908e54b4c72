#include "toru/swap/onnx_import.hpp"

#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "toru/config.hpp"
#include "toru/core/error.hpp"

#if TORU_ENABLE_ONNX
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>
#endif

namespace toru::swap {

namespace {

// How the gradient of each supported op type reads the forward tensors.
enum class saves { none, inputs, output, input0, input0_output, input0_1 };
struct op_rule {
  saves what;
  bool passthrough;  // gradient of every input is the output gradient (same-shape adds, views)
  double backward_factor;
};

const std::map<std::string, op_rule, std::less<>>& rules() {
  static const std::map<std::string, op_rule, std::less<>> r = {
      {"Conv", {saves::input0_1, false, 2}},
      {"ConvTranspose", {saves::input0_1, false, 2}},
      {"Gemm", {saves::input0_1, false, 2}},
      {"MatMul", {saves::input0_1, false, 2}},
      {"Relu", {saves::output, false, 2}},
      {"Sigmoid", {saves::output, false, 2}},
      {"Tanh", {saves::output, false, 2}},
      {"LeakyRelu", {saves::input0, false, 2}},
      {"Gelu", {saves::input0, false, 2}},
      {"Erf", {saves::input0, false, 2}},
      {"Softmax", {saves::output, false, 2}},
      {"LogSoftmax", {saves::output, false, 2}},
      {"BatchNormalization", {saves::input0_1, false, 2}},
      {"LayerNormalization", {saves::input0_1, false, 2}},
      {"MaxPool", {saves::input0_output, false, 1}},
      {"AveragePool", {saves::none, false, 1}},
      {"GlobalAveragePool", {saves::none, false, 1}},
      {"Add", {saves::none, true, 1}},
      {"Sum", {saves::none, true, 1}},
      {"Sub", {saves::none, true, 1}},
      {"Mul", {saves::inputs, false, 2}},
      {"Div", {saves::inputs, false, 2}},
      {"Concat", {saves::none, false, 1}},
      {"Flatten", {saves::none, true, 1}},
      {"Reshape", {saves::none, true, 1}},
      {"Squeeze", {saves::none, true, 1}},
      {"Unsqueeze", {saves::none, true, 1}},
      {"Transpose", {saves::none, false, 1}},
      {"Identity", {saves::none, true, 1}},
      {"Dropout", {saves::none, true, 1}},
      {"Resize", {saves::none, false, 1}},
      {"Upsample", {saves::none, false, 1}},
      {"Pad", {saves::none, false, 1}},
      {"ReduceMean", {saves::none, false, 1}},
      {"Constant", {saves::none, false, 0}},
  };
  return r;
}

}  // namespace

std::vector<std::string> onnx_supported_ops() {
  std::vector<std::string> n;
  for (const auto& [k, v] : rules()) n.push_back(k);
  return n;
}

#if TORU_ENABLE_ONNX

bool onnx_available() noexcept { return true; }

namespace {

dtype from_onnx(int t, const std::string& tensor) {
  switch (t) {
    case onnx::TensorProto_DataType_FLOAT:
      return dtype::f32;
    case onnx::TensorProto_DataType_FLOAT16:
      return dtype::f16;
    case onnx::TensorProto_DataType_BFLOAT16:
      return dtype::bf16;
    case onnx::TensorProto_DataType_INT64:
      return dtype::i64;
    case onnx::TensorProto_DataType_INT32:
      return dtype::i32;
    default:
      throw error(
          errc::unsupported,
          fmt::format("onnx tensor '{}': expected float, float16, bfloat16, int64 or int32, got type {}", tensor, t));
  }
}

double numel(const std::vector<std::int64_t>& s) {
  double n = 1;
  for (auto e : s) n *= static_cast<double>(e);
  return n;
}

const onnx::AttributeProto* find_attr(const onnx::NodeProto& n, std::string_view name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}
std::vector<std::int64_t> ints(const onnx::NodeProto& n, std::string_view name) {
  const auto* a = find_attr(n, name);
  return a ? std::vector<std::int64_t>(a->ints().begin(), a->ints().end()) : std::vector<std::int64_t>{};
}
std::int64_t int_or(const onnx::NodeProto& n, std::string_view name, std::int64_t def) {
  const auto* a = find_attr(n, name);
  return a ? a->i() : def;
}
double float_or(const onnx::NodeProto& n, std::string_view name, double def) {
  const auto* a = find_attr(n, name);
  return a ? a->f() : def;
}

// The executor's attributes of an ONNX node (swap::op_attributes, PyTorch conventions).
void fill_attributes(const onnx::NodeProto& n, std::int64_t opset, op& o) {
  auto& a = o.attr;
  const auto& t = n.op_type();
  if (t == "Conv" || t == "MaxPool" || t == "AveragePool") {
    a.kernel = ints(n, "kernel_shape");
    a.stride = ints(n, "strides");
    a.dilation = ints(n, "dilations");
    const auto pads = ints(n, "pads");
    if (const auto* ap = find_attr(n, "auto_pad"); ap && ap->s() != "NOTSET" && ap->s() != "VALID")
      throw error(
          errc::unsupported,
          fmt::format("onnx node '{}': auto_pad '{}' is not supported; export with explicit pads", o.name, ap->s()));
    if (!pads.empty()) {
      const auto half = pads.size() / 2;
      a.pad_begin.assign(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(half));
      a.pad_end.assign(pads.begin() + static_cast<std::ptrdiff_t>(half), pads.end());
    }
    a.groups = int_or(n, "group", 1);
    a.ceil_mode = int_or(n, "ceil_mode", 0) != 0;
    a.count_include_pad = int_or(n, "count_include_pad", 0) != 0;
    a.has_bias = t == "Conv" && n.input_size() > 2 && !n.input(2).empty();
  } else if (t == "BatchNormalization") {
    a.epsilon = float_or(n, "epsilon", 1e-5);
    a.momentum = 1.0 - float_or(n, "momentum", 0.9);  // ONNX weighs the running value
  } else if (t == "LayerNormalization") {
    a.epsilon = float_or(n, "epsilon", 1e-5);
    a.axis = int_or(n, "axis", -1);
  } else if (t == "Gemm") {
    if (int_or(n, "transA", 0) != 0 || float_or(n, "alpha", 1) != 1 || float_or(n, "beta", 1) != 1)
      throw error(errc::unsupported,
                  fmt::format("onnx node '{}': Gemm with transA or alpha/beta other than 1 is not supported", o.name));
    a.trans_b = int_or(n, "transB", 0) != 0;
    a.has_bias = n.input_size() > 2 && !n.input(2).empty();
  } else if (t == "MatMul") {
    a.trans_b = false;
  } else if (t == "Concat") {
    a.axis = int_or(n, "axis", 1);
  } else if (t == "Softmax" || t == "LogSoftmax") {
    a.axis = int_or(n, "axis", opset >= 13 ? -1 : 1);
  } else if (t == "Flatten") {
    a.axis = int_or(n, "axis", 1);
  } else if (t == "Dropout") {
    a.p = float_or(n, "ratio", 0.5);
  }
}

// Values of a float (or integer) initializer, as floats; empty for other types.
std::vector<float> initial_values(const onnx::TensorProto& t) {
  std::vector<float> v;
  const bool raw = t.has_raw_data();
  switch (t.data_type()) {
    case onnx::TensorProto_DataType_FLOAT:
      if (raw) {
        v.resize(t.raw_data().size() / 4);
        std::memcpy(v.data(), t.raw_data().data(), v.size() * 4);
      } else {
        v.assign(t.float_data().begin(), t.float_data().end());
      }
      break;
    case onnx::TensorProto_DataType_INT64:
      if (raw) {
        std::vector<std::int64_t> w(t.raw_data().size() / 8);
        std::memcpy(w.data(), t.raw_data().data(), w.size() * 8);
        v.assign(w.begin(), w.end());
      } else {
        v.assign(t.int64_data().begin(), t.int64_data().end());
      }
      break;
    default:
      break;
  }
  return v;
}

}  // namespace

graph import_onnx_bytes(const std::string& bytes, const std::string& name, const onnx_options& options) {
  if (options.batch <= 0)
    throw error(errc::invalid_argument, fmt::format("batch: expected a positive value, got {}", options.batch));
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes))
    throw error(errc::invalid_argument,
                fmt::format("onnx model '{}': expected a serialized ModelProto, could not parse it", name));
  auto* gp = model.mutable_graph();
  if (gp->node_size() == 0 || gp->output_size() == 0)
    throw error(errc::invalid_argument,
                fmt::format("onnx model '{}': expected nodes and an output, got an empty graph", name));
  {
    std::set<std::string> bad;
    for (const auto& n : gp->node())
      if (!rules().contains(n.op_type()) || !(n.domain().empty() || n.domain() == "ai.onnx")) bad.insert(n.op_type());
    if (!bad.empty())
      throw error(errc::unsupported, fmt::format("onnx model '{}': unsupported op types {}; supported: {}", name,
                                                 fmt::join(bad, ", "), fmt::join(onnx_supported_ops(), ", ")));
  }
  std::set<std::string> initializer_names;
  for (const auto& t : gp->initializer()) initializer_names.insert(t.name());
  for (auto& in : *gp->mutable_input()) {
    if (initializer_names.contains(in.name())) continue;
    auto* shape = in.mutable_type()->mutable_tensor_type()->mutable_shape();
    if (shape->dim_size() > 0 && !shape->dim(0).has_dim_value()) shape->mutable_dim(0)->set_dim_value(options.batch);
  }
  try {
    onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(),
                                       onnx::ShapeInferenceOptions(false, 1));
  } catch (const std::exception& e) {
    throw error(errc::invalid_argument, fmt::format("onnx model '{}': shape inference failed: {}", name, e.what()));
  }

  std::int64_t opset = 13;
  for (const auto& imp : model.opset_import())
    if (imp.domain().empty() || imp.domain() == "ai.onnx") opset = imp.version();
  graph g;
  g.name = name;
  std::map<std::string, int> id;
  auto shape_of = [&](const onnx::ValueInfoProto& v) {
    std::vector<std::int64_t> s;
    for (const auto& d : v.type().tensor_type().shape().dim()) {
      if (!d.has_dim_value() || d.dim_value() <= 0)
        throw error(
            errc::invalid_argument,
            fmt::format("onnx tensor '{}': expected a known positive shape after shape inference, got a symbolic "
                        "or missing extent",
                        v.name()));
      s.push_back(d.dim_value());
    }
    if (s.empty()) s.push_back(1);
    return s;
  };
  std::map<std::string, const onnx::ValueInfoProto*> info;
  for (const auto& v : gp->value_info()) info[v.name()] = &v;
  for (const auto& v : gp->output()) info[v.name()] = &v;
  // BatchNormalization running mean/var are state, not trained parameters.
  std::set<std::string> stats;
  for (const auto& n : gp->node())
    if (n.op_type() == "BatchNormalization")
      for (int i = 3; i < n.input_size(); ++i) stats.insert(n.input(i));
  for (const auto& t : gp->initializer()) {
    std::vector<std::int64_t> s;
    for (int k = 0; k < t.dims_size(); ++k) s.push_back(t.dims(k));
    if (s.empty()) s.push_back(1);
    const bool trainable = !stats.contains(t.name()) && (t.data_type() == onnx::TensorProto_DataType_FLOAT ||
                                                         t.data_type() == onnx::TensorProto_DataType_FLOAT16 ||
                                                         t.data_type() == onnx::TensorProto_DataType_BFLOAT16);
    id[t.name()] = g.add_tensor(t.name(), s, from_onnx(t.data_type(), t.name()),
                                trainable ? tensor_kind::parameter : tensor_kind::input);
    g.tensors[id[t.name()]].init.values = initial_values(t);
  }
  for (const auto& in : gp->input())
    if (!id.contains(in.name()))
      id[in.name()] = g.add_tensor(in.name(), shape_of(in), from_onnx(in.type().tensor_type().elem_type(), in.name()),
                                   tensor_kind::input);
  int counter = 0;
  for (const auto& n : gp->node()) {
    const op_rule& rule = rules().at(n.op_type());
    op o;
    o.name = n.name().empty() ? fmt::format("{}_{}", n.op_type(), counter) : n.name();
    ++counter;
    o.type = n.op_type();
    o.block = -1;
    fill_attributes(n, opset, o);
    for (const auto& in : n.input()) {
      if (in.empty()) continue;
      const auto it = id.find(in);
      if (it == id.end())
        throw error(errc::invalid_argument,
                    fmt::format("onnx node '{}': input '{}' is not produced earlier (graph not topologically sorted?)",
                                o.name, in));
      o.inputs.push_back(it->second);
    }
    for (int k = 0; k < n.output_size(); ++k) {
      const auto& out = n.output(k);
      if (out.empty()) continue;
      if (k > 0 && (n.op_type() == "Dropout" || n.op_type() == "BatchNormalization")) continue;  // masks, running stats
      const auto it = info.find(out);
      if (it == info.end())
        throw error(errc::invalid_argument, fmt::format("onnx tensor '{}': shape inference gave no shape", out));
      const int t =
          g.add_tensor(out, shape_of(*it->second), from_onnx(it->second->type().tensor_type().elem_type(), out),
                       n.op_type() == "Constant" ? tensor_kind::input : tensor_kind::activation);
      id[out] = t;
      o.outputs.push_back(t);
    }
    if (o.outputs.empty()) continue;
    const auto& x = o.inputs.empty() ? std::vector<std::int64_t>{1} : g.tensors[o.inputs[0]].shape;
    const auto& y = g.tensors[o.outputs[0]].shape;
    if (n.op_type() == "Conv" || n.op_type() == "ConvTranspose") {
      const auto& w = g.tensors[o.inputs.at(1)].shape;
      double per_out = 1;
      for (std::size_t i = 1; i < w.size(); ++i) per_out *= static_cast<double>(w[i]);  // Cin/groups x kernel
      const double out_elems = n.op_type() == "Conv" ? numel(y) : numel(x);
      o.flops = 2 * out_elems * per_out;
    } else if (n.op_type() == "Gemm" || n.op_type() == "MatMul") {
      o.flops = 2 * numel(y) * static_cast<double>(x.back());
    } else if (n.op_type() == "Constant") {
      o.flops = 0;
    } else {
      o.flops = numel(y) * (n.op_type() == "BatchNormalization" || n.op_type() == "LayerNormalization" ? 4 : 1);
    }
    o.backward_flops = o.flops * rule.backward_factor;
    o.grad_passthrough = rule.passthrough;
    if (rule.passthrough)
      for (int in : o.inputs)
        if (g.tensors[in].shape != y && g.tensors[in].requires_grad) o.grad_passthrough = false;  // broadcast
    switch (rule.what) {
      case saves::none:
        break;
      case saves::inputs:
        o.saved = o.inputs;
        break;
      case saves::output:
        o.saved = {o.outputs[0]};
        break;
      case saves::input0:
        o.saved = {o.inputs.at(0)};
        break;
      case saves::input0_output:
        o.saved = {o.inputs.at(0), o.outputs[0]};
        break;
      case saves::input0_1:
        o.saved = {o.inputs.at(0)};
        if (o.inputs.size() > 1) o.saved.push_back(o.inputs[1]);
        break;
    }
    g.add_op(std::move(o));
  }
  // Loss on the first output.
  const auto it = id.find(gp->output(0).name());
  if (it == id.end())
    throw error(errc::invalid_argument,
                fmt::format("onnx model '{}': output '{}' is not produced by any node", name, gp->output(0).name()));
  const int out = it->second;
  // Softmax cross-entropy over axis 1 against int32 labels: the output's shape without that axis.
  auto lshape = g.tensors[out].shape;
  if (lshape.size() >= 2) lshape.erase(lshape.begin() + 1);
  const int labels = g.add_tensor("labels", lshape, dtype::i32, tensor_kind::input);
  op loss;
  loss.name = "loss";
  loss.type = "loss";
  loss.inputs = {out, labels};
  loss.saved = {out, labels};
  loss.flops = 5 * numel(g.tensors[out].shape);
  loss.backward_flops = loss.flops;
  loss.outputs = {g.add_tensor("loss/out", {1}, g.tensors[out].type, tensor_kind::activation)};
  g.add_op(std::move(loss));
  return g;
}

graph import_onnx(const std::string& path, const onnx_options& options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw error(errc::io, fmt::format("onnx file '{}': expected a readable file, could not open it", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return import_onnx_bytes(ss.str(), path, options);
}

#else

bool onnx_available() noexcept { return false; }

graph import_onnx_bytes(const std::string&, const std::string& name, const onnx_options&) {
  throw error(errc::unsupported,
              fmt::format("onnx model '{}': toru was built without ONNX (TORU_ENABLE_ONNX=0); install libonnx-dev and "
                          "protobuf and reconfigure",
                          name));
}

graph import_onnx(const std::string& path, const onnx_options& options) { return import_onnx_bytes({}, path, options); }

#endif

}  // namespace toru::swap
