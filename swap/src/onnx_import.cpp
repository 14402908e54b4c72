// SPDX-License-Identifier: BSD-3-Clause
#include "toru/swap/onnx_import.hpp"

#include <algorithm>
#include <climits>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "toru/config.hpp"
#include "toru/core/error.hpp"

#if TORU_ENABLE_ONNX
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include "onnx_fold.hpp"
#include "onnx_wire.hpp"
#endif

namespace toru::swap {

namespace {

// How the gradient of each supported op type reads the forward tensors (PyTorch's autograd), and
// the builders' name for the op, so in-place rules and split weight gradients apply alike.
enum class saves { none, inputs, output, input0, input0_output, input0_1, crossed, divisor };
struct op_rule {
  const char* type;  // the builders' vocabulary (models.hpp)
  saves what;
  bool passthrough;  // gradient of every input is the output gradient (same-shape adds, views)
  double backward_factor;
};

const std::map<std::string, op_rule, std::less<>>& rules() {
  static const std::map<std::string, op_rule, std::less<>> r = {
      {"Conv", {"conv", saves::input0_1, false, 2}},
      {"ConvTranspose", {"conv_transpose", saves::input0_1, false, 2}},
      {"Gemm", {"linear", saves::input0_1, false, 2}},
      {"MatMul", {"matmul", saves::crossed, false, 2}},
      {"Relu", {"relu", saves::output, false, 2}},
      // In place (torchvision's ReLU6(inplace=True)) autograd keeps a copy of the input and the result.
      {"Clip", {"clip", saves::input0_output, false, 2}},
      {"Sigmoid", {"sigmoid", saves::output, false, 2}},
      {"Tanh", {"tanh", saves::output, false, 2}},
      {"LeakyRelu", {"leaky_relu", saves::input0, false, 2}},
      {"Gelu", {"gelu", saves::input0, false, 2}},
      {"Silu", {"silu", saves::input0, false, 2}},
      {"HardSwish", {"hardswish", saves::input0, false, 2}},
      {"HardSigmoid", {"hardsigmoid", saves::input0, false, 2}},
      {"Erf", {"erf", saves::input0, false, 2}},
      {"Softmax", {"softmax", saves::output, false, 2}},
      {"LogSoftmax", {"log_softmax", saves::output, false, 2}},
      {"BatchNormalization", {"batchnorm", saves::input0_1, false, 2}},
      {"LayerNormalization", {"layernorm", saves::input0_1, false, 2}},
      {"MaxPool", {"maxpool", saves::input0_output, false, 1}},
      {"AveragePool", {"avgpool", saves::none, false, 1}},
      {"GlobalAveragePool", {"avgpool", saves::none, false, 1}},
      {"Add", {"add", saves::none, true, 1}},
      {"Sum", {"add", saves::none, true, 1}},
      {"Sub", {"sub", saves::none, true, 1}},
      {"Mul", {"mul", saves::crossed, false, 2}},
      {"Div", {"div", saves::divisor, false, 2}},
      {"Pow", {"pow", saves::input0, false, 2}},
      {"Sqrt", {"sqrt", saves::output, false, 2}},
      {"Concat", {"concat", saves::none, false, 1}},
      {"Flatten", {"flatten", saves::none, false, 1}},
      {"Reshape", {"reshape", saves::none, true, 1}},
      {"Squeeze", {"reshape", saves::none, true, 1}},
      {"Unsqueeze", {"reshape", saves::none, true, 1}},
      {"Identity", {"reshape", saves::none, true, 1}},
      {"Cast", {"cast", saves::none, false, 1}},
      {"Transpose", {"transpose", saves::none, false, 1}},
      {"Gather", {"gather", saves::none, false, 1}},
      {"Slice", {"slice", saves::none, false, 1}},
      {"Expand", {"expand", saves::none, false, 1}},
      {"Where", {"where", saves::none, false, 1}},
      {"Dropout", {"dropout", saves::none, true, 1}},
      {"Resize", {"upsample", saves::none, false, 1}},
      {"Upsample", {"upsample", saves::none, false, 1}},
      {"Pad", {"pad", saves::none, false, 1}},
      {"ReduceMean", {"reduce_mean", saves::none, false, 1}},
      // Shape arithmetic, folded at import with the static input shape (onnx_fold.hpp).
      {"Constant", {"constant", saves::none, false, 0}},
      {"Shape", {"shape", saves::none, false, 0}},
      {"ConstantOfShape", {"constant_of_shape", saves::none, false, 0}},
      {"Equal", {"equal", saves::none, false, 0}},
      {"Range", {"range", saves::none, false, 0}},
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
  } else if (t == "Pad") {  // opset < 11: pads and value are attributes; later, inputs (folded, read by convert)
    if (const auto* m = find_attr(n, "mode")) {
      if (m->s() != "constant" && m->s() != "reflect" && m->s() != "edge")
        throw error(
            errc::unsupported,
            fmt::format("onnx node '{}': Pad mode '{}' is not supported (constant, reflect, edge)", o.name, m->s()));
      a.pad_mode = m->s();
    }
    const auto pads = ints(n, "pads");
    const auto half = static_cast<std::ptrdiff_t>(pads.size() / 2);
    a.pad_begin.assign(pads.begin(), pads.begin() + half);
    a.pad_end.assign(pads.begin() + half, pads.end());
    a.pad_value = float_or(n, "value", 0);
  } else if (t == "HardSigmoid") {
    a.scale = float_or(n, "alpha", 0.2);
    a.shift = float_or(n, "beta", 0.5);
  } else if (t == "Clip") {  // opset < 11: bounds are attributes; later, inputs (folded, read by convert)
    a.clip_min = float_or(n, "min", a.clip_min);
    a.clip_max = float_or(n, "max", a.clip_max);
  }
}

// Raw bytes of the large float initializers, cut out of the file's bytes before parsing
// (onnx_wire.hpp): the parsed model and its copies (one per batch tried, shape inference) hold no
// weights. Before, VGG-16's 528 MB were copied five times per import.
using weight_stash = std::map<std::string, std::string_view>;

// Values of a float (or integer) initializer, as floats; empty for other types.
std::vector<float> initial_values(const onnx::TensorProto& t, const weight_stash& stash) {
  std::vector<float> v;
  const bool raw = t.has_raw_data();
  const auto stashed = stash.find(t.name());
  switch (t.data_type()) {
    case onnx::TensorProto_DataType_FLOAT:
      if (stashed != stash.end()) {
        v.resize(stashed->second.size() / 4);
        std::memcpy(v.data(), stashed->second.data(), v.size() * 4);
      } else if (raw) {
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

namespace {

// The batch an import runs at: a prime no real extent is a multiple of, so that every extent
// divisible by it scales with the batch (rebatch(), graph.hpp) and one parse serves every batch.
constexpr std::int64_t probe_batch = 7919;

double known_scalar(const std::map<std::string, detail::constant>& known, const std::string& name, double def) {
  const auto it = known.find(name);
  return it == known.end() || it->second.v.empty() ? def : it->second.v[0];
}

// Attributes read from folded inputs and the input's rank: Transpose's perm, ReduceMean's axes,
// Slice's starts/steps and Gather's constant indices (normalised to non-negative), and arithmetic
// with one folded scalar operand, which becomes "scale" (y = scale * x + shift).
void set_data_attributes(const onnx::NodeProto& n, std::int64_t opset,
                         const std::map<std::string, detail::constant>& known, const graph& g, op& o) {
  if (o.inputs.empty()) return;
  const auto& t = n.op_type();
  const auto& x = g.tensors[o.inputs[0]].shape;
  const auto rank = static_cast<std::int64_t>(x.size());
  auto folded = [&](int k) -> const std::vector<double>* {
    if (n.input_size() <= k || n.input(k).empty()) return nullptr;
    const auto it = known.find(n.input(k));
    return it == known.end() ? nullptr : &it->second.v;
  };
  auto as_ints = [](const std::vector<double>& v) { return std::vector<std::int64_t>(v.begin(), v.end()); };
  auto axis_of = [&](std::int64_t a) { return a < 0 ? a + rank : a; };
  auto& a = o.attr;
  if (t == "Transpose") {
    a.perm = ints(n, "perm");
    if (a.perm.empty())
      for (std::int64_t i = rank; i-- > 0;) a.perm.push_back(i);
  } else if (t == "ReduceMean") {
    a.axes = ints(n, "axes");
    if (const auto* v = folded(1)) a.axes = as_ints(*v);  // opset 18: axes is an input
    if (a.axes.empty())
      for (std::int64_t i = 0; i < rank; ++i) a.axes.push_back(i);
    for (auto& e : a.axes) e = axis_of(e);
    std::sort(a.axes.begin(), a.axes.end());
  } else if (t == "Slice") {
    std::vector<std::int64_t> starts, axes, steps;
    if (opset < 10) {
      starts = ints(n, "starts");
      axes = ints(n, "axes");
    } else if (const auto* v = folded(1)) {
      starts = as_ints(*v);
      if (const auto* w = folded(3)) axes = as_ints(*w);
      if (const auto* w = folded(4)) steps = as_ints(*w);
    } else {
      return;  // bounds computed at run time: no attributes, the executor refuses it
    }
    if (axes.empty())
      for (std::size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<std::int64_t>(i));
    steps.resize(starts.size(), 1);
    for (std::size_t i = 0; i < starts.size() && i < axes.size(); ++i) {
      const auto ax = axis_of(axes[i]);
      if (ax < 0 || ax >= rank) continue;
      const auto dim = x[static_cast<std::size_t>(ax)];
      auto st = starts[i] < 0 ? starts[i] + dim : starts[i];
      st = std::clamp<std::int64_t>(st, 0, steps[i] > 0 ? dim : dim - 1);
      a.axes.push_back(ax);
      a.starts.push_back(st);
      a.steps.push_back(steps[i]);
    }
  } else if (t == "Gather") {
    a.axis = axis_of(int_or(n, "axis", 0));
    if (const auto* v = folded(1)) {
      const auto dim = a.axis >= 0 && a.axis < rank ? x[static_cast<std::size_t>(a.axis)] : 0;
      for (double e : *v) a.starts.push_back(e < 0 ? static_cast<std::int64_t>(e) + dim : static_cast<std::int64_t>(e));
    }
  } else if ((t == "Mul" || t == "Div" || t == "Add" || t == "Sub") && o.inputs.size() == 1 && n.input_size() == 2) {
    const int k = folded(1) ? 1 : 0;  // the folded operand
    const auto* v = folded(k);
    if (!v || v->size() != 1 || (t == "Div" && k == 0)) return;
    const double c = (*v)[0];
    o.type = "scale";
    if (t == "Mul") a.scale = c;
    if (t == "Div") a.scale = 1.0 / c;
    if (t == "Add") a.shift = c;
    if (t == "Sub") {
      a.scale = k == 1 ? 1 : -1;
      a.shift = k == 1 ? -c : c;
    }
  }
}

struct first_input {
  std::string name;
  std::int64_t fixed = 0;  // the file's batch when its leading extent is a number
};

// Converts a folded, fused model (shapes inferred at `batch`) into a forward graph with a loss.
graph convert(onnx::ModelProto& model, const std::map<std::string, detail::constant>& known, const std::string& name,
              bool values, const weight_stash& stash) {
  std::int64_t opset = 13;
  for (const auto& imp : model.opset_import())
    if (imp.domain().empty() || imp.domain() == "ai.onnx") opset = imp.version();
  const auto* gp = &model.graph();
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
    if (known.contains(t.name())) continue;  // folded: an attribute of the ops that read it
    std::vector<std::int64_t> s;
    for (int k = 0; k < t.dims_size(); ++k) s.push_back(t.dims(k));
    if (s.empty()) s.push_back(1);
    const bool trainable = !stats.contains(t.name()) && (t.data_type() == onnx::TensorProto_DataType_FLOAT ||
                                                         t.data_type() == onnx::TensorProto_DataType_FLOAT16 ||
                                                         t.data_type() == onnx::TensorProto_DataType_BFLOAT16);
    id[t.name()] = g.add_tensor(t.name(), s, from_onnx(t.data_type(), t.name()),
                                trainable ? tensor_kind::parameter : tensor_kind::input);
    if (values) g.tensors[id[t.name()]].init.values = initial_values(t, stash);
  }
  for (const auto& in : gp->input())
    if (!id.contains(in.name()) && !known.contains(in.name()))
      id[in.name()] = g.add_tensor(in.name(), shape_of(in), from_onnx(in.type().tensor_type().elem_type(), in.name()),
                                   tensor_kind::input);
  int counter = 0;
  std::map<std::string, int> uses;
  for (const auto& n : gp->node())
    for (const auto& x : n.input()) ++uses[x];
  for (const auto& n : gp->node()) {
    // weight.t() in PyTorch is a view of the parameter, not an activation: the transposed weight
    // becomes the parameter (read only by this Transpose, so nothing is counted twice).
    if (n.op_type() == "Transpose" && n.input_size() == 1 && id.contains(n.input(0)) && uses[n.input(0)] == 1 &&
        g.tensors[id[n.input(0)]].kind == tensor_kind::parameter && g.tensors[id[n.input(0)]].shape.size() == 2) {
      auto& w = g.tensors[id[n.input(0)]];
      std::swap(w.shape[0], w.shape[1]);
      const auto rows = w.shape[1], cols = w.shape[0];  // stored [rows, cols] before the swap
      if (!w.init.values.empty()) {
        std::vector<float> v(w.init.values.size());
        for (std::int64_t r = 0; r < rows; ++r)
          for (std::int64_t c = 0; c < cols; ++c)
            v[static_cast<std::size_t>(c * rows + r)] = w.init.values[static_cast<std::size_t>(r * cols + c)];
        w.init.values = std::move(v);
      }
      w.name = n.output(0);
      id[n.output(0)] = id[n.input(0)];
      continue;
    }
    // Dropout that drops nothing (ratio 0, or training_mode false) is its input, as in PyTorch.
    if (n.op_type() == "Dropout" && n.input_size() > 0 && id.contains(n.input(0)) &&
        ((n.input_size() > 1 && known_scalar(known, n.input(1), 0.5) == 0) ||
         (n.input_size() > 2 && known_scalar(known, n.input(2), 1) == 0) ||
         (n.input_size() == 1 && float_or(n, "ratio", 0.5) == 0))) {
      id[n.output(0)] = id[n.input(0)];
      continue;
    }
    const op_rule& rule = rules().at(n.op_type());
    op o;
    o.name = n.name().empty() ? fmt::format("{}_{}", n.op_type(), counter) : n.name();
    ++counter;
    o.type = rule.type;
    o.block = -1;
    fill_attributes(n, opset, o);
    if (n.op_type() == "Dropout" && n.input_size() > 1) o.attr.p = known_scalar(known, n.input(1), 0.5);
    if (n.op_type() == "Clip") {
      o.attr.clip_min = n.input_size() > 1 ? known_scalar(known, n.input(1), o.attr.clip_min) : o.attr.clip_min;
      o.attr.clip_max = n.input_size() > 2 ? known_scalar(known, n.input(2), o.attr.clip_max) : o.attr.clip_max;
    }
    if (n.op_type() == "Pad" && n.input_size() > 1) {
      const auto it = known.find(n.input(1));
      if (it == known.end())
        throw error(errc::unsupported,
                    fmt::format("onnx node '{}': Pad with pads computed at run time is not supported", o.name));
      if (n.input_size() > 3 && !n.input(3).empty())
        throw error(errc::unsupported, fmt::format("onnx node '{}': Pad over selected axes is not supported", o.name));
      const auto& v = it->second.v;
      const auto half = static_cast<std::ptrdiff_t>(v.size() / 2);
      o.attr.pad_begin.assign(v.begin(), v.begin() + half);
      o.attr.pad_end.assign(v.begin() + half, v.end());
      if (n.input_size() > 2 && !n.input(2).empty()) o.attr.pad_value = known_scalar(known, n.input(2), 0);
    }
    for (int k = 0; k < n.input_size(); ++k) {
      const auto& in = n.input(k);
      if (in.empty() || known.contains(in)) continue;  // folded inputs are attributes (shapes, ratios, bounds)
      const auto it = id.find(in);
      if (it == id.end())
        throw error(errc::invalid_argument,
                    fmt::format("onnx node '{}': input '{}' is not produced earlier (graph not topologically sorted?)",
                                o.name, in));
      o.inputs.push_back(it->second);
    }
    set_data_attributes(n, opset, known, g, o);
    if (n.op_type() == "MatMul" && o.inputs.size() == 2 && g.tensors[o.inputs[1]].kind == tensor_kind::parameter &&
        g.tensors[o.inputs[1]].shape.size() == 2)
      o.type = "linear";  // x @ W with a [in, out] weight (attr.trans_b = false)
    if (n.op_type() == "Sum" && o.inputs.size() != 2) o.type = "add_n";
    for (int k = 0; k < n.output_size(); ++k) {
      const auto& out = n.output(k);
      if (out.empty()) continue;
      if (k > 0 && (n.op_type() == "Dropout" || n.op_type() == "BatchNormalization")) continue;  // masks, running stats
      const auto it = info.find(out);
      if (it == info.end())
        throw error(errc::invalid_argument, fmt::format("onnx tensor '{}': shape inference gave no shape", out));
      const int t = g.add_tensor(out, shape_of(*it->second),
                                 from_onnx(it->second->type().tensor_type().elem_type(), out), tensor_kind::activation);
      id[out] = t;
      o.outputs.push_back(t);
    }
    if (o.outputs.empty()) continue;
    if (o.inputs.empty())
      throw error(errc::unsupported,
                  fmt::format("onnx node '{}' ({}): its inputs are neither known at import nor graph tensors; only "
                              "shape arithmetic on the static input shape can be folded",
                              o.name, n.op_type()));
    const auto& x = g.tensors[o.inputs[0]].shape;
    const auto& y = g.tensors[o.outputs[0]].shape;
    const auto& t = n.op_type();
    if (t == "Conv" || t == "ConvTranspose") {
      const auto& w = g.tensors[o.inputs.at(1)].shape;
      double per_out = 1;
      for (std::size_t i = 1; i < w.size(); ++i) per_out *= static_cast<double>(w[i]);  // Cin/groups x kernel
      const double out_elems = t == "Conv" ? numel(y) : numel(x);
      o.flops = 2 * out_elems * per_out;
    } else if (t == "Gemm" || t == "MatMul") {
      o.flops = 2 * numel(y) * static_cast<double>(x.back());
    } else if (t == "MaxPool" || t == "AveragePool") {
      // As the builders count: one op per window element and output; the gradient touches the input.
      o.flops = numel(y);
      for (auto k : o.attr.kernel) o.flops *= static_cast<double>(k);
    } else if (t == "GlobalAveragePool") {
      o.flops = numel(x);
    } else if (t == "Concat") {
      o.flops = 0;
    } else {
      double per = 1;
      if (t == "BatchNormalization") per = 4;
      if (t == "LayerNormalization") per = 5;
      if (t == "Gelu") per = 8;
      if (t == "Silu") per = 5;
      if (t == "Softmax") per = 5;
      o.flops = numel(y) * per;
    }
    o.backward_flops = o.flops * rule.backward_factor;
    if (t == "MaxPool" || t == "AveragePool" || t == "GlobalAveragePool") o.backward_flops = numel(x);
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
      case saves::crossed:
        // a * b saves each operand only when the other needs its gradient (PyTorch's autograd).
        if (o.inputs.size() == 2) {
          if (g.tensors[o.inputs[1]].requires_grad) o.saved.push_back(o.inputs[0]);
          if (g.tensors[o.inputs[0]].requires_grad) o.saved.push_back(o.inputs[1]);
        }
        break;
      case saves::divisor:
        // a / b: the gradients read b (both) and a (b's only); a folded constant b is no tensor.
        if (o.inputs.size() == 2) {
          o.saved = {o.inputs[1]};
          if (g.tensors[o.inputs[1]].requires_grad) o.saved.push_back(o.inputs[0]);
        }
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

// Sets the leading extent of every graph input to `batch` and drops the exporter's intermediate
// shapes (they were inferred at the exported batch). Returns the first input and its fixed batch.
first_input set_batch(onnx::ModelProto& model, std::int64_t batch) {
  auto* gp = model.mutable_graph();
  std::set<std::string> initializer_names;
  for (const auto& t : gp->initializer()) initializer_names.insert(t.name());
  first_input first;
  for (auto& in : *gp->mutable_input()) {
    if (initializer_names.contains(in.name())) continue;
    auto* shape = in.mutable_type()->mutable_tensor_type()->mutable_shape();
    if (shape->dim_size() == 0) continue;
    if (first.name.empty()) {
      first.name = in.name();
      if (shape->dim(0).has_dim_value()) first.fixed = shape->dim(0).dim_value();
    }
    shape->mutable_dim(0)->set_dim_value(batch);
  }
  gp->clear_value_info();
  for (auto& o : *gp->mutable_output()) o.mutable_type()->mutable_tensor_type()->clear_shape();
  return first;
}

}  // namespace

namespace {

graph import_view(std::string_view bytes, const std::string& name, const onnx_options& options) {
  if (options.batch <= 0)
    throw error(errc::invalid_argument, fmt::format("batch: expected a positive value, got {}", options.batch));
  onnx::ModelProto parsed;
  auto stripped = detail::strip_initializer_data(bytes);
  if (!(stripped ? parsed.ParseFromString(stripped->bytes)
                 : parsed.ParseFromArray(bytes.data(), static_cast<int>(std::min<std::size_t>(bytes.size(), INT_MAX)))))
    throw error(errc::invalid_argument,
                fmt::format("onnx model '{}': expected a serialized ModelProto, could not parse it", name));
  const weight_stash stash = stripped ? std::move(stripped->weights) : weight_stash{};
  stripped.reset();
  const auto* g0 = &parsed.graph();
  if (g0->node_size() == 0 || g0->output_size() == 0)
    throw error(errc::invalid_argument,
                fmt::format("onnx model '{}': expected nodes and an output, got an empty graph", name));
  {
    std::set<std::string> bad;
    for (const auto& n : g0->node())
      if (!rules().contains(n.op_type()) || !(n.domain().empty() || n.domain() == "ai.onnx")) bad.insert(n.op_type());
    if (!bad.empty())
      throw error(errc::unsupported, fmt::format("onnx model '{}': unsupported op types {}; supported: {}", name,
                                                 fmt::join(bad, ", "), fmt::join(onnx_supported_ops(), ", ")));
  }
  // At the probe batch first: the result then serves every batch (rebatch). A file whose batch is
  // baked into its shape arithmetic (a fixed-batch export with a literal Reshape) cannot be probed;
  // it imports at its own batch only.
  onnx::ModelProto model = parsed;
  const first_input first = set_batch(model, probe_batch);
  std::string why;
  try {
    auto known = detail::fold_constants(model, name);
    detail::fuse_decompositions(*model.mutable_graph(), known);
    graph g = convert(model, known, name, options.values, stash);
    // Every extent that is a multiple of the probe carries the batch; the logits must.
    bool logits_scale = false;
    for (auto& t : g.tensors) {
      if (t.kind == tensor_kind::parameter) continue;
      std::vector<std::int64_t> m(t.shape.size(), 0);
      bool any = false;
      for (std::size_t a = 0; a < t.shape.size(); ++a)
        if (t.shape[a] % probe_batch == 0) m[a] = t.shape[a] / probe_batch, any = true;
      if (any) t.batch_multiple = std::move(m);
    }
    const int loss = static_cast<int>(g.ops.size()) - 1;
    logits_scale = !g.tensors[g.ops[loss].inputs[0]].batch_multiple.empty();
    if (logits_scale) {
      g.batch = probe_batch;
      return rebatch(g, options.batch);
    }
    why = "its output does not scale with the input's leading extent";
  } catch (const error& e) {
    if (!first.fixed) throw;
    why = e.what();
  }
  if (first.fixed && first.fixed == options.batch) {
    onnx::ModelProto as_is = parsed;
    set_batch(as_is, first.fixed);
    auto known = detail::fold_constants(as_is, name);
    detail::fuse_decompositions(*as_is.mutable_graph(), known);
    return convert(as_is, known, name, options.values, stash);
  }
  if (first.fixed)
    throw error(
        errc::invalid_argument,
        fmt::format("onnx model '{}': input '{}' has a fixed batch of {} that the graph's shapes depend on ({}), "
                    "so it cannot be rebatched to {}; use --batch {} or re-export with a dynamic batch axis "
                    "(torch.onnx.export(..., dynamic_axes={{'{}': {{0: 'batch'}}}}))",
                    name, first.name, first.fixed, why, options.batch, first.fixed, first.name));
  throw error(errc::invalid_argument,
              fmt::format("onnx model '{}': the first input's leading extent is not a batch axis ({})", name, why));
}

}  // namespace

graph import_onnx_bytes(const std::string& bytes, const std::string& name, const onnx_options& options) {
  return import_view(bytes, name, options);
}

graph import_onnx(const std::string& path, const onnx_options& options) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw error(errc::io, fmt::format("onnx file '{}': expected a file, got a directory", path));
  const detail::mapped_file file(path);
  return import_view(file.view(), path, options);
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
