// SPDX-License-Identifier: BSD-3-Clause
// The trainer's internal backend interface: one kernel per forward op, created once (shapes are
// fixed for a model's life), run forward and backward by the executor (model.cpp) over storage it
// allocates through the backend's device_memory.
//
// Layouts. Each kernel decides the storage of its outputs (the CPU backend keeps oneDNN's blocked
// formats between layers, cuDNN keeps plain NCHW); output_bytes() tells the executor how much to
// allocate. The gradient of a tensor has exactly the layout and size of the tensor. Kernels learn
// the layout of their inputs from the backend that created their producers (make_kernel is called
// in forward order on one backend). Graph inputs (images, labels), parameters, parameter gradients
// and buffers are always plain row-major (PyTorch's contiguous layout); labels are int32.
// read_plain()/write_plain() convert between a tensor's storage and plain host floats.
//
// Ownership: the executor owns all storage; kernels own only what they cache (primitives, reordered
// weights, descriptors). A kernel's `state` (state_bytes()) persists from its forward to its
// backward (batch-norm mean/variance, dropout mask, max-pool indices); `workspace` does not.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "toru/swap/graph.hpp"
#include "toru/train/device_memory.hpp"
#include "toru/train/model.hpp"

namespace toru::train::detail {

struct step_info {
  bool training = true;
  std::uint64_t step = 0;
  std::int64_t first_sample = 0;  // global index of the local batch's first sample
  std::uint64_t seed = 0;
};

/// Non-trainable state a kernel keeps across steps (batch-norm running mean/variance), plain floats
/// in the backend's memory, allocated by the executor and exposed through model::buffer_data().
struct buffer_spec {
  std::string name;  // "<op>/running_mean", ...
  std::int64_t count = 0;
  float fill = 0;         // initial value
  int graph_tensor = -1;  // a graph input tensor holding initial values (ONNX running stats), or -1
};

struct forward_args {
  std::vector<const void*> in;  // one per op input (graph order); nullptr for inputs a kernel ignores
  std::vector<void*> out;       // one per op output
  std::vector<float*> buffers;  // one per buffer_specs() entry
  void* state = nullptr;        // state_bytes()
  void* workspace = nullptr;    // workspace_bytes()
  step_info step;
};

struct backward_args {
  std::vector<const void*> in;     // the forward's inputs
  std::vector<const void*> out;    // the forward's outputs
  std::vector<const void*> d_out;  // gradient of each output (nullptr: no gradient reached it, treat as 0)
  std::vector<void*> d_in;         // gradient of each input to overwrite; nullptr where none is needed
  std::vector<float*> buffers;
  void* state = nullptr;
  void* workspace = nullptr;
  step_info step;
};

class kernel {
 public:
  virtual ~kernel() = default;
  virtual void forward(const forward_args& a) = 0;
  /// Only after a training forward.
  virtual void backward(const backward_args& a) = 0;
  /// Storage bytes of output i (>= plain bytes where the layout pads).
  virtual std::int64_t output_bytes(int i) const = 0;
  virtual std::int64_t state_bytes() const { return 0; }
  virtual std::int64_t workspace_bytes() const { return 0; }
  virtual std::vector<buffer_spec> buffer_specs() const { return {}; }
  /// Whether backward reads `in[i]` / `out[i]`; the executor may release the others (swap executor).
  virtual bool backward_reads_input(int) const { return true; }
  virtual bool backward_reads_output(int) const { return true; }
  /// Called after the parameters changed outside the backend (cached reordered weights are stale).
  virtual void parameters_changed() {}
};

/// The loss kernel (softmax cross-entropy over the class axis against int32 labels) also reports
/// the local batch's mean loss and top-1 hits of the last forward. Backward seeds the chain with
/// d(mean loss)/d(logits); its d_out is nullptr.
class loss_kernel : public kernel {
 public:
  virtual forward_result result() const = 0;
  /// CrossEntropyLoss(label_smoothing = eps): the target is (1 - eps) one-hot + eps / classes.
  /// Called once, before the first forward, where eps != 0 (model_options::label_smoothing); a
  /// backend without it throws errc::unsupported.
  virtual void set_label_smoothing(double eps);
  /// Labels out of range found by the last forward: index of the first bad sample, or -1.
  virtual std::int64_t first_bad_label() const { return -1; }
};

class backend {
 public:
  virtual ~backend() = default;
  virtual backend_kind kind() const noexcept = 0;
  virtual device_memory& memory() = 0;
  /// Kernel of forward op `op` of `g` (in forward order). Throws toru::error(unsupported) naming the
  /// op and its type for anything this backend cannot run, invalid_argument for bad attributes.
  virtual std::unique_ptr<kernel> make_kernel(const swap::graph& g, int op, const model_options& options) = 0;
  /// Plain float copies between host memory and the storage of graph tensor `tensor` (storage as
  /// the producing kernel laid it out; graph inputs and parameters are plain).
  virtual void write_plain(int tensor, const float* host, void* storage) = 0;
  virtual void read_plain(int tensor, const void* storage, float* host) = 0;
  /// Raw copies (no layout change), host <-> backend memory.
  virtual void copy_to_device(void* dst, const void* host_src, std::size_t bytes) = 0;
  virtual void copy_to_host(void* host_dst, const void* src, std::size_t bytes) = 0;
  /// dst[i] += src[i] for `count` floats in backend memory (gradient accumulation of forks).
  virtual void accumulate(float* dst, const float* src, std::int64_t count) = 0;
  virtual void fill(float* dst, float value, std::int64_t count) = 0;
  /// Waits for queued work (no-op on the CPU).
  virtual void synchronize() {}
};

std::unique_ptr<backend> make_cpu_backend(const model_options& options);
/// Defined by the CUDA backend (train/src/cuda/) when built; otherwise throws toru::error(unsupported).
std::unique_ptr<backend> make_cuda_backend(const model_options& options);

}  // namespace toru::train::detail
