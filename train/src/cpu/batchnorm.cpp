// SPDX-License-Identifier: BSD-3-Clause
// Batch normalization on oneDNN.
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cpu.hpp"
#include "model_impl.hpp"
#include "toru/core/error.hpp"

namespace toru::train::detail::cpu {

namespace {

using prop = dnnl::prop_kind;

// Batch normalization over axis 1. Training: batch statistics, running statistics updated with
// PyTorch's rule (unbiased variance); inference: running statistics. With a fused ReLU the output
// is max(0, y) and the backward masks the gradient by the forward's workspace (kept in the state).
class batchnorm final : public cpu_kernel {
 public:
  batchnorm(cpu_backend& be, const swap::graph& g, int op, bool fuse_relu) : cpu_kernel(be, g, op) {
    const auto& o = this->op();
    const auto& xs = in_shape(0);
    if (xs.size() < 2) bad(o, "expected an input [N, C, ...]");
    C_ = xs[1];
    count_ = numel(xs) / C_;
    if (o.inputs.size() < 3 || numel(in_shape(1)) != C_ || numel(in_shape(2)) != C_)
      bad(o, fmt::format("expected inputs (x, scale[{}], shift[{}][, running mean, running variance])", C_, C_));
    eps_ = static_cast<float>(o.attr.epsilon);
    momentum_ = static_cast<float>(o.attr.momentum);
    const md& x = in_md(0);
    using nf = dnnl::normalization_flags;
    const auto flags = nf::use_scale | nf::use_shift | (fuse_relu ? nf::fuse_norm_relu : nf::none);
    train_pd_ = dnnl::batch_normalization_forward::primitive_desc(
        dnnl::batch_normalization_forward::desc(prop::forward_training, x, eps_, flags), be.eng);
    infer_pd_ = dnnl::batch_normalization_forward::primitive_desc(
        dnnl::batch_normalization_forward::desc(prop::forward_inference, x, eps_, flags | nf::use_global_stats),
        be.eng);
    bwd_pd_ = dnnl::batch_normalization_backward::primitive_desc(
        dnnl::batch_normalization_backward::desc(prop::backward, x, x, eps_, flags), be.eng, train_pd_);
    train_ = dnnl::batch_normalization_forward(train_pd_);
    infer_ = dnnl::batch_normalization_forward(infer_pd_);
    bwd_ = dnnl::batch_normalization_backward(bwd_pd_);
    set_out_md(0, train_pd_.dst_desc());
    if (fuse_relu) workspace_bytes_ = (train_pd_.workspace_desc().get_size() + 63) / 64 * 64;
    dy_ = relayout(be, train_pd_.dst_desc(), bwd_pd_.diff_dst_desc(), what("dy"));
    dx_ = relayout(be, bwd_pd_.diff_src_desc(), x, what("dx"));
    if (o.inputs.size() >= 5) {
      mean_init_ = o.inputs[3];
      var_init_ = o.inputs[4];
    }
  }
  // Batch mean, biased variance; the fused ReLU's mask after them (64-byte aligned: 2 C floats are).
  std::int64_t state_bytes() const override { return stats_bytes() + workspace_bytes_; }
  std::vector<buffer_spec> buffer_specs() const override {
    // Named after the graph's running-statistics tensors where it has them (ONNX: "bn1.running_mean").
    auto name = [&](int t, const char* suffix) { return t >= 0 ? g_.tensors[t].name : op().name + suffix; };
    return {{name(mean_init_, "/running_mean"), C_, 0.0f, mean_init_},
            {name(var_init_, "/running_var"), C_, 1.0f, var_init_}};
  }

  void forward(const forward_args& a) override {
    be_.set_threads();
    const md c = plain_md({C_});
    const md& x = in_md(0);
    auto* st = static_cast<float*>(a.state);
    if (a.step.training) {
      std::unordered_map<int, dnnl::memory> args{
          {DNNL_ARG_SRC, mem(x, a.in[0])},      {DNNL_ARG_SCALE, mem(c, a.in[1])},
          {DNNL_ARG_SHIFT, mem(c, a.in[2])},    {DNNL_ARG_MEAN, mem(c, st)},
          {DNNL_ARG_VARIANCE, mem(c, st + C_)}, {DNNL_ARG_DST, mem(train_pd_.dst_desc(), a.out[0])}};
      if (workspace_bytes_) args.emplace(DNNL_ARG_WORKSPACE, mem(train_pd_.workspace_desc(), workspace(a.state)));
      exec(train_, args);
      wait();
      float* rm = a.buffers[0];
      float* rv = a.buffers[1];
      const float unbias = count_ > 1 ? static_cast<float>(count_) / static_cast<float>(count_ - 1) : 1.0f;
      for (std::int64_t i = 0; i < C_; ++i) {
        rm[i] = (1 - momentum_) * rm[i] + momentum_ * st[i];
        rv[i] = (1 - momentum_) * rv[i] + momentum_ * st[C_ + i] * unbias;
      }
    } else {
      exec(infer_, {{DNNL_ARG_SRC, mem(x, a.in[0])},
                    {DNNL_ARG_SCALE, mem(c, a.in[1])},
                    {DNNL_ARG_SHIFT, mem(c, a.in[2])},
                    {DNNL_ARG_MEAN, mem(c, a.buffers[0])},
                    {DNNL_ARG_VARIANCE, mem(c, a.buffers[1])},
                    {DNNL_ARG_DST, mem(infer_pd_.dst_desc(), a.out[0])}});
      wait();
    }
  }

  void backward(const backward_args& a) override {
    be_.set_threads();
    const md c = plain_md({C_});
    auto* st = static_cast<float*>(a.state);
    // The primitive writes all three gradients; park the ones nobody asked for.
    std::vector<float> spare(a.d_in[1] && a.d_in[2] ? 0 : 2 * static_cast<std::size_t>(C_));
    void* dscale = a.d_in[1] ? a.d_in[1] : spare.data();
    void* dshift = a.d_in[2] ? a.d_in[2] : spare.data() + (spare.empty() ? 0 : C_);
    void* dx = nullptr;
    device_buffer tmp;
    if (a.d_in[0]) {
      dx = dx_.out(a.d_in[0]);
    } else {
      tmp = device_buffer(be_.memory(), bwd_pd_.diff_src_desc().get_size(), what("dx_unused"));
      dx = tmp.data();
    }
    std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, mem(in_md(0), a.in[0])},
                                               {DNNL_ARG_MEAN, mem(c, st)},
                                               {DNNL_ARG_VARIANCE, mem(c, st + C_)},
                                               {DNNL_ARG_DIFF_DST, mem(bwd_pd_.diff_dst_desc(), dy_.in(a.d_out[0]))},
                                               {DNNL_ARG_SCALE, mem(c, a.in[1])},
                                               {DNNL_ARG_SHIFT, mem(c, a.in[2])},
                                               {DNNL_ARG_DIFF_SRC, mem(bwd_pd_.diff_src_desc(), dx)},
                                               {DNNL_ARG_DIFF_SCALE, mem(c, dscale)},
                                               {DNNL_ARG_DIFF_SHIFT, mem(c, dshift)}};
    if (workspace_bytes_) args.emplace(DNNL_ARG_WORKSPACE, mem(train_pd_.workspace_desc(), workspace(a.state)));
    exec(bwd_, args);
    wait();
    if (a.d_in[0]) dx_.finish(a.d_in[0]);
  }
  bool backward_reads_output(int) const override { return false; }

 private:
  std::int64_t stats_bytes() const { return (2 * C_ * 4 + 63) / 64 * 64; }
  void* workspace(void* state) const { return static_cast<char*>(state) + stats_bytes(); }

  std::int64_t C_ = 0, count_ = 0, workspace_bytes_ = 0;
  float eps_ = 1e-5f, momentum_ = 0.1f;
  int mean_init_ = -1, var_init_ = -1;
  dnnl::batch_normalization_forward::primitive_desc train_pd_, infer_pd_;
  dnnl::batch_normalization_backward::primitive_desc bwd_pd_;
  dnnl::batch_normalization_forward train_, infer_;
  dnnl::batch_normalization_backward bwd_;
  relayout dy_, dx_;
};

}  // namespace

int fused_relu_of(const swap::graph& g, int bn, const model_options& options) {
  const auto& o = g.ops[static_cast<std::size_t>(bn)];
  if (!options.in_place_relu || (o.type != "batchnorm" && o.type != "BatchNormalization") || o.outputs.size() != 1)
    return -1;
  const auto& y = g.tensors[static_cast<std::size_t>(o.outputs[0])];
  if (y.consumers.size() != 1 || y.type != swap::dtype::f32) return -1;
  const int r = y.consumers[0];
  const auto& relu = g.ops[static_cast<std::size_t>(r)];
  return is_relu(relu.type) && relu.inputs.size() == 1 && relu.outputs.size() == 1 ? r : -1;
}

std::unique_ptr<kernel> make_batchnorm(cpu_backend& be, const swap::graph& g, int op, bool fuse_relu) {
  return std::make_unique<batchnorm>(be, g, op, fuse_relu);
}

}  // namespace toru::train::detail::cpu
