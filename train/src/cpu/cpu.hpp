// SPDX-License-Identifier: BSD-3-Clause
// The oneDNN CPU backend: shared pieces of its kernels (one file per layer family). Each kernel
// creates its primitives once (shapes are fixed), keeps oneDNN's preferred layouts for what it
// produces, and reorders an input only where its producer's layout differs from what the primitive
// wants (relayout is a no-op otherwise).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include <dnnl.hpp>

#include "backend.hpp"

namespace toru::train::detail::cpu {

using md = dnnl::memory::desc;
using dims = dnnl::memory::dims;

/// Row-major (PyTorch contiguous) descriptor of `shape`.
md plain_md(const std::vector<std::int64_t>& shape);

class cpu_backend final : public backend {
 public:
  explicit cpu_backend(const model_options& o);
  backend_kind kind() const noexcept override { return backend_kind::cpu; }
  device_memory& memory() override { return *mem_; }
  std::unique_ptr<kernel> make_kernel(const swap::graph& g, int op, const model_options& options) override;
  void write_plain(int tensor, const float* host, void* storage) override;
  void read_plain(int tensor, const void* storage, float* host) override;
  void copy_to_device(void* dst, const void* src, std::size_t bytes) override;
  void copy_to_host(void* dst, const void* src, std::size_t bytes) override;
  void accumulate(float* dst, const float* src, std::int64_t count) override;
  void fill(float* dst, float value, std::int64_t count) override;

  /// Storage descriptor of graph tensor t: what its producer chose, plain for graph inputs.
  const md& layout(int t) const { return layouts_.at(static_cast<std::size_t>(t)); }
  void set_layout(int t, const md& d) { layouts_.at(static_cast<std::size_t>(t)) = d; }

  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream strm{eng};
  int threads = 0;

  /// Makes OpenMP use the requested thread count on the calling thread (the setting is per thread).
  void set_threads() const;

 private:
  std::unique_ptr<device_memory> mem_;
  const swap::graph* graph_ = nullptr;
  std::vector<md> layouts_;
};

/// memcpy over the calling thread's OpenMP threads (fixed chunks): activation gradients copied whole
/// (an add's backward) are tens of MB, memory-bound, and a serial copy does not scale with threads.
void parallel_copy(void* dst, const void* src, std::size_t bytes);

/// Moves data between two layouts of one tensor with a cached reorder; no-op (pointer passed
/// through) when they agree. The scratch buffer is its own (through the backend's device_memory),
/// or, for one built by workspace_relayouts, a slice of the kernel's workspace: pass the call's
/// workspace to in/out/finish then.
class relayout {
 public:
  relayout() = default;
  relayout(cpu_backend& be, const md& from, const md& to, const std::string& what);
  bool identity() const { return !prim_; }
  /// Data in `to` layout: `src` itself, or the reordered copy in the scratch buffer.
  const void* in(const void* src, void* workspace = nullptr);
  /// Where a producer writing in `from` layout should write so that `finish(dst)` leaves `dst` in `to`.
  void* out(void* dst, void* workspace = nullptr) { return identity() ? dst : scratch(workspace); }
  void finish(void* dst, void* workspace = nullptr);
  /// Reorder from src (in `from`) into dst (in `to`), copying when they agree.
  void run(const void* src, void* dst);

 private:
  friend class workspace_relayouts;
  void* scratch(void* workspace);
  cpu_backend* be_ = nullptr;
  md from_, to_;
  std::unique_ptr<dnnl::reorder> prim_;
  device_buffer scratch_;
  std::size_t workspace_offset_ = SIZE_MAX;  // SIZE_MAX: the scratch is scratch_
};

/// Relayouts that a kernel redoes on every call and never keeps between calls (a convolution's
/// weights in its forward and backward layouts and its weight gradient), laid out one after the
/// other in the kernel's workspace: the model allocates one workspace of the largest kernel's need
/// for all (kernels run one at a time), instead of every kernel holding its own copies (270 MiB
/// for ResNet-50's 53 convolutions). bytes() is what they take (add it to workspace_bytes()).
class workspace_relayouts {
 public:
  explicit workspace_relayouts(cpu_backend& be) : be_(be) {}
  relayout make(const md& from, const md& to);
  std::int64_t bytes() const { return static_cast<std::int64_t>(bytes_); }

 private:
  cpu_backend& be_;
  std::size_t bytes_ = 0;
};

class cpu_kernel : public kernel {
 public:
  cpu_kernel(cpu_backend& be, const swap::graph& g, int op) : be_(be), g_(g), op_(op) {}
  std::int64_t output_bytes(int i) const override {
    return static_cast<std::int64_t>(be_.layout(out_tensor(i)).get_size());
  }

 protected:
  const swap::op& op() const { return g_.ops[static_cast<std::size_t>(op_)]; }
  int in_tensor(int i) const { return op().inputs.at(static_cast<std::size_t>(i)); }
  int out_tensor(int i) const { return op().outputs.at(static_cast<std::size_t>(i)); }
  const std::vector<std::int64_t>& in_shape(int i) const { return g_.tensors[in_tensor(i)].shape; }
  const std::vector<std::int64_t>& out_shape(int i) const { return g_.tensors[out_tensor(i)].shape; }
  const md& in_md(int i) const { return be_.layout(in_tensor(i)); }
  void set_out_md(int i, const md& d) { be_.set_layout(out_tensor(i), d); }
  std::string what(const char* part) const { return op().name + "/" + part; }
  void exec(dnnl::primitive& p, const std::unordered_map<int, dnnl::memory>& args) { p.execute(be_.strm, args); }
  dnnl::memory mem(const md& d, const void* p) const { return dnnl::memory(d, be_.eng, const_cast<void*>(p)); }
  void wait() { be_.strm.wait(); }

  cpu_backend& be_;
  const swap::graph& g_;
  int op_;
};

std::int64_t numel(const std::vector<std::int64_t>& s);
md any_md(const std::vector<std::int64_t>& shape);
md strided_md(dims d, dims strides);
/// Throws toru::error(invalid_argument) "op '<name>' (<type>): <what>".
[[noreturn]] void bad(const swap::op& o, const std::string& what);

/// Spatial geometry shared by convolution and pooling: right padding follows from the output extent
/// (covers PyTorch's ceil_mode and ONNX's asymmetric pads alike).
struct geometry {
  dims kernel, stride, dilation, pad_l, pad_r;  // dilation in oneDNN's convention (0 = dense)
};

geometry make_geometry(const swap::op& o, const std::vector<std::int64_t>& in, const std::vector<std::int64_t>& out,
                       const std::vector<std::int64_t>& kernel);

std::unique_ptr<kernel> make_linear(cpu_backend& be, const swap::graph& g, int op);
std::unique_ptr<kernel> make_conv(cpu_backend& be, const swap::graph& g, int op);
/// The ReLU op that batch-norm op `bn` runs inside itself (oneDNN's fuse_norm_relu: one pass
/// instead of two forward and backward), or -1. Only where the batch norm's output is read by that
/// ReLU alone, and with model_options::in_place_relu (read_tensor() of the batch norm's output
/// then returns the ReLU's, as for a ReLU in place). The ReLU's own kernel passes data through.
int fused_relu_of(const swap::graph& g, int bn, const model_options& options);
std::unique_ptr<kernel> make_batchnorm(cpu_backend& be, const swap::graph& g, int op, bool fuse_relu);
/// A ReLU run inside the batch norm before it: its input and its gradient passed through.
std::unique_ptr<kernel> make_fused_relu(cpu_backend& be, const swap::graph& g, int op);
std::unique_ptr<kernel> make_eltwise(cpu_backend& be, const swap::graph& g, int op, dnnl::algorithm alg,
                                     float alpha = 0, float beta = 0);
std::unique_ptr<kernel> make_hardsigmoid(cpu_backend& be, const swap::graph& g, int op);
std::unique_ptr<kernel> make_clip(cpu_backend& be, const swap::graph& g, int op);
std::unique_ptr<kernel> make_mul(cpu_backend& be, const swap::graph& g, int op);
std::unique_ptr<kernel> make_pad(cpu_backend& be, const swap::graph& g, int op);
std::unique_ptr<kernel> make_pool(cpu_backend& be, const swap::graph& g, int op, bool max);
std::unique_ptr<kernel> make_add(cpu_backend& be, const swap::graph& g, int op);
std::unique_ptr<kernel> make_concat(cpu_backend& be, const swap::graph& g, int op);
std::unique_ptr<kernel> make_reshape(cpu_backend& be, const swap::graph& g, int op);
std::unique_ptr<kernel> make_dropout(cpu_backend& be, const swap::graph& g, int op);
std::unique_ptr<kernel> make_layernorm(cpu_backend& be, const swap::graph& g, int op);
std::unique_ptr<kernel> make_softmax(cpu_backend& be, const swap::graph& g, int op);
std::unique_ptr<kernel> make_add_broadcast(cpu_backend& be, const swap::graph& g, int op);
std::unique_ptr<kernel> make_expand(cpu_backend& be, const swap::graph& g, int op);
std::unique_ptr<kernel> make_reduce_mean(cpu_backend& be, const swap::graph& g, int op);
std::unique_ptr<kernel> make_matmul(cpu_backend& be, const swap::graph& g, int op);
std::unique_ptr<kernel> make_transpose(cpu_backend& be, const swap::graph& g, int op);
std::unique_ptr<kernel> make_slice(cpu_backend& be, const swap::graph& g, int op);
std::unique_ptr<kernel> make_gather(cpu_backend& be, const swap::graph& g, int op);
std::unique_ptr<kernel> make_loss(cpu_backend& be, const swap::graph& g, int op);

}  // namespace toru::train::detail::cpu
