// SPDX-License-Identifier: BSD-3-Clause
#include "toru/swap/builder.hpp"

#include <cmath>
#include <utility>

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "toru/core/error.hpp"

namespace toru::swap {

std::int64_t numel(const shape_t& s) {
  std::int64_t n = 1;
  for (auto e : s) n *= e;
  return n;
}

builder::builder(std::string name, dtype t) : type(t) { g.name = std::move(name); }

int builder::input(const std::string& name, shape_t shape) {
  return g.add_tensor(name, std::move(shape), type, tensor_kind::input);
}

int builder::param(const std::string& name, shape_t shape) {
  return g.add_tensor(name, std::move(shape), type, tensor_kind::parameter);
}

int builder::emit(op o, std::vector<std::pair<std::string, shape_t>> outs, std::vector<int> save_outputs) {
  o.cat = category::forward;
  o.block = block_;
  for (auto& [n, s] : outs) o.outputs.push_back(g.add_tensor(n, std::move(s), type, tensor_kind::activation));
  for (int i : save_outputs) o.saved.push_back(o.outputs[i]);
  const int first = o.outputs.front();
  g.add_op(std::move(o));
  return first;
}

namespace {
std::int64_t out_extent(std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t p, std::int64_t d, bool ceil_mode,
                        const std::string& who) {
  const std::int64_t span = d * (k - 1) + 1;
  const std::int64_t room = in + 2 * p - span;
  if (room < 0)
    throw error(errc::invalid_argument,
                fmt::format("{}: input extent {} is smaller than the window {} (padding {}); use a larger input", who,
                            in, span, p));
  std::int64_t out = (ceil_mode ? (room + s - 1) / s : room / s) + 1;
  // PyTorch: the last pooling window must start inside the input or left padding.
  if (ceil_mode && (out - 1) * s >= in + p) --out;
  return out;
}
}  // namespace

int builder::conv(int x, std::int64_t cout, std::vector<std::int64_t> k, std::vector<std::int64_t> s,
                  std::vector<std::int64_t> p, std::vector<std::int64_t> d, bool bias, std::int64_t groups,
                  const std::string& name) {
  const shape_t in = shape(x);
  const std::size_t nd = in.size() - 2;
  auto widen = [nd](std::vector<std::int64_t>& v, std::int64_t def) {
    if (v.empty()) v.push_back(def);
    if (v.size() == 1) v.resize(nd, v[0]);
  };
  widen(k, 1);
  widen(s, 1);
  widen(p, 0);
  widen(d, 1);
  const std::string n = name.empty() ? fmt::format("conv{}", ++counter_) : name;
  shape_t out{in[0], cout};
  std::int64_t kvol = 1;
  for (std::size_t i = 0; i < nd; ++i) {
    out.push_back(out_extent(in[2 + i], k[i], s[i], p[i], d[i], false, n));
    kvol *= k[i];
  }
  shape_t wshape{cout, in[1] / groups};
  wshape.insert(wshape.end(), k.begin(), k.end());
  op o;
  o.name = n;
  o.type = "conv";
  o.attr.kernel = k;
  o.attr.stride = s;
  o.attr.pad_begin = p;
  o.attr.pad_end = p;
  o.attr.dilation = d;
  o.attr.groups = groups;
  o.attr.has_bias = bias;
  const double bound = 1.0 / std::sqrt(static_cast<double>(in[1] / groups * kvol));
  const int w = param(n + "/weight", wshape);
  g.tensors[w].init = {init_kind::uniform, bound, {}};
  o.inputs = {x, w};
  if (bias) {
    o.inputs.push_back(param(n + "/bias", {cout}));
    g.tensors[o.inputs.back()].init = {init_kind::uniform, bound, {}};
  }
  const double macs = static_cast<double>(numel(out)) * static_cast<double>(in[1] / groups * kvol);
  o.flops = 2 * macs;
  o.backward_flops = 2 * o.flops;
  o.saved = {x, w};
  return emit(std::move(o), {{n + "/out", out}});
}

int builder::batchnorm(int x, const std::string& name) {
  const std::string n = name.empty() ? fmt::format("bn{}", ++counter_) : name;
  op o;
  o.name = n;
  o.type = "batchnorm";
  const int w = param(n + "/weight", {shape(x)[1]});
  const int b = param(n + "/bias", {shape(x)[1]});
  g.tensors[w].init.kind = init_kind::ones;
  g.tensors[b].init.kind = init_kind::zeros;
  o.inputs = {x, w, b};
  const double e = static_cast<double>(numel(shape(x)));
  o.flops = 4 * e;
  o.backward_flops = 8 * e;
  o.saved = {x, w};
  return emit(std::move(o), {{n + "/out", shape(x)}});
}

int builder::elementwise(int x, const std::string& kind, bool save_input, bool save_output, double fpe) {
  const std::string n = fmt::format("{}{}", kind, ++counter_);
  op o;
  o.name = n;
  o.type = kind;
  o.inputs = {x};
  const double e = static_cast<double>(numel(shape(x)));
  o.flops = fpe * e;
  o.backward_flops = 2 * fpe * e;
  if (save_input) o.saved.push_back(x);
  std::vector<int> so;
  if (save_output) so.push_back(0);
  return emit(std::move(o), {{n + "/out", shape(x)}}, so);
}

int builder::relu(int x, const std::string&) { return elementwise(x, "relu", false, true, 1); }
int builder::sigmoid(int x) { return elementwise(x, "sigmoid", false, true, 4); }
int builder::gelu(int x) { return elementwise(x, "gelu", true, false, 8); }
int builder::softmax(int x) { return elementwise(x, "softmax", false, true, 5); }

int builder::layernorm(int x) {
  const std::string n = fmt::format("ln{}", ++counter_);
  op o;
  o.name = n;
  o.type = "layernorm";
  o.attr.axis = -1;
  const int w = param(n + "/weight", {shape(x).back()});
  const int b = param(n + "/bias", {shape(x).back()});
  g.tensors[w].init.kind = init_kind::ones;
  g.tensors[b].init.kind = init_kind::zeros;
  o.inputs = {x, w, b};
  const double e = static_cast<double>(numel(shape(x)));
  o.flops = 5 * e;
  o.backward_flops = 10 * e;
  o.saved = {x, w};
  return emit(std::move(o), {{n + "/out", shape(x)}});
}

int builder::maxpool(int x, std::int64_t k, std::int64_t s, std::int64_t p, bool ceil_mode) {
  const shape_t in = shape(x);
  const std::string n = fmt::format("maxpool{}", ++counter_);
  shape_t out{in[0], in[1]};
  for (std::size_t i = 2; i < in.size(); ++i) out.push_back(out_extent(in[i], k, s, p, 1, ceil_mode, n));
  op o;
  o.name = n;
  o.type = "maxpool";
  o.attr.kernel.assign(in.size() - 2, k);
  o.attr.stride.assign(in.size() - 2, s);
  o.attr.pad_begin.assign(in.size() - 2, p);
  o.attr.pad_end.assign(in.size() - 2, p);
  o.attr.ceil_mode = ceil_mode;
  o.inputs = {x};
  double kv = 1;
  for (std::size_t i = 2; i < in.size(); ++i) kv *= static_cast<double>(k);
  o.flops = kv * static_cast<double>(numel(out));
  o.backward_flops = static_cast<double>(numel(in));
  o.saved = {x};
  return emit(std::move(o), {{n + "/out", out}}, {0});
}

int builder::avgpool(int x, std::int64_t k, std::int64_t s, std::int64_t p, bool ceil_mode) {
  const shape_t in = shape(x);
  const std::string n = fmt::format("avgpool{}", ++counter_);
  shape_t out{in[0], in[1]};
  for (std::size_t i = 2; i < in.size(); ++i) out.push_back(out_extent(in[i], k, s, p, 1, ceil_mode, n));
  op o;
  o.name = n;
  o.type = "avgpool";
  o.attr.kernel.assign(in.size() - 2, k);
  o.attr.stride.assign(in.size() - 2, s);
  o.attr.pad_begin.assign(in.size() - 2, p);
  o.attr.pad_end.assign(in.size() - 2, p);
  o.attr.ceil_mode = ceil_mode;
  o.inputs = {x};
  double kv = 1;
  for (std::size_t i = 2; i < in.size(); ++i) kv *= static_cast<double>(k);
  o.flops = kv * static_cast<double>(numel(out));
  o.backward_flops = static_cast<double>(numel(in));
  return emit(std::move(o), {{n + "/out", out}});
}

int builder::adaptive_avgpool(int x, std::vector<std::int64_t> out_spatial) {
  const shape_t in = shape(x);
  const std::string n = fmt::format("adaptive_avgpool{}", ++counter_);
  shape_t out{in[0], in[1]};
  out.insert(out.end(), out_spatial.begin(), out_spatial.end());
  op o;
  o.name = n;
  o.type = "avgpool";
  // Adaptive pooling: an executor needs a window; it exists when the output divides the input.
  bool integral = true;
  for (std::size_t i = 2; i < in.size(); ++i) integral = integral && in[i] % out[i] == 0;
  if (integral)
    for (std::size_t i = 2; i < in.size(); ++i) {
      o.attr.kernel.push_back(in[i] / out[i]);
      o.attr.stride.push_back(in[i] / out[i]);
    }
  o.inputs = {x};
  o.flops = static_cast<double>(numel(in));
  o.backward_flops = static_cast<double>(numel(in));
  return emit(std::move(o), {{n + "/out", out}});
}

int builder::global_avgpool(int x) {
  std::vector<std::int64_t> ones(shape(x).size() - 2, 1);
  return adaptive_avgpool(x, ones);
}

int builder::add(int a, int b) {
  if (shape(a) != shape(b))
    throw error(errc::invalid_argument, fmt::format("add: expected equal shapes, got [{}] and [{}]",
                                                    fmt::join(shape(a), ","), fmt::join(shape(b), ",")));
  const std::string n = fmt::format("add{}", ++counter_);
  op o;
  o.name = n;
  o.type = "add";
  o.inputs = {a, b};
  o.flops = static_cast<double>(numel(shape(a)));
  o.grad_passthrough = true;
  return emit(std::move(o), {{n + "/out", shape(a)}});
}

int builder::mul(int a, int b) {
  const shape_t& sa = shape(a);
  const shape_t& sb = shape(b);
  shape_t out(std::max(sa.size(), sb.size()), 1);
  for (std::size_t k = 0; k < out.size(); ++k) {
    const auto ea = k < sa.size() ? sa[sa.size() - 1 - k] : 1;
    const auto eb = k < sb.size() ? sb[sb.size() - 1 - k] : 1;
    if (ea != eb && ea != 1 && eb != 1)
      throw error(errc::invalid_argument,
                  fmt::format("mul: shapes [{}] and [{}] do not broadcast", fmt::join(sa, ","), fmt::join(sb, ",")));
    out[out.size() - 1 - k] = std::max(ea, eb);
  }
  const std::string n = fmt::format("mul{}", ++counter_);
  op o;
  o.name = n;
  o.type = "mul";
  o.inputs = {a, b};
  o.flops = static_cast<double>(numel(out));
  o.backward_flops = 2 * o.flops;
  o.saved = {a, b};
  return emit(std::move(o), {{n + "/out", out}});
}

int builder::pad(int x, std::vector<std::int64_t> begin, std::vector<std::int64_t> end, double value) {
  const shape_t& in = shape(x);
  if (begin.size() != in.size() || end.size() != in.size())
    throw error(errc::invalid_argument, fmt::format("pad: expected {} begin and end extents for [{}], got {} and {}",
                                                    in.size(), fmt::join(in, ","), begin.size(), end.size()));
  shape_t out = in;
  for (std::size_t k = 0; k < in.size(); ++k) {
    if (begin[k] < 0 || end[k] < 0)
      throw error(errc::invalid_argument, fmt::format("pad: expected non-negative extents, got begin [{}], end [{}]",
                                                      fmt::join(begin, ","), fmt::join(end, ",")));
    out[k] += begin[k] + end[k];
  }
  const std::string n = fmt::format("pad{}", ++counter_);
  op o;
  o.name = n;
  o.type = "pad";
  o.inputs = {x};
  o.attr.pad_begin = std::move(begin);
  o.attr.pad_end = std::move(end);
  o.attr.pad_value = value;
  o.bytes_touched = static_cast<double>(4 * (numel(in) + numel(out)));
  return emit(std::move(o), {{n + "/out", out}});
}

int builder::concat(const std::vector<int>& xs) {
  shape_t out = shape(xs.at(0));
  out[1] = 0;
  for (int x : xs) {
    const auto& s = shape(x);
    if (s.size() != out.size())
      throw error(errc::invalid_argument,
                  fmt::format("concat: expected rank {}, got [{}]", out.size(), fmt::join(s, ",")));
    for (std::size_t i = 0; i < s.size(); ++i)
      if (i != 1 && s[i] != out[i])
        throw error(errc::invalid_argument,
                    fmt::format("concat: expected extent {} in axis {}, got [{}]", out[i], i, fmt::join(s, ",")));
    out[1] += s[1];
  }
  const std::string n = fmt::format("concat{}", ++counter_);
  op o;
  o.name = n;
  o.type = "concat";
  o.attr.axis = 1;
  o.inputs = xs;
  o.backward_flops = 0;
  return emit(std::move(o), {{n + "/out", out}});
}

int builder::flatten(int x) {
  const shape_t in = shape(x);
  const std::string n = fmt::format("flatten{}", ++counter_);
  op o;
  o.name = n;
  o.type = "flatten";
  o.inputs = {x};
  o.grad_passthrough = false;  // the gradient is a reshaped copy of the output gradient
  o.backward_flops = 0;
  return emit(std::move(o), {{n + "/out", {in[0], numel(in) / in[0]}}});
}

int builder::linear(int x, std::int64_t out_features, bool bias, const std::string& name) {
  const shape_t in = shape(x);
  const std::string n = name.empty() ? fmt::format("fc{}", ++counter_) : name;
  shape_t out = in;
  out.back() = out_features;
  op o;
  o.name = n;
  o.type = "linear";
  o.attr.trans_b = true;
  o.attr.has_bias = bias;
  const double bound = 1.0 / std::sqrt(static_cast<double>(in.back()));
  const int w = param(n + "/weight", {out_features, in.back()});
  g.tensors[w].init = {init_kind::uniform, bound, {}};
  o.inputs = {x, w};
  if (bias) {
    o.inputs.push_back(param(n + "/bias", {out_features}));
    g.tensors[o.inputs.back()].init = {init_kind::uniform, bound, {}};
  }
  o.flops = 2.0 * static_cast<double>(numel(in)) * static_cast<double>(out_features);
  o.backward_flops = 2 * o.flops;
  o.saved = {x, w};
  return emit(std::move(o), {{n + "/out", out}});
}

int builder::upsample(int x, std::vector<std::int64_t> out_spatial) {
  shape_t out{shape(x)[0], shape(x)[1]};
  out.insert(out.end(), out_spatial.begin(), out_spatial.end());
  const std::string n = fmt::format("upsample{}", ++counter_);
  op o;
  o.name = n;
  o.type = "upsample";
  o.inputs = {x};
  o.flops = 4.0 * static_cast<double>(numel(out));
  o.backward_flops = o.flops;
  return emit(std::move(o), {{n + "/out", out}});
}

int builder::matmul(int a, int b, shape_t out_shape, double macs) {
  const std::string n = fmt::format("matmul{}", ++counter_);
  op o;
  o.name = n;
  o.type = "matmul";
  o.inputs = {a, b};
  o.flops = 2 * macs;
  o.backward_flops = 2 * o.flops;
  o.saved = {a, b};
  return emit(std::move(o), {{n + "/out", std::move(out_shape)}});
}

int builder::dropout(int x, double p) {
  const std::string n = fmt::format("dropout{}", ++counter_);
  op o;
  o.name = n;
  o.type = "dropout";
  o.attr.p = p;
  o.inputs = {x};
  const double e = static_cast<double>(numel(shape(x)));
  o.flops = e;
  o.backward_flops = e;
  return emit(std::move(o), {{n + "/out", shape(x)}});
}

int builder::loss(int x, std::int64_t class_axis) {
  // Softmax cross-entropy: one int32 class label per position, i.e. the logits' shape without the
  // class axis ([N] for [N, classes]).
  shape_t lshape = shape(x);
  const auto axis = class_axis < 0 ? static_cast<std::int64_t>(lshape.size()) + class_axis : class_axis;
  lshape.erase(lshape.begin() + axis);
  const int labels = g.add_tensor("labels", lshape, dtype::i32, tensor_kind::input);
  op o;
  o.name = "loss";
  o.type = "loss";
  o.attr.axis = class_axis;
  o.inputs = {x, labels};
  const double e = static_cast<double>(numel(shape(x)));
  o.flops = 5 * e;
  o.backward_flops = 5 * e;
  o.saved = {x, labels};
  return emit(std::move(o), {{"loss/out", {1}}});
}

}  // namespace toru::swap
