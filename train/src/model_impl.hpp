// SPDX-License-Identifier: BSD-3-Clause
// The model's internals, shared with the swap-plan executor (swap_exec/), which runs the same
// kernels over storage it allocates and frees step by step. Not a public header.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "backend.hpp"
#include "toru/swap/graph.hpp"
#include "toru/train/device_memory.hpp"
#include "toru/train/model.hpp"

namespace toru::train {

namespace detail {
/// A ReLU op (ONNX's or toru's own name): its backward needs only the sign of its input, which
/// its output keeps, so the input may be overwritten (in_place_relu, the plan executor).
inline bool is_relu(const std::string& type) { return type == "relu" || type == "Relu"; }

/// Runs a model's forward and backward another way (the swap-plan executor); installed in
/// model_access::get(m).executor, after which model::forward/backward delegate to it.
class step_executor {
 public:
  virtual ~step_executor() = default;
  virtual forward_result forward(std::span<const float> input, std::span<const std::int32_t> labels,
                                 const forward_options& options) = 0;
  virtual void backward(const std::function<void(int slot)>& ready) = 0;
};
}  // namespace detail

struct model::impl {
  swap::graph g;
  model_options opt;
  std::unique_ptr<detail::backend> be;
  std::vector<std::unique_ptr<detail::kernel>> kernels;  // per op
  int image = -1, labels = -1, loss_op = -1;
  std::vector<parameter_slot> slots;
  std::vector<parameter_slot> buffer_slots;
  std::vector<int> slot_of;  // per tensor: parameter slot or -1
  std::int64_t nparams = 0, nbuffers = 0;
  device_buffer params, grads, buffers;
  std::vector<std::vector<float*>> op_buffers;            // per op
  std::vector<device_buffer> storage;                     // per tensor (activations, graph inputs)
  device_buffer activations;                              // model_options::share_activations: every op output
  std::vector<std::int64_t> grad_offset;                  // and gradient (per tensor; -1: allocated in backward)
  std::vector<std::vector<std::int64_t>> pending_offset;  // per op, per input: its accumulation temporary
  std::vector<void*> data;                                // per tensor: where it lives (params point into `params`)
  std::vector<device_buffer> state;                       // per op
  device_buffer workspace;
  std::vector<std::int64_t> storage_bytes;  // per tensor
  bool trained_forward = false;
  std::vector<op_time> times;
  detail::step_info last_step;
  std::shared_ptr<detail::step_executor> executor;  // set_executor(); null: the default schedule
  std::function<void(int op)> forward_hook;         // set_forward_hook() (forward_hook.hpp)

  std::int64_t batch() const { return g.tensors[image].shape[0]; }
  int classes() const {
    const auto& op = g.ops[loss_op];
    const auto& s = g.tensors[op.inputs[0]].shape;
    const std::int64_t axis = op.attr.axis < 0 ? static_cast<std::int64_t>(s.size()) + op.attr.axis : op.attr.axis;
    return static_cast<int>(s.at(axis));
  }
};

namespace detail {
/// The executor's way in (model declares it a friend).
struct model_access {
  using impl = model::impl;
  static impl& get(model& m) { return *m.impl_; }
};
}  // namespace detail

}  // namespace toru::train
