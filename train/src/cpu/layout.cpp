// SPDX-License-Identifier: BSD-3-Clause
// Layers that select or reorder elements: Transpose and Slice (oneDNN reorders between a strided
// view and a plain tensor), Gather (hand-written: oneDNN 2.6 has no gather) by constant indices
// (a transformer's first-token pooling) or by an int index tensor (an embedding lookup).
#include <omp.h>

#include <algorithm>
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cpu.hpp"
#include "toru/core/error.hpp"

namespace toru::train::detail::cpu {

namespace {

dims plain_strides(const std::vector<std::int64_t>& shape) {
  dims s(shape.size(), 1);
  for (std::size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
  return s;
}

// Transpose: y = x.permute(perm). Forward reorders a permuted-stride view of x into plain y;
// backward reorders plain dy into the same view of dx.
class transpose final : public cpu_kernel {
 public:
  transpose(cpu_backend& be, const swap::graph& g, int op) : cpu_kernel(be, g, op) {
    const auto& o = this->op();
    const auto& xs = in_shape(0);
    const auto& perm = o.attr.perm;
    std::vector<std::int64_t> sorted(perm.begin(), perm.end());
    std::sort(sorted.begin(), sorted.end());
    bool ok = perm.size() == xs.size();
    for (std::size_t i = 0; ok && i < sorted.size(); ++i) ok = sorted[i] == static_cast<std::int64_t>(i);
    if (!ok)
      bad(o, fmt::format("attribute perm [{}]: expected a permutation of the {} input axes", fmt::join(perm, ","),
                         xs.size()));
    const auto xst = plain_strides(xs);
    dims d(perm.size()), st(perm.size());
    for (std::size_t i = 0; i < perm.size(); ++i) {
      d[i] = xs[static_cast<std::size_t>(perm[i])];
      st[i] = xst[static_cast<std::size_t>(perm[i])];
    }
    if (std::vector<std::int64_t>(d.begin(), d.end()) != out_shape(0))
      bad(o, fmt::format("output [{}] is not the input [{}] permuted by [{}]", fmt::join(out_shape(0), ","),
                         fmt::join(xs, ","), fmt::join(perm, ",")));
    const md view = strided_md(d, st), y = plain_md(out_shape(0));
    to_plain_ = relayout(be, in_md(0), plain_md(xs), what("x"));
    from_plain_ = relayout(be, plain_md(xs), in_md(0), what("dx"));
    fwd_ = dnnl::reorder(dnnl::reorder::primitive_desc(be.eng, view, be.eng, y));
    bwd_ = dnnl::reorder(dnnl::reorder::primitive_desc(be.eng, y, be.eng, view));
    view_ = view;
    set_out_md(0, y);
  }
  void forward(const forward_args& a) override {
    be_.set_threads();
    exec(fwd_,
         {{DNNL_ARG_FROM, mem(view_, to_plain_.in(a.in[0]))}, {DNNL_ARG_TO, mem(plain_md(out_shape(0)), a.out[0])}});
    wait();
  }
  void backward(const backward_args& a) override {
    if (!a.d_in[0]) return;
    be_.set_threads();
    void* dx = from_plain_.out(a.d_in[0]);
    exec(bwd_, {{DNNL_ARG_FROM, mem(plain_md(out_shape(0)), a.d_out[0])}, {DNNL_ARG_TO, mem(view_, dx)}});
    wait();
    from_plain_.finish(a.d_in[0]);
  }
  bool backward_reads_input(int) const override { return false; }
  bool backward_reads_output(int) const override { return false; }

 private:
  md view_;
  relayout to_plain_, from_plain_;
  dnnl::reorder fwd_, bwd_;
};

// ---------------------------------------------------------------------------------------------
// Slice with positive steps: y is the view x[start_0::step_0, ...] (extents from the output shape),
// copied by a reorder; the gradient zeroes dx and reorders dy into the same view of it.
class slice final : public cpu_kernel {
 public:
  slice(cpu_backend& be, const swap::graph& g, int op) : cpu_kernel(be, g, op) {
    const auto& o = this->op();
    const auto& xs = in_shape(0);
    const auto& ys = out_shape(0);
    const auto& at = o.attr;
    if (at.axes.empty() || at.starts.size() != at.axes.size() || at.steps.size() != at.axes.size())
      bad(o, "expected slice bounds known when the model is imported (axes, starts and steps of equal length)");
    if (ys.size() != xs.size())
      bad(o, fmt::format("output [{}] and input [{}] differ in rank", fmt::join(ys, ","), fmt::join(xs, ",")));
    const auto xst = plain_strides(xs);
    dims st(xst.begin(), xst.end());
    for (std::size_t i = 0; i < at.axes.size(); ++i) {
      const auto ax = static_cast<std::size_t>(at.axes[i]);
      if (ax >= xs.size()) bad(o, fmt::format("axis {} out of range for input rank {}", at.axes[i], xs.size()));
      if (at.steps[i] <= 0)
        throw error(errc::unsupported,
                    fmt::format("op '{}' (slice): step {} along axis {} is not supported (only positive steps)", o.name,
                                at.steps[i], ax));
      if (at.starts[i] + (ys[ax] - 1) * at.steps[i] >= xs[ax])
        bad(o, fmt::format("axis {}: {} elements from {} in steps of {} exceed the extent {}", ax, ys[ax], at.starts[i],
                           at.steps[i], xs[ax]));
      offset_ += at.starts[i] * xst[ax];
      st[ax] *= at.steps[i];
    }
    for (std::size_t k = 0; k < xs.size(); ++k) {
      const bool sliced = std::find(at.axes.begin(), at.axes.end(), static_cast<std::int64_t>(k)) != at.axes.end();
      if (sliced ? ys[k] > xs[k] : ys[k] != xs[k])
        bad(o, fmt::format("output extent {} along axis {} does not fit the input's {}{}", ys[k], k, xs[k],
                           sliced ? "" : " (an axis that is not sliced)"));
    }
    view_ = strided_md(dims(ys.begin(), ys.end()), st);
    to_plain_ = relayout(be, in_md(0), plain_md(xs), what("x"));
    from_plain_ = relayout(be, plain_md(xs), in_md(0), what("dx"));
    const md y = plain_md(ys);
    fwd_ = dnnl::reorder(dnnl::reorder::primitive_desc(be.eng, view_, be.eng, y));
    bwd_ = dnnl::reorder(dnnl::reorder::primitive_desc(be.eng, y, be.eng, view_));
    count_x_ = numel(xs);
    set_out_md(0, y);
  }
  void forward(const forward_args& a) override {
    be_.set_threads();
    const auto* x = static_cast<const float*>(to_plain_.in(a.in[0])) + offset_;
    exec(fwd_, {{DNNL_ARG_FROM, mem(view_, x)}, {DNNL_ARG_TO, mem(plain_md(out_shape(0)), a.out[0])}});
    wait();
  }
  void backward(const backward_args& a) override {
    if (!a.d_in[0]) return;
    be_.set_threads();
    auto* dx = static_cast<float*>(from_plain_.out(a.d_in[0]));
    std::fill(dx, dx + count_x_, 0.0f);
    exec(bwd_, {{DNNL_ARG_FROM, mem(plain_md(out_shape(0)), a.d_out[0])}, {DNNL_ARG_TO, mem(view_, dx + offset_)}});
    wait();
    from_plain_.finish(a.d_in[0]);
  }
  bool backward_reads_input(int) const override { return false; }
  bool backward_reads_output(int) const override { return false; }

 private:
  md view_;
  std::int64_t offset_ = 0, count_x_ = 0;
  relayout to_plain_, from_plain_;
  dnnl::reorder fwd_, bwd_;
};

// ---------------------------------------------------------------------------------------------
// Gather along `axis`: y[o, j, i] = x[o, idx[j], i] (o: the axes before, i: the axes after), idx
// constant (attr.starts) or an int32/int64 tensor (second input; out-of-range indices throw).
// The gradient accumulates dy into dx serially in j order per (o, i), so repeated indices sum
// deterministically.
class gather final : public cpu_kernel {
 public:
  gather(cpu_backend& be, const swap::graph& g, int op) : cpu_kernel(be, g, op) {
    const auto& o = this->op();
    const auto& xs = in_shape(0);
    const auto rank = static_cast<std::int64_t>(xs.size());
    if (o.attr.axis < 0 || o.attr.axis >= rank)
      bad(o, fmt::format("attribute axis {}: expected an axis of the input [{}]", o.attr.axis, fmt::join(xs, ",")));
    const auto ax = static_cast<std::size_t>(o.attr.axis);
    extent_ = xs[ax];
    outer_ = numel({xs.begin(), xs.begin() + static_cast<std::ptrdiff_t>(ax)});
    inner_ = numel({xs.begin() + static_cast<std::ptrdiff_t>(ax) + 1, xs.end()});
    if (o.inputs.size() == 2) {
      const auto& it = g.tensors[static_cast<std::size_t>(in_tensor(1))];
      if (it.type != swap::dtype::i32 && it.type != swap::dtype::i64)
        bad(o, fmt::format("indices '{}': expected int32 or int64, got {}", it.name, swap::to_string(it.type)));
      wide_ = it.type == swap::dtype::i64;
      count_idx_ = numel(it.shape);
    } else if (o.inputs.size() == 1) {
      if (o.attr.starts.empty()) bad(o, "expected constant indices (attr.starts) or an index tensor");
      for (auto i : o.attr.starts)
        if (i < 0 || i >= extent_)
          bad(o, fmt::format("index {} out of range for extent {} along axis {}", i, extent_, ax));
      idx_ = o.attr.starts;
      count_idx_ = static_cast<std::int64_t>(idx_.size());
    } else {
      bad(o, "expected inputs (data[, indices])");
    }
    if (numel(out_shape(0)) != outer_ * count_idx_ * inner_)
      bad(o, fmt::format("output [{}] does not hold {} indices of [{}] along axis {}", fmt::join(out_shape(0), ","),
                         count_idx_, fmt::join(xs, ","), ax));
    to_plain_ = relayout(be, in_md(0), plain_md(xs), what("x"));
    from_plain_ = relayout(be, plain_md(xs), in_md(0), what("dx"));
    set_out_md(0, plain_md(out_shape(0)));
  }
  void forward(const forward_args& a) override {
    be_.set_threads();
    const auto idx = indices(a.in.size() > 1 ? a.in[1] : nullptr);
    const auto* x = static_cast<const float*>(to_plain_.in(a.in[0]));
    auto* y = static_cast<float*>(a.out[0]);
    const std::int64_t n = count_idx_, in = inner_, ex = extent_;
#pragma omp parallel for collapse(2)
    for (std::int64_t o = 0; o < outer_; ++o)
      for (std::int64_t j = 0; j < n; ++j)
        std::memcpy(y + (o * n + j) * in, x + (o * ex + idx[static_cast<std::size_t>(j)]) * in,
                    static_cast<std::size_t>(in) * 4);
  }
  void backward(const backward_args& a) override {
    if (!a.d_in[0]) return;
    be_.set_threads();
    const auto idx = indices(a.in.size() > 1 ? a.in[1] : nullptr);
    const auto* dy = static_cast<const float*>(a.d_out[0]);
    auto* dx = static_cast<float*>(from_plain_.out(a.d_in[0]));
    const std::int64_t n = count_idx_, in = inner_, ex = extent_;
    std::fill(dx, dx + outer_ * ex * in, 0.0f);
#pragma omp parallel for collapse(2)
    for (std::int64_t o = 0; o < outer_; ++o)
      for (std::int64_t i = 0; i < in; ++i)
        for (std::int64_t j = 0; j < n; ++j)
          dx[(o * ex + idx[static_cast<std::size_t>(j)]) * in + i] += dy[(o * n + j) * in + i];
    from_plain_.finish(a.d_in[0]);
  }
  bool backward_reads_input(int i) const override { return i == 1; }
  bool backward_reads_output(int) const override { return false; }

 private:
  // The indices of this step: the constants, or the index tensor's (checked against the extent).
  std::vector<std::int64_t> indices(const void* t) const {
    if (!t) return idx_;
    std::vector<std::int64_t> v(static_cast<std::size_t>(count_idx_));
    for (std::int64_t j = 0; j < count_idx_; ++j) {
      const auto e = wide_ ? static_cast<const std::int64_t*>(t)[j] : static_cast<const std::int32_t*>(t)[j];
      if (e < -extent_ || e >= extent_)
        throw error(errc::invalid_argument,
                    fmt::format("op '{}' (gather): index {} at position {} out of range for extent {}", op().name, e, j,
                                extent_));
      v[static_cast<std::size_t>(j)] = e < 0 ? e + extent_ : e;
    }
    return v;
  }

  std::int64_t extent_ = 0, outer_ = 1, inner_ = 1, count_idx_ = 0;
  bool wide_ = false;
  std::vector<std::int64_t> idx_;
  relayout to_plain_, from_plain_;
};

}  // namespace

std::unique_ptr<kernel> make_transpose(cpu_backend& be, const swap::graph& g, int op) {
  return std::make_unique<transpose>(be, g, op);
}
std::unique_ptr<kernel> make_slice(cpu_backend& be, const swap::graph& g, int op) {
  return std::make_unique<slice>(be, g, op);
}
std::unique_ptr<kernel> make_gather(cpu_backend& be, const swap::graph& g, int op) {
  return std::make_unique<gather>(be, g, op);
}

}  // namespace toru::train::detail::cpu
