// SPDX-License-Identifier: BSD-3-Clause
// Convolution on oneDNN.
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cpu.hpp"
#include "toru/core/error.hpp"

namespace toru::train::detail::cpu {

namespace {

using prop = dnnl::prop_kind;

// Convolution (any groups, dilation, optional bias), 1-3 spatial axes.
class conv final : public cpu_kernel {
 public:
  conv(cpu_backend& be, const swap::graph& g, int op) : cpu_kernel(be, g, op) {
    const auto& o = this->op();
    const auto& xs = in_shape(0);
    const auto& ws = in_shape(1);
    const auto& ys = out_shape(0);
    if (xs.size() < 3 || xs.size() > 5 || ws.size() != xs.size())
      bad(o, fmt::format("expected [N, C, spatial...] input and weight of equal rank, got [{}] and [{}]",
                         fmt::join(xs, ","), fmt::join(ws, ",")));
    groups_ = o.attr.groups;
    const std::int64_t cin = xs[1], cout = ws[0];
    if (groups_ <= 0 || cin % groups_ || cout % groups_ || ws[1] != cin / groups_)
      bad(o,
          fmt::format("weight [{}] does not match {} input channels in {} groups", fmt::join(ws, ","), cin, groups_));
    has_bias_ = o.inputs.size() > 2;
    std::vector<std::int64_t> k(ws.begin() + 2, ws.end());
    geo_ = make_geometry(o, xs, ys, k);
    // Plain weights: [OC, IC/G, k...], viewed as [G, OC/G, IC/G, k...] when grouped.
    std::vector<std::int64_t> wdims = ws;
    if (groups_ > 1) {
      wdims.insert(wdims.begin(), groups_);
      wdims[1] = cout / groups_;
    }
    w_plain_ = plain_md(wdims);
    const md b_plain = has_bias_ ? plain_md({cout}) : md();
    const auto alg = dnnl::algorithm::convolution_direct;
    const md x_any = any_md(xs), w_any = any_md(wdims), y_any = any_md(ys);
    const md b_any = has_bias_ ? any_md({cout}) : md();
    fwd_pd_ = dnnl::convolution_forward::primitive_desc(
        dnnl::convolution_forward::desc(prop::forward_training, alg, x_any, w_any, b_any, y_any, geo_.stride,
                                        geo_.dilation, geo_.pad_l, geo_.pad_r),
        be.eng);
    bwd_d_pd_ = dnnl::convolution_backward_data::primitive_desc(
        dnnl::convolution_backward_data::desc(alg, x_any, w_any, y_any, geo_.stride, geo_.dilation, geo_.pad_l,
                                              geo_.pad_r),
        be.eng, fwd_pd_);
    bwd_w_pd_ = dnnl::convolution_backward_weights::primitive_desc(
        dnnl::convolution_backward_weights::desc(alg, x_any, w_any, b_any, y_any, geo_.stride, geo_.dilation,
                                                 geo_.pad_l, geo_.pad_r),
        be.eng, fwd_pd_);
    fwd_ = dnnl::convolution_forward(fwd_pd_);
    bwd_d_ = dnnl::convolution_backward_data(bwd_d_pd_);
    bwd_w_ = dnnl::convolution_backward_weights(bwd_w_pd_);
    set_out_md(0, fwd_pd_.dst_desc());
    x_ = relayout(be, in_md(0), fwd_pd_.src_desc(), what("x"));
    workspace_relayouts weights(be);  // redone every call: slices of the shared workspace
    w_ = weights.make(w_plain_, fwd_pd_.weights_desc());
    b_ = relayout(be, b_plain.is_zero() ? fwd_pd_.bias_desc() : b_plain, fwd_pd_.bias_desc(), what("b"));
    xw_ = relayout(be, in_md(0), bwd_w_pd_.src_desc(), what("x_bwd"));
    dyd_ = relayout(be, fwd_pd_.dst_desc(), bwd_d_pd_.diff_dst_desc(), what("dy_data"));
    dyw_ = relayout(be, fwd_pd_.dst_desc(), bwd_w_pd_.diff_dst_desc(), what("dy_weights"));
    wd_ = weights.make(w_plain_, bwd_d_pd_.weights_desc());
    dx_ = relayout(be, bwd_d_pd_.diff_src_desc(), in_md(0), what("dx"));
    dw_ = weights.make(bwd_w_pd_.diff_weights_desc(), w_plain_);
    workspace_bytes_ = weights.bytes();
    if (has_bias_) db_ = relayout(be, bwd_w_pd_.diff_bias_desc(), b_plain, what("db"));
  }

  void forward(const forward_args& a) override {
    be_.set_threads();
    std::unordered_map<int, dnnl::memory> args{
        {DNNL_ARG_SRC, mem(fwd_pd_.src_desc(), x_.in(a.in[0]))},
        {DNNL_ARG_WEIGHTS, mem(fwd_pd_.weights_desc(), w_.in(a.in[1], a.workspace))},
        {DNNL_ARG_DST, mem(fwd_pd_.dst_desc(), a.out[0])}};
    if (has_bias_) args.emplace(DNNL_ARG_BIAS, mem(fwd_pd_.bias_desc(), b_.in(a.in[2])));
    exec(fwd_, args);
    wait();
  }

  void backward(const backward_args& a) override {
    be_.set_threads();
    if (a.d_in[0]) {
      void* dx = dx_.out(a.d_in[0]);
      exec(bwd_d_, {{DNNL_ARG_DIFF_DST, mem(bwd_d_pd_.diff_dst_desc(), dyd_.in(a.d_out[0]))},
                    {DNNL_ARG_WEIGHTS, mem(bwd_d_pd_.weights_desc(), wd_.in(a.in[1], a.workspace))},
                    {DNNL_ARG_DIFF_SRC, mem(bwd_d_pd_.diff_src_desc(), dx)}});
      wait();
      dx_.finish(a.d_in[0]);
    }
    if (a.d_in[1]) {
      std::unordered_map<int, dnnl::memory> args{
          {DNNL_ARG_SRC, mem(bwd_w_pd_.src_desc(), xw_.in(a.in[0]))},
          {DNNL_ARG_DIFF_DST, mem(bwd_w_pd_.diff_dst_desc(), dyw_.in(a.d_out[0]))},
          {DNNL_ARG_DIFF_WEIGHTS, mem(bwd_w_pd_.diff_weights_desc(), dw_.out(a.d_in[1], a.workspace))}};
      if (has_bias_) args.emplace(DNNL_ARG_DIFF_BIAS, mem(bwd_w_pd_.diff_bias_desc(), db_.out(a.d_in[2])));
      exec(bwd_w_, args);
      wait();
      dw_.finish(a.d_in[1], a.workspace);
      if (has_bias_) db_.finish(a.d_in[2]);
    }
  }
  bool backward_reads_output(int) const override { return false; }
  std::int64_t workspace_bytes() const override { return workspace_bytes_; }

 private:
  std::int64_t workspace_bytes_ = 0;
  std::int64_t groups_ = 1;
  bool has_bias_ = false;
  geometry geo_;
  md w_plain_;
  dnnl::convolution_forward::primitive_desc fwd_pd_;
  dnnl::convolution_backward_data::primitive_desc bwd_d_pd_;
  dnnl::convolution_backward_weights::primitive_desc bwd_w_pd_;
  dnnl::convolution_forward fwd_;
  dnnl::convolution_backward_data bwd_d_;
  dnnl::convolution_backward_weights bwd_w_;
  relayout x_, w_, b_, xw_, dyd_, dyw_, wd_, dx_, dw_, db_;
};

}  // namespace

std::unique_ptr<kernel> make_conv(cpu_backend& be, const swap::graph& g, int op) {
  return std::make_unique<conv>(be, g, op);
}

}  // namespace toru::train::detail::cpu
