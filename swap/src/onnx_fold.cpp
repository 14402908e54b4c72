// SPDX-License-Identifier: BSD-3-Clause
#include "onnx_fold.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <set>

#include <fmt/format.h>

#include <onnx/shape_inference/implementation.h>

#include "toru/core/error.hpp"

namespace toru::swap::detail {

namespace {

// Larger values are left to the graph (they would be activations, not shape arithmetic).
constexpr std::size_t max_folded_elements = 1 << 16;

std::int64_t count(const std::vector<std::int64_t>& dims) {
  std::int64_t n = 1;
  for (auto d : dims) n *= d;
  return n;
}

bool is_float(int t) {
  return t == onnx::TensorProto_DataType_FLOAT || t == onnx::TensorProto_DataType_DOUBLE ||
         t == onnx::TensorProto_DataType_FLOAT16 || t == onnx::TensorProto_DataType_BFLOAT16;
}

bool from_tensor(const onnx::TensorProto& t, constant& c) {
  c.dims.assign(t.dims().begin(), t.dims().end());
  c.type = t.data_type();
  const auto n = static_cast<std::size_t>(count(c.dims));
  if (n > max_folded_elements) return false;
  const bool raw = t.has_raw_data();
  const auto& r = t.raw_data();
  c.v.clear();
  auto take = [&](auto sample, const auto& field) {
    using T = decltype(sample);
    if (raw) {
      if (r.size() < n * sizeof(T)) return false;
      for (std::size_t i = 0; i < n; ++i) {
        T x;
        std::memcpy(&x, r.data() + i * sizeof(T), sizeof(T));
        c.v.push_back(static_cast<double>(x));
      }
    } else {
      for (auto x : field) c.v.push_back(static_cast<double>(x));
    }
    return c.v.size() == n;
  };
  switch (t.data_type()) {
    case onnx::TensorProto_DataType_FLOAT:
      return take(float{}, t.float_data());
    case onnx::TensorProto_DataType_DOUBLE:
      return take(double{}, t.double_data());
    case onnx::TensorProto_DataType_INT64:
      return take(std::int64_t{}, t.int64_data());
    case onnx::TensorProto_DataType_INT32:
      return take(std::int32_t{}, t.int32_data());
    case onnx::TensorProto_DataType_BOOL:
      return take(std::uint8_t{}, t.int32_data());
    default:
      return false;
  }
}

onnx::TensorProto to_tensor(const std::string& name, const constant& c) {
  onnx::TensorProto t;
  t.set_name(name);
  for (auto d : c.dims) t.add_dims(d);
  if (is_float(c.type)) {
    t.set_data_type(onnx::TensorProto_DataType_FLOAT);
    for (double x : c.v) t.add_float_data(static_cast<float>(x));
  } else if (c.type == onnx::TensorProto_DataType_BOOL) {
    t.set_data_type(onnx::TensorProto_DataType_BOOL);
    for (double x : c.v) t.add_int32_data(x != 0);
  } else {
    t.set_data_type(onnx::TensorProto_DataType_INT64);
    for (double x : c.v) t.add_int64_data(static_cast<std::int64_t>(x));
  }
  return t;
}

const onnx::AttributeProto* attr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

std::int64_t norm_axis(std::int64_t a, std::size_t rank) { return a < 0 ? a + static_cast<std::int64_t>(rank) : a; }

std::vector<std::int64_t> strides(const std::vector<std::int64_t>& dims) {
  std::vector<std::int64_t> s(dims.size(), 1);
  for (std::size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * dims[i];
  return s;
}

// Numpy broadcasting of any number of operands.
bool broadcast(const std::vector<const constant*>& in, constant& out, const std::function<double(const double*)>& f) {
  std::size_t rank = 0;
  for (const auto* c : in) rank = std::max(rank, c->dims.size());
  std::vector<std::int64_t> dims(rank, 1);
  for (const auto* c : in)
    for (std::size_t i = 0; i < c->dims.size(); ++i) {
      auto& d = dims[rank - c->dims.size() + i];
      const auto e = c->dims[i];
      if (d == 1)
        d = e;
      else if (e != 1 && e != d)
        return false;
    }
  if (static_cast<std::size_t>(count(dims)) > max_folded_elements) return false;
  out.dims = dims;
  const auto n = count(dims);
  const auto os = strides(dims);
  out.v.assign(static_cast<std::size_t>(n), 0);
  std::vector<double> args(in.size());
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::size_t k = 0; k < in.size(); ++k) {
      const auto& c = *in[k];
      const auto off = rank - c.dims.size();
      std::int64_t idx = 0, stride = 1;
      for (std::size_t a = c.dims.size(); a-- > 0;) {
        const auto coord = (i / os[a + off]) % dims[a + off];
        idx += (c.dims[a] == 1 ? 0 : coord) * stride;
        stride *= c.dims[a];
      }
      args[k] = c.v[static_cast<std::size_t>(idx)];
    }
    out.v[static_cast<std::size_t>(i)] = f(args.data());
  }
  return true;
}

std::vector<std::int64_t> as_ints(const constant& c) {
  std::vector<std::int64_t> r;
  for (double x : c.v) r.push_back(static_cast<std::int64_t>(x));
  return r;
}

// Evaluates one node over known inputs; false when it cannot (unknown op, too large).
bool evaluate(const onnx::NodeProto& n, const std::vector<const constant*>& in, const std::vector<std::int64_t>* shape,
              std::int64_t opset, constant& out) {
  const auto& t = n.op_type();
  auto integer = [](int type) { return !is_float(type); };
  if (t == "Constant") {
    if (const auto* a = attr(n, "value")) return from_tensor(a->t(), out);
    if (const auto* a = attr(n, "value_int")) return out.v = {static_cast<double>(a->i())}, out.dims = {}, true;
    if (const auto* a = attr(n, "value_ints")) {
      for (auto x : a->ints()) out.v.push_back(static_cast<double>(x));
      out.dims = {static_cast<std::int64_t>(out.v.size())};
      return true;
    }
    if (const auto* a = attr(n, "value_float"))
      return out.type = onnx::TensorProto_DataType_FLOAT, out.v = {a->f()}, out.dims = {}, true;
    return false;
  }
  if (t == "Shape") {
    if (!shape) return false;
    out.dims = {static_cast<std::int64_t>(shape->size())};
    for (auto d : *shape) out.v.push_back(static_cast<double>(d));
    return true;
  }
  if (in.empty() || std::any_of(in.begin(), in.end(), [](const constant* c) { return c == nullptr; })) return false;
  const constant& x = *in[0];
  out.type = x.type;
  if (t == "Identity") return out = x, true;
  if (t == "Cast") {
    out = x;
    out.type = static_cast<int>(attr(n, "to") ? attr(n, "to")->i() : x.type);
    if (!is_float(out.type))
      for (auto& v : out.v) v = std::trunc(v);
    return true;
  }
  if (t == "Add" || t == "Sub" || t == "Mul" || t == "Div" || t == "Pow" || t == "Equal") {
    if (in.size() != 2) return false;
    const bool ints = integer(x.type) && integer(in[1]->type);
    if (t == "Equal") out.type = onnx::TensorProto_DataType_BOOL;
    return broadcast(in, out, [&](const double* a) {
      if (t == "Add") return a[0] + a[1];
      if (t == "Sub") return a[0] - a[1];
      if (t == "Mul") return a[0] * a[1];
      if (t == "Div") return ints ? std::trunc(a[0] / a[1]) : a[0] / a[1];
      if (t == "Pow") return std::pow(a[0], a[1]);
      return a[0] == a[1] ? 1.0 : 0.0;
    });
  }
  if (t == "Sqrt") return broadcast(in, out, [](const double* a) { return std::sqrt(a[0]); });
  if (t == "Where") {
    if (in.size() != 3) return false;
    out.type = in[1]->type;
    return broadcast(in, out, [](const double* a) { return a[0] != 0 ? a[1] : a[2]; });
  }
  if (t == "ConstantOfShape") {
    out.dims = as_ints(x);
    if (count(out.dims) < 0 || static_cast<std::size_t>(count(out.dims)) > max_folded_elements) return false;
    constant value{{}, {0.0}, onnx::TensorProto_DataType_FLOAT};
    if (const auto* a = attr(n, "value")) from_tensor(a->t(), value);
    out.type = value.type;
    out.v.assign(static_cast<std::size_t>(count(out.dims)), value.v.empty() ? 0.0 : value.v[0]);
    return true;
  }
  if (t == "Expand") {
    if (in.size() != 2) return false;
    constant ones{as_ints(*in[1]), {}, x.type};
    if (count(ones.dims) < 0 || static_cast<std::size_t>(count(ones.dims)) > max_folded_elements) return false;
    ones.v.assign(static_cast<std::size_t>(count(ones.dims)), 0.0);
    return broadcast({&x, &ones}, out, [](const double* a) { return a[0]; });
  }
  if (t == "Range") {
    if (in.size() != 3 || in[2]->v.empty() || in[2]->v[0] == 0) return false;
    for (double v = x.v.at(0); in[2]->v[0] > 0 ? v < in[1]->v.at(0) : v > in[1]->v.at(0); v += in[2]->v[0]) {
      out.v.push_back(v);
      if (out.v.size() > max_folded_elements) return false;
    }
    out.dims = {static_cast<std::int64_t>(out.v.size())};
    return true;
  }
  if (t == "Reshape") {
    if (in.size() != 2) return false;
    auto dims = as_ints(*in[1]);
    std::int64_t known = 1;
    int infer = -1;
    for (std::size_t i = 0; i < dims.size(); ++i) {
      if (dims[i] == 0 && i < x.dims.size()) dims[i] = x.dims[i];
      if (dims[i] == -1)
        infer = static_cast<int>(i);
      else
        known *= dims[i];
    }
    if (infer >= 0) dims[static_cast<std::size_t>(infer)] = known ? count(x.dims) / known : 0;
    if (count(dims) != count(x.dims)) return false;
    out = x;
    out.dims = dims;
    return true;
  }
  if (t == "Unsqueeze" || t == "Squeeze") {
    std::vector<std::int64_t> axes;
    if (in.size() > 1)
      axes = as_ints(*in[1]);
    else if (const auto* a = attr(n, "axes"))
      axes.assign(a->ints().begin(), a->ints().end());
    out = x;
    if (t == "Unsqueeze") {
      const auto rank = x.dims.size() + axes.size();
      for (auto& a : axes) a = norm_axis(a, rank);
      std::sort(axes.begin(), axes.end());
      for (auto a : axes) out.dims.insert(out.dims.begin() + a, 1);
    } else {
      for (auto& a : axes) a = norm_axis(a, x.dims.size());
      std::vector<std::int64_t> d;
      for (std::size_t i = 0; i < x.dims.size(); ++i) {
        const bool drop = axes.empty()
                              ? x.dims[i] == 1
                              : std::find(axes.begin(), axes.end(), static_cast<std::int64_t>(i)) != axes.end();
        if (!drop) d.push_back(x.dims[i]);
      }
      out.dims = d;
    }
    return true;
  }
  if (t == "Concat") {
    const auto axis = norm_axis(attr(n, "axis") ? attr(n, "axis")->i() : 0, x.dims.size());
    out.dims = x.dims;
    out.dims[static_cast<std::size_t>(axis)] = 0;
    for (const auto* c : in) {
      if (c->dims.size() != x.dims.size()) return false;
      out.dims[static_cast<std::size_t>(axis)] += c->dims[static_cast<std::size_t>(axis)];
    }
    // Outer blocks (axes before `axis`) interleave the operands' inner blocks.
    std::int64_t outer = 1;
    for (std::int64_t a = 0; a < axis; ++a) outer *= x.dims[static_cast<std::size_t>(a)];
    for (std::int64_t o = 0; o < outer; ++o)
      for (const auto* c : in) {
        const auto inner = count(c->dims) / std::max<std::int64_t>(outer, 1);
        for (std::int64_t k = 0; k < inner; ++k) out.v.push_back(c->v[static_cast<std::size_t>(o * inner + k)]);
      }
    return true;
  }
  if (t == "Gather") {
    if (in.size() != 2) return false;
    const auto axis = norm_axis(attr(n, "axis") ? attr(n, "axis")->i() : 0, x.dims.size());
    const auto& idx = *in[1];
    out.dims.assign(x.dims.begin(), x.dims.begin() + axis);
    out.dims.insert(out.dims.end(), idx.dims.begin(), idx.dims.end());
    out.dims.insert(out.dims.end(), x.dims.begin() + axis + 1, x.dims.end());
    std::int64_t outer = 1, inner = 1;
    for (std::int64_t a = 0; a < axis; ++a) outer *= x.dims[static_cast<std::size_t>(a)];
    for (std::size_t a = static_cast<std::size_t>(axis) + 1; a < x.dims.size(); ++a) inner *= x.dims[a];
    const auto ext = x.dims[static_cast<std::size_t>(axis)];
    for (std::int64_t o = 0; o < outer; ++o)
      for (double iv : idx.v) {
        auto i = static_cast<std::int64_t>(iv);
        if (i < 0) i += ext;
        if (i < 0 || i >= ext) return false;
        for (std::int64_t k = 0; k < inner; ++k)
          out.v.push_back(x.v[static_cast<std::size_t>((o * ext + i) * inner + k)]);
      }
    return true;
  }
  if (t == "Transpose") {  // F.pad's exporter transposes its [axes, 2] pad table
    const auto rank = x.dims.size();
    std::vector<std::int64_t> perm;
    if (const auto* a = attr(n, "perm")) perm.assign(a->ints().begin(), a->ints().end());
    if (perm.empty())
      for (std::size_t i = rank; i-- > 0;) perm.push_back(static_cast<std::int64_t>(i));
    if (perm.size() != rank) return false;
    out.dims.resize(rank);
    for (std::size_t i = 0; i < rank; ++i) {
      if (perm[i] < 0 || perm[i] >= static_cast<std::int64_t>(rank)) return false;
      out.dims[i] = x.dims[static_cast<std::size_t>(perm[i])];
    }
    const auto os = strides(out.dims), xs = strides(x.dims);
    for (std::int64_t i = 0; i < count(out.dims); ++i) {
      std::int64_t src = 0;
      for (std::size_t a = 0; a < rank; ++a) src += ((i / os[a]) % out.dims[a]) * xs[static_cast<std::size_t>(perm[a])];
      out.v.push_back(x.v[static_cast<std::size_t>(src)]);
    }
    return true;
  }
  if (t == "Slice") {
    if (opset < 10 || in.size() < 3) return false;
    const auto starts = as_ints(*in[1]), ends = as_ints(*in[2]);
    std::vector<std::int64_t> axes, steps(starts.size(), 1);
    if (in.size() > 3)
      axes = as_ints(*in[3]);
    else
      for (std::size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<std::int64_t>(i));
    if (in.size() > 4) steps = as_ints(*in[4]);
    const auto rank = x.dims.size();
    std::vector<std::int64_t> lo(rank, 0), step(rank, 1);
    out.dims = x.dims;
    for (std::size_t i = 0; i < starts.size(); ++i) {
      const auto a = static_cast<std::size_t>(norm_axis(axes.at(i), rank));
      const auto e = x.dims[a];
      const auto st = steps.at(i);
      if (st == 0) return false;
      auto b = starts[i] < 0 ? starts[i] + e : starts[i];
      auto f = ends[i] < 0 ? ends[i] + e : ends[i];
      if (st > 0) {
        b = std::clamp<std::int64_t>(b, 0, e);
        f = std::clamp<std::int64_t>(f, 0, e);
        out.dims[a] = f > b ? (f - b + st - 1) / st : 0;
      } else {  // reversed (F.pad's exporter flips its pads with [::-1]): end -1 means "through index 0"
        b = std::clamp<std::int64_t>(b, 0, e - 1);
        f = std::clamp<std::int64_t>(f, -1, e - 1);
        out.dims[a] = b > f ? (b - f - st - 1) / -st : 0;
      }
      lo[a] = b;
      step[a] = st;
    }
    const auto os = strides(out.dims), xs = strides(x.dims);
    for (std::int64_t i = 0; i < count(out.dims); ++i) {
      std::int64_t src = 0;
      for (std::size_t a = 0; a < rank; ++a) src += (lo[a] + ((i / os[a]) % out.dims[a]) * step[a]) * xs[a];
      out.v.push_back(x.v[static_cast<std::size_t>(src)]);
    }
    return true;
  }
  return false;
}

std::map<std::string, std::vector<std::int64_t>> static_shapes(const onnx::GraphProto& g) {
  std::map<std::string, std::vector<std::int64_t>> s;
  auto add = [&](const onnx::ValueInfoProto& v) {
    if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape()) return;
    std::vector<std::int64_t> d;
    for (const auto& e : v.type().tensor_type().shape().dim()) {
      if (!e.has_dim_value()) return;
      d.push_back(e.dim_value());
    }
    s[v.name()] = d;
  };
  for (const auto& v : g.input()) add(v);
  for (const auto& v : g.value_info()) add(v);
  for (const auto& v : g.output()) add(v);
  return s;
}

}  // namespace

std::map<std::string, constant> fold_constants(onnx::ModelProto& model, const std::string& name) {
  std::int64_t opset = 13;
  for (const auto& imp : model.opset_import())
    if (imp.domain().empty() || imp.domain() == "ai.onnx") opset = imp.version();
  auto* g = model.mutable_graph();
  std::map<std::string, constant> known;
  std::set<std::string> bn_stats;
  for (const auto& n : g->node())
    if (n.op_type() == "BatchNormalization")
      for (int i = 3; i < n.input_size(); ++i) bn_stats.insert(n.input(i));
  for (const auto& t : g->initializer()) {
    if (is_float(t.data_type())) continue;  // trainable parameters (or statistics) stay graph tensors
    constant c;
    if (from_tensor(t, c)) known[t.name()] = std::move(c);
  }
  for (int round = 0;; ++round) {
    try {
      onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(),
                                         onnx::ShapeInferenceOptions(false, 1));
    } catch (const std::exception& e) {
      throw error(errc::invalid_argument, fmt::format("onnx model '{}': shape inference failed: {}", name, e.what()));
    }
    const auto shapes = static_shapes(*g);
    std::set<int> folded;
    for (int i = 0; i < g->node_size(); ++i) {
      const auto& n = g->node(i);
      if (n.output_size() != 1 || n.output(0).empty()) continue;
      std::vector<const constant*> in;
      for (const auto& x : n.input()) {
        const auto it = known.find(x);
        in.push_back(x.empty() || it == known.end() ? nullptr : &it->second);
      }
      const std::vector<std::int64_t>* shape = nullptr;
      if (n.op_type() == "Shape" && n.input_size() == 1) {
        const auto it = shapes.find(n.input(0));
        if (it == shapes.end()) continue;
        shape = &it->second;
      }
      constant c;
      if (!evaluate(n, in, shape, opset, c)) continue;
      if (is_float(c.type) && n.op_type() != "Constant" &&
          std::any_of(n.input().begin(), n.input().end(), [&](const std::string& x) { return bn_stats.contains(x); }))
        continue;
      known[n.output(0)] = std::move(c);
      folded.insert(i);
    }
    if (folded.empty()) break;
    google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
    for (int i = 0; i < g->node_size(); ++i)
      if (!folded.contains(i))
        *kept.Add() = g->node(i);
      else
        *g->add_initializer() = to_tensor(g->node(i).output(0), known.at(g->node(i).output(0)));
    g->mutable_node()->Swap(&kept);
    if (round > 1000) break;  // a chain of shape arithmetic longer than any real export
  }
  return known;
}

namespace {

// Node consuming `value` when it is the only one; nullptr otherwise.
struct consumers_map {
  std::map<std::string, std::vector<int>> of;
  explicit consumers_map(const onnx::GraphProto& g) {
    for (int i = 0; i < g.node_size(); ++i)
      for (const auto& x : g.node(i).input()) of[x].push_back(i);
  }
  std::vector<int> at(const std::string& v) const {
    const auto it = of.find(v);
    return it == of.end() ? std::vector<int>{} : it->second;
  }
};

bool scalar_is(const std::map<std::string, constant>& known, const std::string& name, double value, double tol) {
  const auto it = known.find(name);
  return it != known.end() && it->second.v.size() == 1 && std::abs(it->second.v[0] - value) <= tol;
}

}  // namespace

void fuse_decompositions(onnx::GraphProto& g, const std::map<std::string, constant>& known) {
  const consumers_map uses(g);
  std::map<int, onnx::NodeProto> replace;  // first node of a chain -> the fused node
  std::set<int> drop;
  auto only = [&](const std::string& v, const char* type) -> int {
    const auto c = uses.at(v);
    if (c.size() != 1 || g.node(c[0]).op_type() != type) return -1;
    return c[0];
  };
  auto other_input = [&](const onnx::NodeProto& n, const std::string& v) {
    return n.input(0) == v ? n.input(1) : n.input(0);
  };
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& n = g.node(i);
    if (drop.contains(i)) continue;
    if (n.op_type() == "ReduceMean" && n.input_size() == 1) {
      // mean -> Sub(x, mean) -> {Pow(d, 2) -> ReduceMean -> Add(eps) -> Sqrt, Div(d, sqrt)} -> Mul(g) -> Add(b)
      const std::string& x = n.input(0);
      const int sub = only(n.output(0), "Sub");
      if (sub < 0 || g.node(sub).input(0) != x) continue;
      const auto d = g.node(sub).output(0);
      const auto du = uses.at(d);
      if (du.size() != 2) continue;
      int pow = -1, div = -1;
      for (int k : du) {
        if (g.node(k).op_type() == "Pow") pow = k;
        if (g.node(k).op_type() == "Div") div = k;
      }
      if (pow < 0 || div < 0 || !scalar_is(known, g.node(pow).input(1), 2, 0)) continue;
      const int var = only(g.node(pow).output(0), "ReduceMean");
      if (var < 0) continue;
      const int add = only(g.node(var).output(0), "Add");
      if (add < 0) continue;
      const auto eps_name = other_input(g.node(add), g.node(var).output(0));
      const auto eps = known.find(eps_name);
      if (eps == known.end() || eps->second.v.size() != 1) continue;
      const int sq = only(g.node(add).output(0), "Sqrt");
      if (sq < 0 || g.node(div).input(0) != d || g.node(div).input(1) != g.node(sq).output(0)) continue;
      const int mul = only(g.node(div).output(0), "Mul");
      if (mul < 0) continue;
      const int badd = only(g.node(mul).output(0), "Add");
      if (badd < 0) continue;
      onnx::NodeProto ln;
      ln.set_op_type("LayerNormalization");
      ln.set_name(n.name().empty() ? "LayerNorm_" + g.node(badd).output(0) : n.name());
      ln.add_input(x);
      ln.add_input(other_input(g.node(mul), g.node(div).output(0)));
      ln.add_input(other_input(g.node(badd), g.node(mul).output(0)));
      ln.add_output(g.node(badd).output(0));
      auto* a = ln.add_attribute();
      a->set_name("epsilon");
      a->set_type(onnx::AttributeProto_AttributeType_FLOAT);
      a->set_f(static_cast<float>(eps->second.v[0]));
      replace[i] = ln;
      for (int k : {sub, pow, var, add, sq, div, mul, badd}) drop.insert(k);
    } else if (n.op_type() == "Sigmoid") {
      // x * sigmoid(x): SiLU (EfficientNet), whose gradient PyTorch computes from x alone.
      const std::string& x = n.input(0);
      const int mul = only(n.output(0), "Mul");
      if (mul < 0 || other_input(g.node(mul), n.output(0)) != x) continue;
      onnx::NodeProto silu;
      silu.set_op_type("Silu");
      silu.set_name("Silu_" + g.node(mul).output(0));
      silu.add_input(x);
      silu.add_output(g.node(mul).output(0));
      replace[i] = silu;
      drop.insert(mul);
    } else if (n.op_type() == "Div" && n.input_size() == 2 && scalar_is(known, n.input(1), std::sqrt(2.0), 1e-3)) {
      // x / sqrt(2) -> Erf -> Add(1) -> Mul(x, .) -> Mul(., 0.5)
      const std::string& x = n.input(0);
      const int erf = only(n.output(0), "Erf");
      if (erf < 0) continue;
      const int add = only(g.node(erf).output(0), "Add");
      if (add < 0 || !scalar_is(known, other_input(g.node(add), g.node(erf).output(0)), 1, 1e-6)) continue;
      const int mul = only(g.node(add).output(0), "Mul");
      if (mul < 0 || other_input(g.node(mul), g.node(add).output(0)) != x) continue;
      const int half = only(g.node(mul).output(0), "Mul");
      if (half < 0 || !scalar_is(known, other_input(g.node(half), g.node(mul).output(0)), 0.5, 1e-6)) continue;
      onnx::NodeProto gelu;
      gelu.set_op_type("Gelu");
      gelu.set_name("Gelu_" + g.node(half).output(0));
      gelu.add_input(x);
      gelu.add_output(g.node(half).output(0));
      replace[i] = gelu;
      for (int k : {erf, add, mul, half}) drop.insert(k);
    }
  }
  if (replace.empty()) return;
  google::protobuf::RepeatedPtrField<onnx::NodeProto> out;
  // The fused node takes the place of the chain's last node, where all its inputs exist.
  std::map<int, int> at_end;
  for (const auto& [first, fused] : replace) {
    int last = first;
    for (int k = first; k < g.node_size(); ++k)
      for (const auto& o : g.node(k).output())
        if (o == fused.output(0)) last = k;
    at_end[last] = first;
  }
  for (int i = 0; i < g.node_size(); ++i) {
    if (const auto it = at_end.find(i); it != at_end.end()) {
      *out.Add() = replace.at(it->second);
      continue;
    }
    if (replace.contains(i) || drop.contains(i)) continue;
    *out.Add() = g.node(i);
  }
  g.mutable_node()->Swap(&out);
}

}  // namespace toru::swap::detail
