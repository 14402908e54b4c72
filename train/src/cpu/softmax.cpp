// SPDX-License-Identifier: BSD-3-Clause
// Softmax on oneDNN.
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cpu.hpp"
#include "toru/core/error.hpp"

namespace toru::train::detail::cpu {

namespace {

using prop = dnnl::prop_kind;

// Softmax along an axis (plain layout).
class softmax final : public cpu_kernel {
 public:
  softmax(cpu_backend& be, const swap::graph& g, int op) : cpu_kernel(be, g, op) {
    const auto& xs = in_shape(0);
    const std::int64_t ax = this->op().attr.axis;
    axis_ = static_cast<int>(ax < 0 ? static_cast<std::int64_t>(xs.size()) + ax : ax);
    const md x = plain_md(xs);
    fwd_pd_ =
        dnnl::softmax_forward::primitive_desc(dnnl::softmax_forward::desc(prop::forward_training, x, axis_), be.eng);
    bwd_pd_ = dnnl::softmax_backward::primitive_desc(dnnl::softmax_backward::desc(x, x, axis_), be.eng, fwd_pd_);
    fwd_ = dnnl::softmax_forward(fwd_pd_);
    bwd_ = dnnl::softmax_backward(bwd_pd_);
    to_plain_ = relayout(be, in_md(0), x, what("x"));
    from_plain_ = relayout(be, x, in_md(0), what("dx"));
    set_out_md(0, x);
  }
  void forward(const forward_args& a) override {
    be_.set_threads();
    const md x = plain_md(in_shape(0));
    exec(fwd_, {{DNNL_ARG_SRC, mem(x, to_plain_.in(a.in[0]))}, {DNNL_ARG_DST, mem(x, a.out[0])}});
    wait();
  }
  void backward(const backward_args& a) override {
    if (!a.d_in[0]) return;
    be_.set_threads();
    const md x = plain_md(in_shape(0));
    exec(bwd_, {{DNNL_ARG_DST, mem(x, a.out[0])},
                {DNNL_ARG_DIFF_DST, mem(x, a.d_out[0])},
                {DNNL_ARG_DIFF_SRC, mem(x, from_plain_.out(a.d_in[0]))}});
    wait();
    from_plain_.finish(a.d_in[0]);
  }
  bool backward_reads_input(int) const override { return false; }

 private:
  int axis_ = 1;
  dnnl::softmax_forward::primitive_desc fwd_pd_;
  dnnl::softmax_backward::primitive_desc bwd_pd_;
  dnnl::softmax_forward fwd_;
  dnnl::softmax_backward bwd_;
  relayout to_plain_, from_plain_;
};

}  // namespace

std::unique_ptr<kernel> make_softmax(cpu_backend& be, const swap::graph& g, int op) {
  return std::make_unique<softmax>(be, g, op);
}

}  // namespace toru::train::detail::cpu
