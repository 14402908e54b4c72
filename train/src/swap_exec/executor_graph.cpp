// SPDX-License-Identifier: BSD-3-Clause
// The graph the plan executor runs, as the planner must see it (plan_executor.hpp).
#include <algorithm>

#include <fmt/format.h>

#include "../model_impl.hpp"
#include "executor_internal.hpp"
#include "toru/core/error.hpp"
#include "toru/train/plan_executor.hpp"

namespace toru::train {

namespace detail {

std::int64_t granule(std::int64_t bytes) { return bytes <= 0 ? 64 : (bytes + 63) / 64 * 64; }

swap::graph executor_forward_graph(model& m) {
  auto& mi = model_access::get(m);
  swap::graph g = mi.g;
  for (std::size_t t = 0; t < g.tensors.size(); ++t) {
    auto& ten = g.tensors[t];
    if (ten.kind == swap::tensor_kind::parameter) continue;
    // Constant inputs (ONNX initializers that are not parameters) stay in the arena like
    // parameters: never step objects.
    if (ten.producer < 0 && static_cast<int>(t) != mi.image && static_cast<int>(t) != mi.labels) {
      ten.kind = swap::tensor_kind::parameter;
      continue;
    }
    ten.bytes = granule(mi.storage_bytes[t]);
  }
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    auto& o = g.ops[i];
    const auto& k = *mi.kernels[i];
    // Each layer's backward is one kernel call here, with its own gradient buffers: no pass-through
    // gradients (the add's and reshape's gradients are copies or relayouts).
    o.grad_passthrough = false;
    o.saved.clear();
    if (is_relu(o.type)) {
      // ReLU's gradient needs only the sign of its input, which its output has: keep the output (as
      // PyTorch does) and hand it to the kernel as the input, so the input can be overwritten in place.
      o.saved.push_back(o.outputs.at(0));
      continue;
    }
    for (std::size_t j = 0; j < o.inputs.size(); ++j)
      if (k.backward_reads_input(static_cast<int>(j))) o.saved.push_back(o.inputs[j]);
    for (std::size_t j = 0; j < o.outputs.size(); ++j)
      if (k.backward_reads_output(static_cast<int>(j))) o.saved.push_back(o.outputs[j]);
  }
  return g;
}

swap::graph executor_training_graph(model& m, bool split_weight_grad) {
  auto& mi = model_access::get(m);
  const swap::graph fwd = executor_forward_graph(m);
  swap::graph g = swap::make_training_graph(fwd, {.opt = swap::optimizer::sgd, .split_weight_grad = split_weight_grad});
  std::vector<std::int64_t> bytes_by_name;
  for (auto& ten : g.tensors) {
    if (ten.kind == swap::tensor_kind::param_gradient) {
      ten.bytes = 0;  // in the model's persistent flat gradient buffer
    } else if (ten.kind == swap::tensor_kind::gradient) {
      const auto it = std::find_if(fwd.tensors.begin(), fwd.tensors.end(),
                                   [&](const swap::tensor& s) { return "d" + s.name == ten.name; });
      if (it == fwd.tensors.end())
        throw error(errc::internal, fmt::format("plan executor: gradient '{}' has no forward tensor", ten.name));
      ten.bytes = it->bytes;
    }
  }
  for (const auto& o : g.ops) {
    if (o.type == "add_n" && g.tensors[o.outputs.at(0)].kind == swap::tensor_kind::param_gradient)
      throw error(errc::unsupported,
                  fmt::format("plan executor: model '{}' shares parameter '{}' between ops; not supported", mi.g.name,
                              g.tensors[o.outputs[0]].name.substr(1)));
  }
  // The loss kernel's backward reads what its forward computed (kernel state), which the graph
  // does not show: order it after the forward.
  for (std::size_t i = fwd.ops.size(); i < g.ops.size(); ++i)
    if (g.ops[i].forward_op == mi.loss_op && g.ops[i].cat == swap::category::backward)
      g.ops[i].control_inputs.push_back(mi.loss_op);
  return g;
}

}  // namespace detail

swap::graph executor_graph(model& m) {
  auto& mi = detail::model_access::get(m);
  if (!mi.opt.defer_activations)
    throw error(errc::invalid_argument,
                fmt::format("plan executor: model '{}': expected model_options::defer_activations = true", mi.g.name));
  return detail::executor_forward_graph(m);
}

}  // namespace toru::train
