// SPDX-License-Identifier: BSD-3-Clause
// Elementwise product with NumPy broadcasting (ONNX Mul): SiLU exported as x * sigmoid(x), the
// squeeze-and-excitation scale [N, C, 1, 1] * [N, C, H, W], attention scaling by a constant.
#include <omp.h>

#include <algorithm>
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cpu.hpp"
#include "toru/core/error.hpp"

namespace toru::train::detail::cpu {

namespace {

class mul final : public cpu_kernel {
 public:
  mul(cpu_backend& be, const swap::graph& g, int op) : cpu_kernel(be, g, op) {
    if (this->op().inputs.size() != 2) bad(this->op(), "expected two inputs");
    const auto& y = out_shape(0);
    const auto rank = y.size();
    for (int i = 0; i < 2; ++i) {
      const auto& s = in_shape(i);
      if (s.size() > rank)
        bad(this->op(), fmt::format("input {} [{}] has more axes than the output", i, fmt::join(s, ",")));
      // Strides of the input over the output's index space; 0 along broadcast axes.
      strides_[i].assign(rank, 0);
      std::int64_t st = 1;
      for (std::size_t k = 0; k < s.size(); ++k) {
        const auto ax = rank - 1 - k;
        const auto e = s[s.size() - 1 - k];
        if (e != 1 && e != y[ax])
          bad(this->op(),
              fmt::format("cannot broadcast input {} [{}] to [{}]", i, fmt::join(s, ","), fmt::join(y, ",")));
        if (e != 1) strides_[i][ax] = st;
        st *= e;
      }
      count_[i] = numel(s);
      to_plain_[i] = relayout(be, in_md(i), plain_md(s), what(i == 0 ? "a" : "b"));
      from_plain_[i] = relayout(be, plain_md(s), in_md(i), what(i == 0 ? "da" : "db"));
    }
    count_y_ = numel(y);
    set_out_md(0, plain_md(y));
  }
  std::int64_t workspace_bytes() const override { return 4 * (count_[0] + count_[1]); }

  void forward(const forward_args& a) override {
    be_.set_threads();
    const auto* x0 = static_cast<const float*>(to_plain_[0].in(a.in[0]));
    const auto* x1 = static_cast<const float*>(to_plain_[1].in(a.in[1]));
    auto* y = static_cast<float*>(a.out[0]);
#pragma omp parallel for
    for (std::int64_t i = 0; i < count_y_; ++i) {
      const auto [o0, o1] = offsets(i);
      y[i] = x0[o0] * x1[o1];
    }
  }

  // d x_i = reduce over its broadcast axes of dy * x_other. Accumulated serially in output order
  // where input i broadcasts, so the sum is deterministic; a plain product otherwise.
  void backward(const backward_args& a) override {
    be_.set_threads();
    const auto* dy = static_cast<const float*>(a.d_out[0]);
    const float* x[2] = {static_cast<const float*>(to_plain_[0].in(a.in[0])),
                         static_cast<const float*>(to_plain_[1].in(a.in[1]))};
    for (int i = 0; i < 2; ++i) {
      if (!a.d_in[i]) continue;
      auto* dx = static_cast<float*>(from_plain_[i].out(a.d_in[i]));
      const float* other = x[1 - i];
      if (!dy) {
        std::fill(dx, dx + count_[i], 0.0f);
      } else if (count_[i] == count_y_) {
#pragma omp parallel for
        for (std::int64_t j = 0; j < count_y_; ++j) {
          const auto o = offsets(j);
          dx[j] = dy[j] * other[i == 0 ? o.second : o.first];
        }
      } else {
        auto* acc = static_cast<float*>(a.workspace) + (i == 0 ? 0 : count_[0]);
        std::fill(acc, acc + count_[i], 0.0f);
        for (std::int64_t j = 0; j < count_y_; ++j) {
          const auto o = offsets(j);
          acc[i == 0 ? o.first : o.second] += dy[j] * other[i == 0 ? o.second : o.first];
        }
        std::memcpy(dx, acc, static_cast<std::size_t>(count_[i]) * 4);
      }
      from_plain_[i].finish(a.d_in[i]);
    }
  }
  bool backward_reads_output(int) const override { return false; }

 private:
  std::pair<std::int64_t, std::int64_t> offsets(std::int64_t i) const {
    const auto& y = out_shape(0);
    std::int64_t o0 = 0, o1 = 0;
    for (std::size_t k = y.size(); k-- > 0;) {
      const auto c = i % y[k];
      i /= y[k];
      o0 += c * strides_[0][k];
      o1 += c * strides_[1][k];
    }
    return {o0, o1};
  }

  std::vector<std::int64_t> strides_[2];
  std::int64_t count_[2] = {0, 0}, count_y_ = 0;
  relayout to_plain_[2], from_plain_[2];
};

}  // namespace

std::unique_ptr<kernel> make_mul(cpu_backend& be, const swap::graph& g, int op) {
  return std::make_unique<mul>(be, g, op);
}

}  // namespace toru::train::detail::cpu
