// SPDX-License-Identifier: BSD-3-Clause
// Layer normalization on oneDNN.
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cpu.hpp"
#include "toru/core/error.hpp"

namespace toru::train::detail::cpu {

namespace {

using prop = dnnl::prop_kind;

// Layer normalization over the last axis with scale and shift [H].
class layernorm final : public cpu_kernel {
 public:
  layernorm(cpu_backend& be, const swap::graph& g, int op) : cpu_kernel(be, g, op) {
    const auto& o = this->op();
    const auto& xs = in_shape(0);
    H_ = xs.back();
    rows_ = numel(xs) / H_;
    if (o.inputs.size() < 3 || numel(in_shape(1)) != H_ || numel(in_shape(2)) != H_)
      bad(o, fmt::format("expected inputs (x, scale[{}], shift[{}])", H_, H_));
    const md x = plain_md(xs);
    using nf = dnnl::normalization_flags;
    const auto flags = nf::use_scale | nf::use_shift;
    const float eps = static_cast<float>(o.attr.epsilon);
    fwd_pd_ = dnnl::layer_normalization_forward::primitive_desc(
        dnnl::layer_normalization_forward::desc(prop::forward_training, x, eps, flags), be.eng);
    bwd_pd_ = dnnl::layer_normalization_backward::primitive_desc(
        dnnl::layer_normalization_backward::desc(prop::backward, x, x, eps, flags), be.eng, fwd_pd_);
    fwd_ = dnnl::layer_normalization_forward(fwd_pd_);
    bwd_ = dnnl::layer_normalization_backward(bwd_pd_);
    to_plain_ = relayout(be, in_md(0), x, what("x"));
    from_plain_ = relayout(be, x, in_md(0), what("dx"));
    set_out_md(0, x);
  }
  std::int64_t state_bytes() const override { return 2 * rows_ * 4; }
  void forward(const forward_args& a) override {
    be_.set_threads();
    auto* st = static_cast<float*>(a.state);
    const md x = plain_md(in_shape(0)), c = plain_md({H_});
    exec(fwd_, {{DNNL_ARG_SRC, mem(x, to_plain_.in(a.in[0]))},
                {DNNL_ARG_SCALE, mem(c, a.in[1])},
                {DNNL_ARG_SHIFT, mem(c, a.in[2])},
                {DNNL_ARG_MEAN, mem(fwd_pd_.mean_desc(), st)},
                {DNNL_ARG_VARIANCE, mem(fwd_pd_.variance_desc(), st + rows_)},
                {DNNL_ARG_DST, mem(x, a.out[0])}});
    wait();
  }
  void backward(const backward_args& a) override {
    be_.set_threads();
    auto* st = static_cast<float*>(a.state);
    const md x = plain_md(in_shape(0)), c = plain_md({H_});
    std::vector<float> spare(2 * static_cast<std::size_t>(H_));
    device_buffer tmp;
    void* dx = nullptr;
    if (a.d_in[0]) {
      dx = from_plain_.out(a.d_in[0]);
    } else {
      tmp = device_buffer(be_.memory(), x.get_size(), what("dx_unused"));
      dx = tmp.data();
    }
    exec(bwd_, {{DNNL_ARG_SRC, mem(x, to_plain_.in(a.in[0]))},
                {DNNL_ARG_MEAN, mem(fwd_pd_.mean_desc(), st)},
                {DNNL_ARG_VARIANCE, mem(fwd_pd_.variance_desc(), st + rows_)},
                {DNNL_ARG_DIFF_DST, mem(x, a.d_out[0])},
                {DNNL_ARG_SCALE, mem(c, a.in[1])},
                {DNNL_ARG_SHIFT, mem(c, a.in[2])},
                {DNNL_ARG_DIFF_SRC, mem(x, dx)},
                {DNNL_ARG_DIFF_SCALE, mem(c, a.d_in[1] ? a.d_in[1] : spare.data())},
                {DNNL_ARG_DIFF_SHIFT, mem(c, a.d_in[2] ? a.d_in[2] : spare.data() + H_)}});
    wait();
    if (a.d_in[0]) from_plain_.finish(a.d_in[0]);
  }
  bool backward_reads_output(int) const override { return false; }

 private:
  std::int64_t H_ = 0, rows_ = 0;
  dnnl::layer_normalization_forward::primitive_desc fwd_pd_;
  dnnl::layer_normalization_backward::primitive_desc bwd_pd_;
  dnnl::layer_normalization_forward fwd_;
  dnnl::layer_normalization_backward bwd_;
  relayout to_plain_, from_plain_;
};

}  // namespace

std::unique_ptr<kernel> make_layernorm(cpu_backend& be, const swap::graph& g, int op) {
  return std::make_unique<layernorm>(be, g, op);
}

}  // namespace toru::train::detail::cpu
