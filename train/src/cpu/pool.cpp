// SPDX-License-Identifier: BSD-3-Clause
// Pooling: oneDNN max/average pooling and PyTorch-style adaptive average pooling.
#include <omp.h>

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cpu.hpp"
#include "toru/core/error.hpp"

namespace toru::train::detail::cpu {

namespace {

using prop = dnnl::prop_kind;

// Max and average pooling (global average pooling is a window over the whole plane).
class pool final : public cpu_kernel {
 public:
  pool(cpu_backend& be, const swap::graph& g, int op, bool max) : cpu_kernel(be, g, op) {
    const auto& o = this->op();
    const auto& xs = in_shape(0);
    const auto& ys = out_shape(0);
    if (xs.size() < 3 || xs.size() > 5 || ys.size() != xs.size())
      bad(o, fmt::format("expected [N, C, spatial...] input and output, got [{}] -> [{}]", fmt::join(xs, ","),
                         fmt::join(ys, ",")));
    std::vector<std::int64_t> k = o.attr.kernel;
    if (o.type == "GlobalAveragePool" || k.empty()) {
      // Global or adaptive pooling with an integral ratio: window = stride = in / out.
      k.clear();
      for (std::size_t i = 2; i < xs.size(); ++i) {
        if (xs[i] % ys[i] != 0)
          bad(o, fmt::format("adaptive pooling [{}] -> [{}] needs output extents that divide the input's",
                             fmt::join(xs, ","), fmt::join(ys, ",")));
        k.push_back(xs[i] / ys[i]);
      }
      swap::op tmp = o;
      tmp.attr.stride = k;
      tmp.attr.pad_begin.clear();
      geo_ = make_geometry(tmp, xs, ys, k);
    } else {
      geo_ = make_geometry(o, xs, ys, k);
    }
    alg_ = max ? dnnl::algorithm::pooling_max
               : (o.attr.count_include_pad ? dnnl::algorithm::pooling_avg_include_padding
                                           : dnnl::algorithm::pooling_avg_exclude_padding);
    const md& x = in_md(0);
    fwd_pd_ = dnnl::pooling_v2_forward::primitive_desc(
        dnnl::pooling_v2_forward::desc(prop::forward_training, alg_, x, any_md(ys), geo_.stride, geo_.kernel,
                                       geo_.dilation, geo_.pad_l, geo_.pad_r),
        be.eng);
    bwd_pd_ = dnnl::pooling_v2_backward::primitive_desc(
        dnnl::pooling_v2_backward::desc(alg_, x, fwd_pd_.dst_desc(), geo_.stride, geo_.kernel, geo_.dilation,
                                        geo_.pad_l, geo_.pad_r),
        be.eng, fwd_pd_);
    fwd_ = dnnl::pooling_v2_forward(fwd_pd_);
    bwd_ = dnnl::pooling_v2_backward(bwd_pd_);
    set_out_md(0, fwd_pd_.dst_desc());
    ws_bytes_ = max ? static_cast<std::int64_t>(fwd_pd_.workspace_desc().get_size()) : 0;
    dy_ = relayout(be, fwd_pd_.dst_desc(), bwd_pd_.diff_dst_desc(), what("dy"));
    dx_ = relayout(be, bwd_pd_.diff_src_desc(), x, what("dx"));
  }
  std::int64_t state_bytes() const override { return ws_bytes_; }

  void forward(const forward_args& a) override {
    be_.set_threads();
    std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, mem(in_md(0), a.in[0])},
                                               {DNNL_ARG_DST, mem(fwd_pd_.dst_desc(), a.out[0])}};
    if (ws_bytes_ > 0) args.emplace(DNNL_ARG_WORKSPACE, mem(fwd_pd_.workspace_desc(), a.state));
    exec(fwd_, args);
    wait();
  }
  void backward(const backward_args& a) override {
    if (!a.d_in[0]) return;
    be_.set_threads();
    void* dx = dx_.out(a.d_in[0]);
    std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_DIFF_DST, mem(bwd_pd_.diff_dst_desc(), dy_.in(a.d_out[0]))},
                                               {DNNL_ARG_DIFF_SRC, mem(bwd_pd_.diff_src_desc(), dx)}};
    if (ws_bytes_ > 0) args.emplace(DNNL_ARG_WORKSPACE, mem(fwd_pd_.workspace_desc(), a.state));
    exec(bwd_, args);
    wait();
    dx_.finish(a.d_in[0]);
  }
  bool backward_reads_input(int) const override { return false; }
  bool backward_reads_output(int) const override { return false; }

 private:
  geometry geo_;
  dnnl::algorithm alg_;
  std::int64_t ws_bytes_ = 0;
  dnnl::pooling_v2_forward::primitive_desc fwd_pd_;
  dnnl::pooling_v2_backward::primitive_desc bwd_pd_;
  dnnl::pooling_v2_forward fwd_;
  dnnl::pooling_v2_backward bwd_;
  relayout dy_, dx_;
};

// ---------------------------------------------------------------------------------------------
// Adaptive average pooling where the output does not divide the input (PyTorch's windows:
// [floor(i in / out), ceil((i + 1) in / out)) per axis), which oneDNN's fixed windows cannot express:
// VGG's and AlexNet's 7x7 / 6x6 heads at inputs other than 224. Plain layout, OpenMP loops.
class adaptive_avgpool final : public cpu_kernel {
 public:
  adaptive_avgpool(cpu_backend& be, const swap::graph& g, int op) : cpu_kernel(be, g, op) {
    const auto& xs = in_shape(0);
    const auto& ys = out_shape(0);
    if (xs.size() < 3 || xs.size() > 5 || ys.size() != xs.size())
      bad(this->op(), "expected [N, C, spatial...] input and output");
    // Spatial extents padded to three axes.
    for (std::size_t i = 0; i < 3; ++i) {
      const std::size_t a = xs.size() - 3 + i;
      in_[i] = a >= 2 && a < xs.size() ? xs[a] : 1;
      out_[i] = a >= 2 && a < ys.size() ? ys[a] : 1;
    }
    planes_ = xs[0] * xs[1];
    to_plain_ = relayout(be, in_md(0), plain_md(xs), what("x"));
    from_plain_ = relayout(be, plain_md(xs), in_md(0), what("dx"));
    set_out_md(0, plain_md(ys));
  }
  void forward(const forward_args& a) override {
    be_.set_threads();
    const auto* x = static_cast<const float*>(to_plain_.in(a.in[0]));
    auto* y = static_cast<float*>(a.out[0]);
    sweep([&](std::int64_t xi, std::int64_t yi, float w) { y[yi] += w * x[xi]; }, y);
  }
  void backward(const backward_args& a) override {
    if (!a.d_in[0]) return;
    be_.set_threads();
    const auto* dy = static_cast<const float*>(a.d_out[0]);
    auto* dx = static_cast<float*>(from_plain_.out(a.d_in[0]));
    sweep_back(dy, dx);
    from_plain_.finish(a.d_in[0]);
  }
  bool backward_reads_input(int) const override { return false; }
  bool backward_reads_output(int) const override { return false; }

 private:
  static std::int64_t lo(std::int64_t i, std::int64_t in, std::int64_t out) { return i * in / out; }
  static std::int64_t hi(std::int64_t i, std::int64_t in, std::int64_t out) { return ((i + 1) * in + out - 1) / out; }

  // Visits every (input element, output element, 1 / window size) of one plane per thread.
  template <class F>
  void sweep(F&& f, float* y) {
    const std::int64_t ip = in_[0] * in_[1] * in_[2], op = out_[0] * out_[1] * out_[2];
#pragma omp parallel for
    for (std::int64_t pl = 0; pl < planes_; ++pl) {
      for (std::int64_t k = 0; k < op; ++k) y[pl * op + k] = 0;
      for (std::int64_t d = 0; d < out_[0]; ++d)
        for (std::int64_t h = 0; h < out_[1]; ++h)
          for (std::int64_t w = 0; w < out_[2]; ++w) {
            const std::int64_t d0 = lo(d, in_[0], out_[0]), d1 = hi(d, in_[0], out_[0]);
            const std::int64_t h0 = lo(h, in_[1], out_[1]), h1 = hi(h, in_[1], out_[1]);
            const std::int64_t w0 = lo(w, in_[2], out_[2]), w1 = hi(w, in_[2], out_[2]);
            const float scale = 1.0f / static_cast<float>((d1 - d0) * (h1 - h0) * (w1 - w0));
            const std::int64_t yi = pl * op + (d * out_[1] + h) * out_[2] + w;
            for (std::int64_t i = d0; i < d1; ++i)
              for (std::int64_t j = h0; j < h1; ++j)
                for (std::int64_t l = w0; l < w1; ++l) f(pl * ip + (i * in_[1] + j) * in_[2] + l, yi, scale);
          }
    }
  }
  void sweep_back(const float* dy, float* dx) {
    const std::int64_t ip = in_[0] * in_[1] * in_[2];
#pragma omp parallel for
    for (std::int64_t pl = 0; pl < planes_; ++pl)
      for (std::int64_t k = 0; k < ip; ++k) dx[pl * ip + k] = 0;
    // Windows of one plane overlap, planes do not: one thread per plane.
    const std::int64_t op = out_[0] * out_[1] * out_[2];
#pragma omp parallel for
    for (std::int64_t pl = 0; pl < planes_; ++pl)
      for (std::int64_t d = 0; d < out_[0]; ++d)
        for (std::int64_t h = 0; h < out_[1]; ++h)
          for (std::int64_t w = 0; w < out_[2]; ++w) {
            const std::int64_t d0 = lo(d, in_[0], out_[0]), d1 = hi(d, in_[0], out_[0]);
            const std::int64_t h0 = lo(h, in_[1], out_[1]), h1 = hi(h, in_[1], out_[1]);
            const std::int64_t w0 = lo(w, in_[2], out_[2]), w1 = hi(w, in_[2], out_[2]);
            const float g =
                dy[pl * op + (d * out_[1] + h) * out_[2] + w] / static_cast<float>((d1 - d0) * (h1 - h0) * (w1 - w0));
            for (std::int64_t i = d0; i < d1; ++i)
              for (std::int64_t j = h0; j < h1; ++j)
                for (std::int64_t l = w0; l < w1; ++l) dx[pl * ip + (i * in_[1] + j) * in_[2] + l] += g;
          }
  }

  std::int64_t in_[3] = {1, 1, 1}, out_[3] = {1, 1, 1}, planes_ = 0;
  relayout to_plain_, from_plain_;
};

}  // namespace

std::unique_ptr<kernel> make_pool(cpu_backend& be, const swap::graph& g, int op, bool max) {
  const auto& o = g.ops[static_cast<std::size_t>(op)];
  const auto& xs = g.tensors[o.inputs.at(0)].shape;
  const auto& ys = g.tensors[o.outputs.at(0)].shape;
  if (!max && (o.attr.kernel.empty() || o.type == "GlobalAveragePool") && xs.size() == ys.size())
    for (std::size_t i = 2; i < xs.size(); ++i)
      if (xs[i] % ys[i] != 0) return std::make_unique<adaptive_avgpool>(be, g, op);
  return std::make_unique<pool>(be, g, op, max);
}

}  // namespace toru::train::detail::cpu
