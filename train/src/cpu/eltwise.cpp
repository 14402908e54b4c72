// SPDX-License-Identifier: BSD-3-Clause
// Elementwise layers: activations (oneDNN eltwise) and dropout.
#include <omp.h>

#include <algorithm>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cpu.hpp"
#include "random.hpp"
#include "toru/core/error.hpp"

namespace toru::train::detail::cpu {

namespace {

using prop = dnnl::prop_kind;

// Elementwise activations, in the layout of their input.
class eltwise final : public cpu_kernel {
 public:
  eltwise(cpu_backend& be, const swap::graph& g, int op, dnnl::algorithm alg, float alpha, float beta)
      : cpu_kernel(be, g, op), alg_(alg) {
    const md& x = in_md(0);
    fwd_pd_ = dnnl::eltwise_forward::primitive_desc(
        dnnl::eltwise_forward::desc(prop::forward_training, alg, x, alpha, beta), be.eng);
    bwd_pd_ =
        dnnl::eltwise_backward::primitive_desc(dnnl::eltwise_backward::desc(alg, x, x, alpha, beta), be.eng, fwd_pd_);
    fwd_ = dnnl::eltwise_forward(fwd_pd_);
    bwd_ = dnnl::eltwise_backward(bwd_pd_);
    set_out_md(0, fwd_pd_.dst_desc());
    dd_ = relayout(be, fwd_pd_.dst_desc(), bwd_pd_.diff_dst_desc(), what("dy"));
    dx_ = relayout(be, bwd_pd_.diff_src_desc(), x, what("dx"));
  }
  void forward(const forward_args& a) override {
    be_.set_threads();
    exec(fwd_, {{DNNL_ARG_SRC, mem(in_md(0), a.in[0])}, {DNNL_ARG_DST, mem(fwd_pd_.dst_desc(), a.out[0])}});
    wait();
  }
  void backward(const backward_args& a) override {
    if (!a.d_in[0]) return;
    be_.set_threads();
    void* dx = dx_.out(a.d_in[0]);
    exec(bwd_, {{DNNL_ARG_SRC, mem(in_md(0), a.in[0])},
                {DNNL_ARG_DIFF_DST, mem(bwd_pd_.diff_dst_desc(), dd_.in(a.d_out[0]))},
                {DNNL_ARG_DIFF_SRC, mem(bwd_pd_.diff_src_desc(), dx)}});
    wait();
    dx_.finish(a.d_in[0]);
  }
  bool backward_reads_output(int) const override { return false; }

 private:
  dnnl::algorithm alg_;
  dnnl::eltwise_forward::primitive_desc fwd_pd_;
  dnnl::eltwise_backward::primitive_desc bwd_pd_;
  dnnl::eltwise_forward fwd_;
  dnnl::eltwise_backward bwd_;
  relayout dd_, dx_;
};

// ---------------------------------------------------------------------------------------------
// Dropout with a counter-based mask: keep(element) = u(seed, step, op, global sample, element) >= p,
// kept values scaled by 1/(1-p). Plain layout so that "element" means the sample's plain index.
class dropout final : public cpu_kernel {
 public:
  dropout(cpu_backend& be, const swap::graph& g, int op) : cpu_kernel(be, g, op) {
    p_ = this->op().attr.p;
    if (!(p_ >= 0 && p_ < 1)) bad(this->op(), fmt::format("attribute p: expected a probability in [0, 1), got {}", p_));
    to_plain_ = relayout(be, in_md(0), plain_md(in_shape(0)), what("x"));
    from_plain_ = relayout(be, plain_md(in_shape(0)), in_md(0), what("dx"));
    set_out_md(0, plain_md(out_shape(0)));
    count_ = numel(in_shape(0));
    per_sample_ = count_ / in_shape(0)[0];
  }
  std::int64_t state_bytes() const override { return count_ * 4; }  // the scale of each element (0 or 1/(1-p))
  void forward(const forward_args& a) override {
    be_.set_threads();
    const auto* x = static_cast<const float*>(to_plain_.in(a.in[0]));
    auto* y = static_cast<float*>(a.out[0]);
    auto* m = static_cast<float*>(a.state);
    const bool active = a.step.training && p_ > 0;
    const float keep = static_cast<float>(1.0 / (1.0 - p_));
    const auto p = static_cast<float>(p_);
    const std::int64_t per = per_sample_;
    const auto seed = a.step.seed, step = a.step.step;
    const auto op = static_cast<std::uint64_t>(op_);
    const auto first = a.step.first_sample;
#pragma omp parallel for
    for (std::int64_t i = 0; i < count_; ++i) {
      float s = 1.0f;
      if (active) {
        const auto sample = static_cast<std::uint64_t>(first + i / per);
        const float u = uniform01(hash(seed, step, op, sample, static_cast<std::uint64_t>(i % per)));
        s = u >= p ? keep : 0.0f;
      }
      m[i] = s;
      y[i] = x[i] * s;
    }
  }
  void backward(const backward_args& a) override {
    if (!a.d_in[0]) return;
    be_.set_threads();
    const auto* dy = static_cast<const float*>(a.d_out[0]);
    const auto* m = static_cast<const float*>(a.state);
    auto* dx = static_cast<float*>(from_plain_.out(a.d_in[0]));
#pragma omp parallel for simd
    for (std::int64_t i = 0; i < count_; ++i) dx[i] = dy[i] * m[i];
    from_plain_.finish(a.d_in[0]);
  }
  bool backward_reads_input(int) const override { return false; }
  bool backward_reads_output(int) const override { return false; }

 private:
  double p_ = 0;
  std::int64_t count_ = 0, per_sample_ = 1;
  relayout to_plain_, from_plain_;
};

// ---------------------------------------------------------------------------------------------
// HardSigmoid y = clamp(alpha x + beta, 0, 1) (ONNX; PyTorch's hardsigmoid is alpha 1/6, beta 1/2).
// oneDNN 2.6 has no such algorithm. The gradient passes alpha strictly inside the linear region,
// as PyTorch's (-3 < x < 3).
class hardsigmoid final : public cpu_kernel {
 public:
  hardsigmoid(cpu_backend& be, const swap::graph& g, int op) : cpu_kernel(be, g, op) {
    alpha_ = static_cast<float>(this->op().attr.scale);
    beta_ = static_cast<float>(this->op().attr.shift);
    to_plain_ = relayout(be, in_md(0), plain_md(in_shape(0)), what("x"));
    from_plain_ = relayout(be, plain_md(in_shape(0)), in_md(0), what("dx"));
    set_out_md(0, plain_md(out_shape(0)));
    count_ = numel(in_shape(0));
  }
  void forward(const forward_args& a) override {
    be_.set_threads();
    const auto* x = static_cast<const float*>(to_plain_.in(a.in[0]));
    auto* y = static_cast<float*>(a.out[0]);
    const float al = alpha_, be = beta_;
#pragma omp parallel for simd
    for (std::int64_t i = 0; i < count_; ++i) y[i] = std::clamp(al * x[i] + be, 0.0f, 1.0f);
  }
  void backward(const backward_args& a) override {
    if (!a.d_in[0]) return;
    be_.set_threads();
    const auto* x = static_cast<const float*>(to_plain_.in(a.in[0]));
    const auto* dy = static_cast<const float*>(a.d_out[0]);
    auto* dx = static_cast<float*>(from_plain_.out(a.d_in[0]));
    const float al = alpha_, be = beta_;
#pragma omp parallel for simd
    for (std::int64_t i = 0; i < count_; ++i) {
      const float v = al * x[i] + be;
      dx[i] = v > 0.0f && v < 1.0f ? al * dy[i] : 0.0f;
    }
    from_plain_.finish(a.d_in[0]);
  }
  bool backward_reads_output(int) const override { return false; }

 private:
  float alpha_ = 0.2f, beta_ = 0.5f;
  std::int64_t count_ = 0;
  relayout to_plain_, from_plain_;
};

}  // namespace

std::unique_ptr<kernel> make_hardsigmoid(cpu_backend& be, const swap::graph& g, int op) {
  return std::make_unique<hardsigmoid>(be, g, op);
}

std::unique_ptr<kernel> make_eltwise(cpu_backend& be, const swap::graph& g, int op, dnnl::algorithm alg, float alpha,
                                     float beta) {
  return std::make_unique<eltwise>(be, g, op, alg, alpha, beta);
}

// clip_v2 passes the gradient only strictly inside (min, max), as PyTorch's clamp/hardtanh backward;
// oneDNN's first clip also passes it at x == max. Unset bounds (±1e300) become the float range.
std::unique_ptr<kernel> make_clip(cpu_backend& be, const swap::graph& g, int op) {
  const auto& a = g.ops[static_cast<std::size_t>(op)].attr;
  constexpr double big = std::numeric_limits<float>::max();
  const auto lo = static_cast<float>(std::clamp(a.clip_min, -big, big));
  const auto hi = static_cast<float>(std::clamp(a.clip_max, -big, big));
  if (!(lo <= hi))
    bad(g.ops[static_cast<std::size_t>(op)], fmt::format("clip bounds: expected min <= max, got [{}, {}]", lo, hi));
  return std::make_unique<eltwise>(be, g, op, dnnl::algorithm::eltwise_clip_v2, lo, hi);
}
std::unique_ptr<kernel> make_dropout(cpu_backend& be, const swap::graph& g, int op) {
  return std::make_unique<dropout>(be, g, op);
}

}  // namespace toru::train::detail::cpu
