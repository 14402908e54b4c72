// SPDX-License-Identifier: BSD-3-Clause
// Padding (ONNX Pad; F.pad) in constant, reflect and edge (PyTorch's replicate) modes: pure data
// movement on the plain layout, which oneDNN has no primitive for, so it is written by hand. The
// constant mode's gradient is the interior of the output gradient; reflect and edge add every
// output gradient into the input element it copies, in output order within each block of the
// unpadded leading axes (blocks in parallel), so the sums are deterministic.
#include <omp.h>

#include <algorithm>

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
    mode_ = a.pad_mode == "reflect" ? 1 : a.pad_mode == "edge" ? 2 : 0;
    if (mode_ == 0 && a.pad_mode != "constant")
      bad(this->op(), fmt::format("pad mode '{}': expected constant, reflect or edge", a.pad_mode));
    for (std::size_t k = 0; k < x.size(); ++k)
      if (mode_ == 1 && (a.pad_begin[k] >= x[k] || a.pad_end[k] >= x[k]))
        bad(this->op(), fmt::format("reflect pads [{}] / [{}]: expected each below the extent of [{}]",
                                    fmt::join(a.pad_begin, ","), fmt::join(a.pad_end, ","), fmt::join(x, ",")));
    // Leading axes without padding: independent blocks for the gradient's accumulation.
    blocks_ = 1;
    for (std::size_t k = 0; k < x.size() && a.pad_begin[k] == 0 && a.pad_end[k] == 0; ++k) blocks_ *= x[k];
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
    if (mode_ != 0) {
#pragma omp parallel for
      for (std::int64_t j = 0; j < count_y_; ++j) y[j] = x[in_index(j)];
      return;
    }
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
    if (mode_ != 0) {
      std::fill(dx, dx + count_x_, 0.0f);
      const std::int64_t per = count_y_ / blocks_;
#pragma omp parallel for
      for (std::int64_t blk = 0; blk < blocks_; ++blk)
        for (std::int64_t j = blk * per; dy && j < (blk + 1) * per; ++j) dx[in_index(j)] += dy[j];
    } else {
#pragma omp parallel for
      for (std::int64_t i = 0; i < count_x_; ++i) dx[i] = dy ? dy[out_index(i)] : 0.0f;
    }
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

  // Plain index in the input of the element that output element j copies (reflect or edge).
  std::int64_t in_index(std::int64_t j) const {
    const auto& x = in_shape(0);
    const auto& y = out_shape(0);
    const auto& b = op().attr.pad_begin;
    std::int64_t o = 0, stride = 1;
    for (std::size_t k = x.size(); k-- > 0;) {
      std::int64_t i = j % y[k] - b[k];
      j /= y[k];
      const std::int64_t n = x[k];
      if (mode_ == 1)
        i = i < 0 ? -i : i >= n ? 2 * (n - 1) - i : i;
      else
        i = std::clamp<std::int64_t>(i, 0, n - 1);
      o += i * stride;
      stride *= n;
    }
    return o;
  }

  relayout to_plain_, from_plain_;
  int mode_ = 0;  // 0 constant, 1 reflect, 2 edge
  std::int64_t blocks_ = 1;
  std::int64_t count_x_ = 0, count_y_ = 0;
  float value_ = 0;
};

}  // namespace

std::unique_ptr<kernel> make_pad(cpu_backend& be, const swap::graph& g, int op) {
  return std::make_unique<pad>(be, g, op);
}

}  // namespace toru::train::detail::cpu
