// SPDX-License-Identifier: BSD-3-Clause
// Executor of a swap/ forward graph: the trainer's model. The contract between the layers (backends)
// and the engines (data parallel, CGDP, swap executor) that drive them.
//
// A model owns its parameters, their gradients and its non-trainable buffers (batch-norm running
// statistics) as three flat float buffers in the backend's memory. Parameter slots are ordered by
// the forward op that first reads them, so reverse slot order is the order in which backward
// finishes them (the bucketing and chunking order of the engines).
//
//   auto g = toru::swap::build_model("fashion-cnn", {.batch = 64, .height = 28, .width = 28});
//   toru::train::model m(g, {.seed = 1});
//   auto r = m.forward(images, labels, {.training = true, .step = 0, .first_sample = 0});
//   m.backward([&](int slot) { engine.gradient_ready(slot); });
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "toru/swap/graph.hpp"

namespace toru::train {

enum class backend_kind { cpu, cuda };

/// Where a model's flat buffers live. `host`: plain host memory (CPU backend). `device`: GPU memory;
/// engines use NCCL or stage through host copies.
enum class memory_space { host, device };

struct parameter_slot {
  std::string name;  // the graph's parameter tensor name ("conv1.weight", ...)
  std::vector<std::int64_t> shape;
  std::int64_t offset = 0;    // element offset into the flat parameter and gradient buffers
  std::int64_t count = 0;     // elements
  int first_forward_op = -1;  // forward op (graph op id) that first reads it
};

struct forward_options {
  bool training = true;  // batch norm uses batch statistics and updates running ones; dropout active
  // Dropout masks are a pure function of (seed, step, op, global sample index, element): no RNG
  // state to checkpoint beyond the step, and P ranks with B/P samples draw what 1 rank with B draws.
  std::uint64_t step = 0;
  std::int64_t first_sample = 0;  // global index of this shard's first sample
};

struct forward_result {
  double loss = 0;           // mean softmax cross-entropy over the local batch (label-smoothed where set)
  std::int64_t correct = 0;  // top-1 hits in the local batch
};

/// Wall time of one forward op in the last forward and backward (seconds; backward 0 where none ran).
struct op_time {
  int op = -1;  // graph op id
  double forward_seconds = 0;
  double backward_seconds = 0;
};

struct model_options {
  backend_kind backend = backend_kind::cpu;
  int threads = 0;                  // CPU backend: oneDNN/OpenMP threads; 0 keeps the library's default
  std::uint64_t seed = 0;           // parameter initialisation and dropout
  int device = 0;                   // CUDA backend: device ordinal
  std::size_t memory_capacity = 0;  // bytes the model may allocate on its device; 0 = unlimited
  // Activations and their gradients are allocated step by step by an executor (the swap-plan
  // executor, plan_executor.hpp) instead of once at construction; forward/backward then need one.
  bool defer_activations = false;
  // Softmax cross-entropy against (1 - eps) one-hot + eps / classes (PyTorch's
  // CrossEntropyLoss(label_smoothing=eps)); in [0, 1). The CPU backend only.
  double label_smoothing = 0;
  // ReLU writes its output over its input where no other op reads that input and no backward
  // needs it (batch norm's and add's outputs before a ReLU: a third of a ResNet's activations), as
  // PyTorch's ReLU(inplace=True). Gradients are bit-identical (ReLU's backward needs only the
  // sign of its input, which its output keeps); read_tensor() of such an input then returns the
  // ReLU's output. The CPU backend only; toru-train and the trainer turn it on.
  bool in_place_relu = false;
  // Op outputs share memory where their lifetimes in a training step do not overlap: an output is
  // alive from its op's forward to its last reader, the forward ops that consume it and the
  // backward ops that read it (kernels declare which inputs and outputs their backward reads), so
  // what no backward needs (a batch norm's output before a residual add, ...) is overwritten by
  // later outputs, as PyTorch frees what autograd does not save. Results are bit-identical;
  // read_tensor() of a tensor no backward reads then returns whatever later overwrote it. Not with
  // defer_activations (the executor places activations itself). toru-train and the trainer turn it on.
  bool share_activations = false;
};

class device_memory;
namespace detail {
struct model_access;
}  // namespace detail

class model {
 public:
  /// Builds the executor for a forward graph whose first input is the images [N, ...] and whose
  /// loss is softmax cross-entropy against int32 class labels [N]. Initialises the parameters from
  /// the graph's initialisers and `options.seed`. Throws toru::error naming the op for anything
  /// the backend cannot run.
  model(const swap::graph& forward, const model_options& options);
  ~model();
  model(model&&) noexcept;
  model& operator=(model&&) noexcept;

  /// The forward graph, without its initialisers' values (they are in the parameters).
  const swap::graph& graph() const;
  std::int64_t batch() const;
  std::vector<std::int64_t> input_shape() const;  // including the batch
  int classes() const;

  const std::vector<parameter_slot>& parameters() const;
  std::int64_t parameter_count() const;  // elements of the flat buffers
  memory_space space() const;

  /// The flat buffers, in `space()`. Gradients are overwritten (not accumulated) by backward().
  std::span<float> parameter_data();
  std::span<float> gradient_data();
  /// Non-trainable state (running mean/variance), for checkpoints and for agreeing across ranks.
  std::span<float> buffer_data();
  /// Layout of buffer_data(): one entry per buffer ("<op>/running_mean", "<op>/running_var"), in
  /// forward op order (first_forward_op: the op that owns it).
  const std::vector<parameter_slot>& buffers() const;

  /// Forward pass and loss for one local batch (input: batch() * prod(input_shape()[1..]) floats,
  /// labels: batch() ints in [0, classes())). Throws toru::error on a size mismatch or a label out
  /// of range, and on a non-finite loss (naming the first op whose output is not finite).
  forward_result forward(std::span<const float> input, std::span<const std::int32_t> labels,
                         const forward_options& options);
  /// Backward of the last training forward. Calls ready(slot) as soon as that slot's gradient is
  /// final, from the calling thread, in the order backward completes them.
  void backward(const std::function<void(int slot)>& ready = {});
  /// Tells the backend that parameter_data() was changed outside it (optimizer step, checkpoint
  /// load, weights from another rank). No-op where the buffers are the backend's own.
  void parameters_changed();

  /// Per-op times of the last forward and backward (one entry per graph op, in graph order): the
  /// measured layer costs that chunking and swap decisions start from.
  const std::vector<op_time>& op_times() const;

  /// The allocator every activation, parameter, gradient and workspace of this model goes through
  /// (capacity, bytes in use, high-water mark).
  device_memory& memory();

  /// Plain (row-major) host copy of an fp32 graph tensor by name: an activation as the last forward
  /// left it, an input, or a parameter. For tests and debugging; throws toru::error
  /// (invalid_argument) naming the tensor when the graph has no such fp32 tensor.
  std::vector<float> read_tensor(std::string_view name);

 private:
  friend struct detail::model_access;
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace toru::train
