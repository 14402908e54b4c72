// SPDX-License-Identifier: BSD-3-Clause
// Fully connected layer on oneDNN matmul.
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cpu.hpp"
#include "toru/core/error.hpp"

namespace toru::train::detail::cpu {

namespace {

using prop = dnnl::prop_kind;

// linear: y[M, N] = x[M, K] W^T + b, W stored [N, K] (trans_b, PyTorch) or [K, N]; leading input
// axes flatten into M. Three matmuls: forward, data gradient, weight gradient; the bias gradient is
// a matmul with a row of ones (column sums of dY).
class linear final : public cpu_kernel {
 public:
  linear(cpu_backend& be, const swap::graph& g, int op) : cpu_kernel(be, g, op) {
    const auto& o = this->op();
    const auto& xs = in_shape(0);
    if (o.inputs.size() < 2) bad(o, "expected inputs (x, weight[, bias])");
    const auto& ws = in_shape(1);
    if (ws.size() != 2) bad(o, fmt::format("expected a 2-D weight, got [{}]", fmt::join(ws, ",")));
    trans_b_ = o.attr.trans_b;
    K_ = xs.back();
    N_ = trans_b_ ? ws[0] : ws[1];
    if ((trans_b_ ? ws[1] : ws[0]) != K_)
      bad(o, fmt::format("weight [{}] does not match {} input features{}", fmt::join(ws, ","), K_,
                         trans_b_ ? " (weight stored [out, in])" : " (weight stored [in, out])"));
    M_ = numel(xs) / K_;
    has_bias_ = o.inputs.size() > 2;
    if (has_bias_ && numel(in_shape(2)) != N_) bad(o, fmt::format("expected a bias of {} values", N_));
    if (numel(out_shape(0)) != M_ * N_) bad(o, "output shape does not match the input and weight");
    x_plain_ = relayout(be, in_md(0), plain_md(xs), what("x"));
    dx_ = relayout(be, plain_md(xs), in_md(0), what("dx"));
    set_out_md(0, plain_md(out_shape(0)));

    const md x = plain_md({M_, K_}), y = plain_md({M_, N_});
    const md w = trans_b_ ? strided_md({K_, N_}, {1, K_}) : strided_md({K_, N_}, {N_, 1});
    const md b = plain_md({1, N_});
    fwd_ = has_bias_ ? dnnl::matmul(dnnl::matmul::primitive_desc(dnnl::matmul::desc(x, w, b, y), be.eng))
                     : dnnl::matmul(dnnl::matmul::primitive_desc(dnnl::matmul::desc(x, w, y), be.eng));
    // dX[M, K] = dY[M, N] W[N, K]
    const md wt = trans_b_ ? strided_md({N_, K_}, {K_, 1}) : strided_md({N_, K_}, {1, N_});
    bwd_data_ = dnnl::matmul(dnnl::matmul::primitive_desc(dnnl::matmul::desc(y, wt, x), be.eng));
    // dW: trans_b: [N, K] = dY^T[N, M] X[M, K]; else [K, N] = X^T[K, M] dY[M, N]
    if (trans_b_)
      bwd_w_ = dnnl::matmul(dnnl::matmul::primitive_desc(
          dnnl::matmul::desc(strided_md({N_, M_}, {1, N_}), x, plain_md({N_, K_})), be.eng));
    else
      bwd_w_ = dnnl::matmul(dnnl::matmul::primitive_desc(
          dnnl::matmul::desc(strided_md({K_, M_}, {1, K_}), y, plain_md({K_, N_})), be.eng));
    if (has_bias_) {
      ones_ = device_buffer(be.memory(), static_cast<std::size_t>(M_) * 4, what("ones"));
      std::fill(ones_.as<float>(), ones_.as<float>() + M_, 1.0f);
      bwd_b_ = dnnl::matmul(dnnl::matmul::primitive_desc(dnnl::matmul::desc(plain_md({1, M_}), y, b), be.eng));
    }
  }

  void forward(const forward_args& a) override {
    be_.set_threads();
    const void* x = x_plain_.in(a.in[0]);
    std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, mem(plain_md({M_, K_}), x)},
                                               {DNNL_ARG_WEIGHTS, mem(w_md(), a.in[1])},
                                               {DNNL_ARG_DST, mem(plain_md({M_, N_}), a.out[0])}};
    if (has_bias_) args.emplace(DNNL_ARG_BIAS, mem(plain_md({1, N_}), a.in[2]));
    exec(fwd_, args);
    wait();
  }

  void backward(const backward_args& a) override {
    be_.set_threads();
    const md y = plain_md({M_, N_}), x = plain_md({M_, K_});
    if (a.d_in[0]) {
      const md wt = trans_b_ ? strided_md({N_, K_}, {K_, 1}) : strided_md({N_, K_}, {1, N_});
      void* dx = dx_.out(a.d_in[0]);
      exec(bwd_data_,
           {{DNNL_ARG_SRC, mem(y, a.d_out[0])}, {DNNL_ARG_WEIGHTS, mem(wt, a.in[1])}, {DNNL_ARG_DST, mem(x, dx)}});
      wait();
      dx_.finish(a.d_in[0]);
    }
    if (a.d_in[1]) {
      const void* xin = x_plain_.in(a.in[0]);
      if (trans_b_)
        exec(bwd_w_, {{DNNL_ARG_SRC, mem(strided_md({N_, M_}, {1, N_}), a.d_out[0])},
                      {DNNL_ARG_WEIGHTS, mem(x, xin)},
                      {DNNL_ARG_DST, mem(plain_md({N_, K_}), a.d_in[1])}});
      else
        exec(bwd_w_, {{DNNL_ARG_SRC, mem(strided_md({K_, M_}, {1, K_}), xin)},
                      {DNNL_ARG_WEIGHTS, mem(y, a.d_out[0])},
                      {DNNL_ARG_DST, mem(plain_md({K_, N_}), a.d_in[1])}});
    }
    if (has_bias_ && a.d_in[2])
      exec(bwd_b_, {{DNNL_ARG_SRC, mem(plain_md({1, M_}), ones_.data())},
                    {DNNL_ARG_WEIGHTS, mem(y, a.d_out[0])},
                    {DNNL_ARG_DST, mem(plain_md({1, N_}), a.d_in[2])}});
    wait();
  }
  // dx needs the weights, dW the input; neither reads y (a ViT's projections feed reshapes and
  // residual adds, whose outputs are all that later backwards need).
  bool backward_reads_input(int i) const override { return i != 2; }
  bool backward_reads_output(int) const override { return false; }

 private:
  md w_md() const { return trans_b_ ? strided_md({K_, N_}, {1, K_}) : strided_md({K_, N_}, {N_, 1}); }

  bool trans_b_ = true, has_bias_ = false;
  std::int64_t M_ = 0, K_ = 0, N_ = 0;
  relayout x_plain_, dx_;
  dnnl::matmul fwd_, bwd_data_, bwd_w_, bwd_b_;
  device_buffer ones_;
};

}  // namespace

std::unique_ptr<kernel> make_linear(cpu_backend& be, const swap::graph& g, int op) {
  return std::make_unique<linear>(be, g, op);
}

}  // namespace toru::train::detail::cpu
