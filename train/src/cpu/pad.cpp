// SPDX-License-Identifier: BSD-3-Clause
// Constant padding (ONNX Pad, mode constant; F.pad): pure data movement on the plain layout, so it
// is written by hand. The gradient is the interior of the output gradient.
#include <omp.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cpu.hpp"
#include "toru/core/error.hpp"

namespace toru::train::detail::cpu {

namespace {

class pad final : public cpu_kernel {
 public:
  pad(cpu_backend& be, const swap::graph& g, int op) : cpu_kernel(be, g, op) {
    const auto& a = this->op().attr;
    const auto& x = in_shape(0);
    const auto& y = out_shape(0);
    if (a.pad_begin.size() != x.size() || a.pad_end.size() != x.size() || y.size() != x.size())
      bad(this->op(), fmt::format("expected begin and end pads for each of the {} axes of [{}], got [{}] and [{}]",
                                  x.size(), fmt::join(x, ","), fmt::join(a.pad_begin, ","), fmt::join(a.pad_end, ",")));
    for (std::size_t k = 0; k < x.size(); ++k)
      if (a.pad_begin[k] < 0 || a.pad_end[k] < 0 || x[k] + a.pad_begin[k] + a.pad_end[k] != y[k])
        bad(this->op(),
            fmt::format("pads [{}] / [{}]: expected non-negative extents taking [{}] to [{}]",
                        fmt::join(a.pad_begin, ","), fmt::join(a.pad_end, ","), fmt::join(x, ","), fmt::join(y, ",")));
    to_plain_ = relayout(be, in_md(0), plain_md(x), what("x"));
    from_plain_ = relayout(be, plain_md(x), in_md(0), what("dx"));
    set_out_md(0, plain_md(y));
    count_x_ = numel(x);
    count_y_ = numel(y);
    value_ = static_cast<float>(a.pad_value);
  }

  void forward(const forward_args& a) override {
    be_.set_threads();
    const auto* x = static_cast<const float*>(to_plain_.in(a.in[0]));
    auto* y = static_cast<float*>(a.out[0]);
    const float v = value_;
#pragma omp parallel for simd
    for (std::int64_t i = 0; i < count_y_; ++i) y[i] = v;
#pragma omp parallel for
    for (std::int64_t i = 0; i < count_x_; ++i) y[out_index(i)] = x[i];
  }
  void backward(const backward_args& a) override {
    if (!a.d_in[0]) return;
    be_.set_threads();
    const auto* dy = static_cast<const float*>(a.d_out[0]);
    auto* dx = static_cast<float*>(from_plain_.out(a.d_in[0]));
#pragma omp parallel for
    for (std::int64_t i = 0; i < count_x_; ++i) dx[i] = dy ? dy[out_index(i)] : 0.0f;
    from_plain_.finish(a.d_in[0]);
  }
  bool backward_reads_input(int) const override { return false; }
  bool backward_reads_output(int) const override { return false; }

 private:
  // Plain index in the output of the input's plain element i.
  std::int64_t out_index(std::int64_t i) const {
    const auto& x = in_shape(0);
    const auto& y = out_shape(0);
    const auto& b = op().attr.pad_begin;
    std::int64_t o = 0, stride = 1;
    for (std::size_t k = x.size(); k-- > 0;) {
      o += (i % x[k] + b[k]) * stride;
      i /= x[k];
      stride *= y[k];
    }
    return o;
  }

  relayout to_plain_, from_plain_;
  std::int64_t count_x_ = 0, count_y_ = 0;
  float value_ = 0;
};

}  // namespace

std::unique_ptr<kernel> make_pad(cpu_backend& be, const swap::graph& g, int op) {
  return std::make_unique<pad>(be, g, op);
}

}  // namespace toru::train::detail::cpu
