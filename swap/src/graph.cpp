// SPDX-License-Identifier: BSD-3-Clause
#include "toru/swap/graph.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "toru/core/error.hpp"

namespace toru::swap {

std::int64_t size_of(dtype t) noexcept {
  switch (t) {
    case dtype::f32:
      return 4;
    case dtype::f16:
      return 2;
    case dtype::bf16:
      return 2;
    case dtype::i64:
      return 8;
    case dtype::i32:
      return 4;
    case dtype::u8:
      return 1;
  }
  return 0;
}

std::string_view to_string(dtype t) noexcept {
  switch (t) {
    case dtype::f32:
      return "fp32";
    case dtype::f16:
      return "fp16";
    case dtype::bf16:
      return "bf16";
    case dtype::i64:
      return "int64";
    case dtype::i32:
      return "int32";
    case dtype::u8:
      return "bool";
  }
  return "?";
}

dtype parse_dtype(std::string_view name) {
  if (name == "fp32" || name == "f32" || name == "float32" || name == "float") return dtype::f32;
  if (name == "fp16" || name == "f16" || name == "float16" || name == "half") return dtype::f16;
  if (name == "bf16" || name == "bfloat16") return dtype::bf16;
  throw error(errc::invalid_argument, fmt::format("dtype: expected fp32, fp16 or bf16, got '{}'", name));
}

std::string_view to_string(category c) noexcept {
  switch (c) {
    case category::forward:
      return "forward";
    case category::backward:
      return "backward";
    case category::update:
      return "update";
    case category::recompute:
      return "recompute";
  }
  return "?";
}

int optimizer_state_factor(optimizer o) noexcept {
  switch (o) {
    case optimizer::sgd:
      return 0;
    case optimizer::momentum:
      return 1;
    case optimizer::adam:
      return 2;
  }
  return 0;
}

int graph::add_tensor(std::string tname, std::vector<std::int64_t> shape, dtype type, tensor_kind kind) {
  std::int64_t count = 1;
  for (auto e : shape) {
    if (e <= 0)
      throw error(errc::invalid_argument,
                  fmt::format("tensor '{}' shape: expected positive extents, got [{}]", tname, fmt::join(shape, ",")));
    count *= e;
  }
  tensor t;
  t.name = std::move(tname);
  t.shape = std::move(shape);
  t.type = type;
  t.bytes = count * size_of(type);
  t.kind = kind;
  t.requires_grad = kind == tensor_kind::parameter;
  tensors.push_back(std::move(t));
  return static_cast<int>(tensors.size()) - 1;
}

int graph::add_op(op o) {
  const int id = static_cast<int>(ops.size());
  const int nt = static_cast<int>(tensors.size());
  for (int t : o.inputs)
    if (t < 0 || t >= nt)
      throw error(errc::invalid_argument,
                  fmt::format("op '{}' input: expected a tensor id below {}, got {}", o.name, nt, t));
  for (int t : o.outputs) {
    if (t < 0 || t >= nt)
      throw error(errc::invalid_argument,
                  fmt::format("op '{}' output: expected a tensor id below {}, got {}", o.name, nt, t));
    if (tensors[t].producer >= 0)
      throw error(errc::invalid_argument,
                  fmt::format("op '{}' output '{}': expected an unproduced tensor, already produced by '{}'", o.name,
                              tensors[t].name, ops[tensors[t].producer].name));
  }
  for (int c : o.control_inputs)
    if (c < 0 || c >= id)
      throw error(errc::invalid_argument,
                  fmt::format("op '{}' control input: expected an op id below {}, got {}", o.name, id, c));
  if (o.bytes_touched == 0) {
    for (int t : o.inputs) o.bytes_touched += static_cast<double>(tensors[t].bytes);
    for (int t : o.outputs) o.bytes_touched += static_cast<double>(tensors[t].bytes);
  }
  bool rg = false;
  for (int t : o.inputs) {
    tensors[t].consumers.push_back(id);
    rg = rg || tensors[t].requires_grad;
  }
  for (int t : o.outputs) {
    tensors[t].producer = id;
    if (o.cat == category::forward) tensors[t].requires_grad = rg;
  }
  ops.push_back(std::move(o));
  return id;
}

std::int64_t graph::parameter_bytes() const {
  std::int64_t b = 0;
  for (const auto& t : tensors)
    if (t.kind == tensor_kind::parameter) b += t.bytes;
  return b;
}

std::int64_t graph::parameter_count() const {
  std::int64_t n = 0;
  for (const auto& t : tensors)
    if (t.kind == tensor_kind::parameter) n += t.bytes / size_of(t.type);
  return n;
}

double graph::flops(category c) const {
  double f = 0;
  for (const auto& o : ops)
    if (o.cat == c) f += o.flops;
  return f;
}

graph rebatch(const graph& forward, std::int64_t batch) {
  if (batch <= 0) throw error(errc::invalid_argument, fmt::format("batch: expected a positive value, got {}", batch));
  if (forward.batch <= 0)
    throw error(errc::invalid_argument,
                fmt::format("graph '{}': expected a graph whose batch axis is known (an ONNX import), got one "
                            "without; build it at the batch wanted instead",
                            forward.name));
  graph g = forward;
  if (batch == forward.batch) return g;
  const double scale = static_cast<double>(batch) / static_cast<double>(forward.batch);
  for (auto& t : g.tensors) {
    if (t.batch_multiple.empty()) continue;
    std::int64_t n = 1;
    for (std::size_t a = 0; a < t.shape.size(); ++a) {
      if (t.batch_multiple[a] > 0) t.shape[a] = t.batch_multiple[a] * batch;
      n *= t.shape[a];
    }
    t.bytes = n * size_of(t.type);
  }
  for (auto& o : g.ops) {
    bool scales = false;
    for (int t : o.inputs) scales = scales || !g.tensors[t].batch_multiple.empty();
    for (int t : o.outputs) scales = scales || !g.tensors[t].batch_multiple.empty();
    if (!scales) continue;
    o.flops *= scale;
    o.backward_flops *= scale;
    o.bytes_touched *= scale;
  }
  g.batch = batch;
  return g;
}

std::int64_t saved_bytes(const graph& g) {
  std::vector<char> seen(g.tensors.size(), 0);
  std::int64_t n = 0;
  for (const auto& o : g.ops) {
    if (o.cat != category::forward) continue;
    for (int t : o.saved) {
      if (seen[t] || g.tensors[t].kind == tensor_kind::parameter) continue;
      seen[t] = 1;
      n += g.tensors[t].bytes;
    }
  }
  return n;
}

namespace {
// Gradient ops of matrix products compute dX and dW, each as costly as the forward; the builder's
// backward_flops assumes both, so drop the dX half when the data input needs no gradient.
bool is_product(const std::string& type) { return type == "conv" || type == "linear" || type == "matmul"; }
}  // namespace

graph make_training_graph(const graph& forward, const training_options& options) {
  int loss = -1;
  for (int i = 0; i < static_cast<int>(forward.ops.size()); ++i) {
    const auto& o = forward.ops[i];
    if (o.cat != category::forward)
      throw error(errc::invalid_argument, fmt::format("forward graph '{}': expected forward ops only, op '{}' is {}",
                                                      forward.name, o.name, to_string(o.cat)));
    if (o.type == "loss") loss = i;
  }
  if (loss < 0)
    throw error(
        errc::invalid_argument,
        fmt::format("forward graph '{}': expected a 'loss' op to seed the backward pass, found none", forward.name));

  graph g = forward;
  g.persistent_param_grads = options.persistent_param_grads;
  if (options.maxpool_indices)
    for (int i = 0; i < static_cast<int>(g.ops.size()); ++i) {
      if (g.ops[i].type != "maxpool" || g.ops[i].outputs.size() != 1) continue;
      const tensor y = g.tensors[g.ops[i].outputs[0]];  // a copy: add_tensor may reallocate
      const int idx = g.add_tensor(g.ops[i].name + "/indices", y.shape, dtype::i64, tensor_kind::activation);
      g.tensors[idx].producer = i;
      g.tensors[idx].batch_multiple = y.batch_multiple;
      auto& o = g.ops[i];
      o.outputs.push_back(idx);
      o.saved = {o.inputs.at(0), idx};
    }
  if (options.dropout_masks)
    for (int i = 0; i < static_cast<int>(g.ops.size()); ++i) {
      if (g.ops[i].type != "dropout" || g.ops[i].attr.p <= 0 || g.ops[i].outputs.size() != 1) continue;
      const tensor y = g.tensors[g.ops[i].outputs[0]];  // a copy: add_tensor may reallocate
      const int mask = g.add_tensor(g.ops[i].name + "/mask", y.shape, dtype::u8, tensor_kind::activation);
      g.tensors[mask].producer = i;
      g.tensors[mask].batch_multiple = y.batch_multiple;
      g.ops[i].outputs.push_back(mask);
      g.ops[i].saved = {mask};
    }
  if (options.batchnorm_stats)
    for (int i = 0; i < static_cast<int>(g.ops.size()); ++i) {
      if (g.ops[i].type != "batchnorm" || g.ops[i].outputs.size() != 1) continue;
      const std::int64_t channels = g.tensors[g.ops[i].outputs[0]].shape.at(1);
      for (const char* what : {"/mean", "/invstd"}) {
        const int t = g.add_tensor(g.ops[i].name + what, {channels}, dtype::f32, tensor_kind::activation);
        g.tensors[t].producer = i;
        g.ops[i].outputs.push_back(t);
        g.ops[i].saved.push_back(t);
      }
    }
  const int nfwd = static_cast<int>(forward.ops.size());
  // partial[t]: gradient contributions to tensor t, collected while walking the ops backwards.
  std::vector<std::vector<int>> partial(forward.tensors.size());

  auto finish_grad = [&](int t) -> int {
    auto& parts = partial[t];
    if (parts.empty()) return -1;
    if (parts.size() == 1) return parts[0];
    const tensor src = g.tensors[t];  // a copy: add_tensor may reallocate
    const int sum =
        g.add_tensor("d" + src.name, src.shape, src.type,
                     src.kind == tensor_kind::parameter ? tensor_kind::param_gradient : tensor_kind::gradient);
    op acc;
    acc.name = "add_n/" + src.name;
    acc.type = "add_n";
    acc.cat = category::backward;
    acc.inputs = parts;
    acc.outputs = {sum};
    acc.flops = static_cast<double>(parts.size() - 1) * static_cast<double>(src.bytes / size_of(src.type));
    acc.forward_op = src.producer;
    g.add_op(std::move(acc));
    parts = {sum};
    return sum;
  };

  std::vector<std::pair<int, std::vector<int>>> updates;  // forward op, its parameter gradients
  for (int f = nfwd - 1; f >= 0; --f) {
    const op fo = forward.ops[f];  // copy: g.ops grows below
    std::vector<int> dys;
    bool any_output_grad = (f == loss);
    for (int y : fo.outputs) {
      int dy = finish_grad(y);
      if (dy >= 0) {
        dys.push_back(dy);
        any_output_grad = true;
        g.tensors[y].grad = dy;
      }
    }
    if (!any_output_grad) continue;  // dead branch: nothing flows back
    std::vector<int> grad_inputs;
    for (int x : fo.inputs)
      if (g.tensors[x].requires_grad) grad_inputs.push_back(x);
    if (grad_inputs.empty()) continue;

    if (fo.grad_passthrough) {
      for (int x : grad_inputs) partial[x].push_back(dys.at(0));
      continue;
    }
    bool has_param = false, has_data = false;
    for (int x : grad_inputs) (g.tensors[x].kind == tensor_kind::parameter ? has_param : has_data) = true;
    int weight_op = -1;
    if (options.split_weight_grad && (fo.type == "conv" || fo.type == "linear") && has_param && has_data) {
      op wo;
      wo.name = "grad_weight/" + fo.name;
      wo.type = fo.type + "_grad_weight";
      wo.cat = category::backward;
      wo.forward_op = f;
      wo.inputs = dys;
      for (int s : fo.saved)
        if (g.tensors[s].kind != tensor_kind::parameter &&
            std::find(wo.inputs.begin(), wo.inputs.end(), s) == wo.inputs.end())
          wo.inputs.push_back(s);
      std::vector<int> param_grads;
      for (int x : grad_inputs) {
        const tensor xt = g.tensors[x];  // a copy: add_tensor may reallocate
        if (xt.kind != tensor_kind::parameter) continue;
        const int dw = g.add_tensor("d" + xt.name, xt.shape, xt.type, tensor_kind::param_gradient);
        wo.outputs.push_back(dw);
        partial[x].push_back(dw);
        param_grads.push_back(dw);
      }
      wo.flops = 0.5 * fo.backward_flops;
      weight_op = g.add_op(std::move(wo));
      updates.emplace_back(f, std::move(param_grads));
      std::erase_if(grad_inputs, [&](int x) { return g.tensors[x].kind == tensor_kind::parameter; });
    }
    op bo;
    bo.name = "grad/" + fo.name;
    bo.type = fo.type + "_grad";
    bo.cat = category::backward;
    bo.forward_op = f;
    bo.inputs = dys;
    for (int s : fo.saved)
      if ((weight_op < 0 || g.tensors[s].kind == tensor_kind::parameter) &&
          std::find(bo.inputs.begin(), bo.inputs.end(), s) == bo.inputs.end())
        bo.inputs.push_back(s);
    if (weight_op >= 0) bo.control_inputs.push_back(weight_op);
    std::vector<int> param_grads;
    bool data_grad = false;
    for (int x : grad_inputs) {
      const tensor xt = g.tensors[x];  // a copy: add_tensor may reallocate
      const bool param = xt.kind == tensor_kind::parameter;
      const int dx =
          g.add_tensor("d" + xt.name, xt.shape, xt.type, param ? tensor_kind::param_gradient : tensor_kind::gradient);
      bo.outputs.push_back(dx);
      partial[x].push_back(dx);
      if (param)
        param_grads.push_back(dx);
      else
        data_grad = true;
    }
    bo.flops = fo.backward_flops;
    if (is_product(fo.type) && (!data_grad || weight_op >= 0)) bo.flops *= 0.5;
    g.add_op(std::move(bo));
    if (!param_grads.empty()) updates.emplace_back(f, std::move(param_grads));
  }
  const int factor = optimizer_state_factor(options.opt);
  std::vector<bool> updated(g.tensors.size(), false);  // a shared parameter gets one update
  for (auto& [f, grads] : updates) {
    op u;
    u.name = "update/" + forward.ops[f].name;
    u.type = "update";
    u.cat = category::update;
    u.forward_op = f;
    double elems = 0;
    for (int dw : grads) {
      int w = -1;
      // The parameter is the forward input with the same name minus the leading 'd'.
      for (int x : forward.ops[f].inputs)
        if (g.tensors[x].kind == tensor_kind::parameter && "d" + g.tensors[x].name == g.tensors[dw].name) w = x;
      const int acc = finish_grad(w);
      u.inputs.push_back(acc >= 0 ? acc : dw);
      if (w >= 0 && updated[w]) continue;
      if (w >= 0) {
        updated[w] = true;
        g.tensors[w].grad = acc >= 0 ? acc : dw;
        u.inputs.push_back(w);
      }
      elems += static_cast<double>(g.tensors[dw].bytes / size_of(g.tensors[dw].type));
    }
    if (u.inputs.empty()) continue;
    std::sort(u.inputs.begin(), u.inputs.end());
    u.inputs.erase(std::unique(u.inputs.begin(), u.inputs.end()), u.inputs.end());
    u.flops = elems * (2.0 + 2.0 * factor);
    u.bytes_touched = elems * 4.0 * (2.0 + 2.0 * factor);
    g.add_op(std::move(u));
  }
  return g;
}

}  // namespace toru::swap
