// SPDX-License-Identifier: BSD-3-Clause
// Broadcasting and reducing layers on plain data: Add with NumPy broadcasting (a bias or a
// positional embedding added to [N, S, D]), Expand (ViT's class token) and ReduceMean (mean
// pooling). The forward add runs on oneDNN's binary primitive; the broadcast copy and its
// transpose, the sum over broadcast axes, are written here: oneDNN has no primitive for the first,
// and its reduction primitive (2.6) runs a reference kernel when the reduced axes are outer ones
// ([N, S, D] -> [D], every bias gradient of an exported transformer: 80 % of an encoder's step).
// Each output element is summed by one thread over the rows in increasing order, so gradients do
// not depend on the thread count.
#include <omp.h>

#include <algorithm>
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cpu.hpp"
#include "toru/core/error.hpp"

namespace toru::train::detail::cpu {

namespace {

// `s` padded with leading 1s to rank `r`; throws unless it broadcasts to `y`.
std::vector<std::int64_t> broadcast_shape(const swap::op& o, const std::vector<std::int64_t>& s,
                                          const std::vector<std::int64_t>& y, const char* which) {
  if (s.size() > y.size())
    bad(o, fmt::format("{} [{}] has more axes than the output [{}]", which, fmt::join(s, ","), fmt::join(y, ",")));
  std::vector<std::int64_t> p(y.size() - s.size(), 1);
  p.insert(p.end(), s.begin(), s.end());
  for (std::size_t k = 0; k < y.size(); ++k)
    if (p[k] != 1 && p[k] != y[k])
      bad(o, fmt::format("cannot broadcast {} [{}] to [{}]", which, fmt::join(s, ","), fmt::join(y, ",")));
  return p;
}

// y[i] = scale * x[broadcast index of i], x of shape `xs` (padded) broadcast to `ys`.
void broadcast_copy(const float* x, const std::vector<std::int64_t>& xs, const std::vector<std::int64_t>& ys,
                    float scale, float* y) {
  const std::size_t r = ys.size();
  std::vector<std::int64_t> st(r, 0);
  std::int64_t s = 1;
  for (std::size_t k = r; k-- > 0;) {
    if (xs[k] != 1) st[k] = s;
    s *= xs[k];
  }
  const std::int64_t inner = r ? ys[r - 1] : 1, rows = numel(ys) / std::max<std::int64_t>(inner, 1);
  const std::int64_t inner_stride = r ? st[r - 1] : 0;
#pragma omp parallel for
  for (std::int64_t row = 0; row < rows; ++row) {
    std::int64_t off = 0, rest = row;
    for (std::size_t k = r - 1; k-- > 0;) {
      off += (rest % ys[k]) * st[k];
      rest /= ys[k];
    }
    float* out = y + row * inner;
    for (std::int64_t i = 0; i < inner; ++i) out[i] = scale * x[off + i * inner_stride];
  }
}

// x = scale * (y summed over the axes where x, padded to y's rank, has extent 1): the transpose of
// broadcast_copy. x's elements are split over threads (rows of x, and chunks of the last axis when
// it is kept), each summing its y rows in increasing order. The row offsets depend on the shapes
// alone: built once per kernel.
class broadcast_sum {
 public:
  broadcast_sum() = default;
  broadcast_sum(const std::vector<std::int64_t>& ys, const std::vector<std::int64_t>& xs) {
    const std::size_t r = ys.size();
    if (r == 0) return;
    inner_ = ys[r - 1];
    inner_kept_ = xs[r - 1] != 1 || inner_ == 1;
    // y rows (all axes but the last) as keep_off_[x row] + red_off_[j], j over the reduced axes
    // in increasing order.
    std::int64_t row_stride = 1;
    for (std::size_t k = r - 1; k-- > 0;) {
      auto& v = xs[k] == 1 && ys[k] != 1 ? red_off_ : keep_off_;
      const std::size_t n = v.size();
      std::vector<std::int64_t> next;
      next.reserve(n * static_cast<std::size_t>(ys[k]));
      for (std::int64_t c = 0; c < ys[k]; ++c)
        for (std::size_t i = 0; i < n; ++i) next.push_back(c * row_stride + v[i]);
      v = std::move(next);
      row_stride *= ys[k];
    }
  }

  void operator()(const float* y, float scale, float* x) const {
    const auto xrows = static_cast<std::int64_t>(keep_off_.size());
    const auto nred = static_cast<std::int64_t>(red_off_.size());
    if (inner_kept_) {
      constexpr std::int64_t chunk = 64;
      const std::int64_t chunks = (inner_ + chunk - 1) / chunk;
#pragma omp parallel for collapse(2)
      for (std::int64_t xr = 0; xr < xrows; ++xr)
        for (std::int64_t c = 0; c < chunks; ++c) {
          const std::int64_t lo = c * chunk, len = std::min(chunk, inner_ - lo);
          float acc[chunk] = {};
          for (std::int64_t j = 0; j < nred; ++j) {
            const float* src = y + (keep_off_[xr] + red_off_[j]) * inner_ + lo;
            for (std::int64_t i = 0; i < len; ++i) acc[i] += src[i];
          }
          for (std::int64_t i = 0; i < len; ++i) x[xr * inner_ + lo + i] = scale * acc[i];
        }
      return;
    }
#pragma omp parallel for
    for (std::int64_t xr = 0; xr < xrows; ++xr) {
      float acc = 0;
      for (std::int64_t j = 0; j < nred; ++j) {
        const float* src = y + (keep_off_[xr] + red_off_[j]) * inner_;
        for (std::int64_t i = 0; i < inner_; ++i) acc += src[i];
      }
      x[xr] = scale * acc;
    }
  }

 private:
  std::int64_t inner_ = 1;  // a rank-0 y is one row of one element
  bool inner_kept_ = true;
  std::vector<std::int64_t> keep_off_{0}, red_off_{0};
};

// ---------------------------------------------------------------------------------------------
// a + b where one operand has the output's shape and the other broadcasts to it (either order).
class add_broadcast final : public cpu_kernel {
 public:
  add_broadcast(cpu_backend& be, const swap::graph& g, int op) : cpu_kernel(be, g, op) {
    const auto& o = this->op();
    const auto& y = out_shape(0);
    if (o.inputs.size() != 2) bad(o, "expected two inputs");
    full_ = in_shape(0) == y ? 0 : 1;
    if (in_shape(full_) != y)
      throw error(errc::unsupported,
                  fmt::format("op '{}' (add): inputs [{}] and [{}]: broadcasting is supported only when one input has "
                              "the output's shape [{}]",
                              o.name, fmt::join(in_shape(0), ","), fmt::join(in_shape(1), ","), fmt::join(y, ",")));
    small_ = broadcast_shape(o, in_shape(1 - full_), y, "input");
    for (int i = 0; i < 2; ++i) {
      to_plain_[i] = relayout(be, in_md(i), plain_md(in_shape(i)), what(i == 0 ? "a" : "b"));
      from_plain_[i] = relayout(be, plain_md(in_shape(i)), in_md(i), what(i == 0 ? "da" : "db"));
    }
    fwd_ = dnnl::binary(dnnl::binary::primitive_desc(
        dnnl::binary::desc(dnnl::algorithm::binary_add, plain_md(y), plain_md(small_), plain_md(y)), be.eng));
    sum_ = broadcast_sum(y, small_);
    set_out_md(0, plain_md(y));
  }
  void forward(const forward_args& a) override {
    be_.set_threads();
    const auto& y = out_shape(0);
    exec(fwd_, {{DNNL_ARG_SRC_0, mem(plain_md(y), to_plain_[full_].in(a.in[full_]))},
                {DNNL_ARG_SRC_1, mem(plain_md(small_), to_plain_[1 - full_].in(a.in[1 - full_]))},
                {DNNL_ARG_DST, mem(plain_md(y), a.out[0])}});
    wait();
  }
  void backward(const backward_args& a) override {
    be_.set_threads();
    if (a.d_in[full_]) from_plain_[full_].run(a.d_out[0], a.d_in[full_]);
    const int s = 1 - full_;
    if (a.d_in[s]) {
      void* d = from_plain_[s].out(a.d_in[s]);
      sum_(static_cast<const float*>(a.d_out[0]), 1.0f, static_cast<float*>(d));
      from_plain_[s].finish(a.d_in[s]);
    }
  }
  bool backward_reads_input(int) const override { return false; }
  bool backward_reads_output(int) const override { return false; }

 private:
  int full_ = 0;
  std::vector<std::int64_t> small_;
  relayout to_plain_[2], from_plain_[2];
  dnnl::binary fwd_;
  broadcast_sum sum_;
};

// ---------------------------------------------------------------------------------------------
// Expand: x broadcast to the output shape; the gradient sums dy over the broadcast axes.
class expand final : public cpu_kernel {
 public:
  expand(cpu_backend& be, const swap::graph& g, int op) : cpu_kernel(be, g, op) {
    xs_ = broadcast_shape(this->op(), in_shape(0), out_shape(0), "input");
    to_plain_ = relayout(be, in_md(0), plain_md(in_shape(0)), what("x"));
    from_plain_ = relayout(be, plain_md(in_shape(0)), in_md(0), what("dx"));
    sum_ = broadcast_sum(out_shape(0), xs_);
    set_out_md(0, plain_md(out_shape(0)));
  }
  void forward(const forward_args& a) override {
    be_.set_threads();
    broadcast_copy(static_cast<const float*>(to_plain_.in(a.in[0])), xs_, out_shape(0), 1.0f,
                   static_cast<float*>(a.out[0]));
  }
  void backward(const backward_args& a) override {
    if (!a.d_in[0]) return;
    be_.set_threads();
    void* d = from_plain_.out(a.d_in[0]);
    sum_(static_cast<const float*>(a.d_out[0]), 1.0f, static_cast<float*>(d));
    from_plain_.finish(a.d_in[0]);
  }
  bool backward_reads_input(int) const override { return false; }
  bool backward_reads_output(int) const override { return false; }

 private:
  std::vector<std::int64_t> xs_;
  relayout to_plain_, from_plain_;
  broadcast_sum sum_;
};

// ---------------------------------------------------------------------------------------------
// ReduceMean over attr.axes (kept or dropped: the output shape decides); the gradient spreads
// dy / count over the reduced axes.
class reduce_mean final : public cpu_kernel {
 public:
  reduce_mean(cpu_backend& be, const swap::graph& g, int op) : cpu_kernel(be, g, op) {
    const auto& o = this->op();
    const auto& xs = in_shape(0);
    kept_ = xs;
    std::int64_t count = 1;
    for (auto ax : o.attr.axes) {
      if (ax < 0 || ax >= static_cast<std::int64_t>(xs.size()))
        bad(o,
            fmt::format("axes [{}]: expected axes of the input [{}]", fmt::join(o.attr.axes, ","), fmt::join(xs, ",")));
      kept_[static_cast<std::size_t>(ax)] = 1;
    }
    if (o.attr.axes.empty()) bad(o, "expected the reduced axes (attr.axes)");
    count = numel(xs) / numel(kept_);
    if (numel(out_shape(0)) != numel(kept_))
      bad(o, fmt::format("output [{}] is not the input [{}] reduced over [{}]", fmt::join(out_shape(0), ","),
                         fmt::join(xs, ","), fmt::join(o.attr.axes, ",")));
    inv_count_ = 1.0f / static_cast<float>(count);
    to_plain_ = relayout(be, in_md(0), plain_md(xs), what("x"));
    from_plain_ = relayout(be, plain_md(xs), in_md(0), what("dx"));
    mean_ = broadcast_sum(xs, kept_);
    set_out_md(0, plain_md(out_shape(0)));
  }
  void forward(const forward_args& a) override {
    be_.set_threads();
    mean_(static_cast<const float*>(to_plain_.in(a.in[0])), inv_count_, static_cast<float*>(a.out[0]));
  }
  void backward(const backward_args& a) override {
    if (!a.d_in[0]) return;
    be_.set_threads();
    auto* d = static_cast<float*>(from_plain_.out(a.d_in[0]));
    broadcast_copy(static_cast<const float*>(a.d_out[0]), kept_, in_shape(0), inv_count_, d);
    from_plain_.finish(a.d_in[0]);
  }
  bool backward_reads_input(int) const override { return false; }
  bool backward_reads_output(int) const override { return false; }

 private:
  std::vector<std::int64_t> kept_;
  float inv_count_ = 1;
  relayout to_plain_, from_plain_;
  broadcast_sum mean_;
};

}  // namespace

std::unique_ptr<kernel> make_add_broadcast(cpu_backend& be, const swap::graph& g, int op) {
  return std::make_unique<add_broadcast>(be, g, op);
}
std::unique_ptr<kernel> make_expand(cpu_backend& be, const swap::graph& g, int op) {
  return std::make_unique<expand>(be, g, op);
}
std::unique_ptr<kernel> make_reduce_mean(cpu_backend& be, const swap::graph& g, int op) {
  return std::make_unique<reduce_mean>(be, g, op);
}

}  // namespace toru::train::detail::cpu
