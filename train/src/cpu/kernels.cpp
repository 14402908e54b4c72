// oneDNN kernels of the CPU backend. Each kernel creates its primitives once (shapes are fixed),
// keeps oneDNN's preferred layouts for what it produces, and reorders an input only where its
// producer's layout differs from what the primitive wants (relayout is a no-op otherwise).
#include <omp.h>

#include <algorithm>
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cpu.hpp"
#include "random.hpp"
#include "toru/core/error.hpp"

namespace toru::train::detail::cpu {

namespace {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;
using prop = dnnl::prop_kind;

std::int64_t numel(const std::vector<std::int64_t>& s) {
  std::int64_t n = 1;
  for (auto e : s) n *= e;
  return n;
}

md any_md(const std::vector<std::int64_t>& shape) { return md(dims(shape.begin(), shape.end()), dt::f32, tag::any); }

md strided_md(dims d, dims strides) { return md(d, dt::f32, strides); }

[[noreturn]] void bad(const swap::op& o, const std::string& what) {
  throw error(errc::invalid_argument, fmt::format("op '{}' ({}): {}", o.name, o.type, what));
}

// ---------------------------------------------------------------------------------------------
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
      exec(bwd_data_, {{DNNL_ARG_SRC, mem(y, a.d_out[0])}, {DNNL_ARG_WEIGHTS, mem(wt, a.in[1])},
                       {DNNL_ARG_DST, mem(x, dx)}});
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

 private:
  md w_md() const { return trans_b_ ? strided_md({K_, N_}, {1, K_}) : strided_md({K_, N_}, {N_, 1}); }

  bool trans_b_ = true, has_bias_ = false;
  std::int64_t M_ = 0, K_ = 0, N_ = 0;
  relayout x_plain_, dx_;
  dnnl::matmul fwd_, bwd_data_, bwd_w_, bwd_b_;
  device_buffer ones_;
};

// ---------------------------------------------------------------------------------------------
// Elementwise activations, in the layout of their input.
class eltwise final : public cpu_kernel {
 public:
  eltwise(cpu_backend& be, const swap::graph& g, int op, dnnl::algorithm alg) : cpu_kernel(be, g, op), alg_(alg) {
    const md& x = in_md(0);
    fwd_pd_ = dnnl::eltwise_forward::primitive_desc(
        dnnl::eltwise_forward::desc(prop::forward_training, alg, x, 0.0f, 0.0f), be.eng);
    bwd_pd_ = dnnl::eltwise_backward::primitive_desc(dnnl::eltwise_backward::desc(alg, x, x, 0.0f, 0.0f), be.eng,
                                                     fwd_pd_);
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
// Reshape-like ops (flatten, reshape, squeeze, identity): a plain copy under a new shape.
class reshape final : public cpu_kernel {
 public:
  reshape(cpu_backend& be, const swap::graph& g, int op) : cpu_kernel(be, g, op) {
    if (numel(in_shape(0)) != numel(out_shape(0)))
      bad(this->op(), fmt::format("cannot reshape [{}] to [{}]", fmt::join(in_shape(0), ","),
                                  fmt::join(out_shape(0), ",")));
    to_plain_ = relayout(be, in_md(0), plain_md(in_shape(0)), what("x"));
    from_plain_ = relayout(be, plain_md(in_shape(0)), in_md(0), what("dx"));
    set_out_md(0, plain_md(out_shape(0)));
  }
  void forward(const forward_args& a) override {
    be_.set_threads();
    to_plain_.run(a.in[0], a.out[0]);
  }
  void backward(const backward_args& a) override {
    if (!a.d_in[0]) return;
    be_.set_threads();
    from_plain_.run(a.d_out[0], a.d_in[0]);
  }
  bool backward_reads_input(int) const override { return false; }
  bool backward_reads_output(int) const override { return false; }

 private:
  relayout to_plain_, from_plain_;
};

// ---------------------------------------------------------------------------------------------
// Spatial geometry shared by convolution and pooling: right padding follows from the output extent
// (covers PyTorch's ceil_mode and ONNX's asymmetric pads alike).
struct geometry {
  dims kernel, stride, dilation, pad_l, pad_r;  // dilation in oneDNN's convention (0 = dense)
};

geometry make_geometry(const swap::op& o, const std::vector<std::int64_t>& in, const std::vector<std::int64_t>& out,
                       const std::vector<std::int64_t>& kernel) {
  const std::size_t nd = in.size() - 2;
  auto get = [&](const std::vector<std::int64_t>& v, std::int64_t def, const char* name) {
    dims r(nd, def);
    if (v.size() == 1)
      std::fill(r.begin(), r.end(), v[0]);
    else if (v.size() == nd)
      std::copy(v.begin(), v.end(), r.begin());
    else if (!v.empty())
      bad(o, fmt::format("attribute {}: expected {} values, got {}", name, nd, v.size()));
    return r;
  };
  geometry geo;
  geo.kernel = get(kernel, 1, "kernel");
  geo.stride = get(o.attr.stride, 1, "stride");
  geo.pad_l = get(o.attr.pad_begin, 0, "pad_begin");
  const dims d = get(o.attr.dilation, 1, "dilation");
  geo.dilation.resize(nd);
  geo.pad_r.resize(nd);
  for (std::size_t i = 0; i < nd; ++i) {
    geo.dilation[i] = d[i] - 1;
    geo.pad_r[i] = (out[2 + i] - 1) * geo.stride[i] + (geo.kernel[i] - 1) * d[i] + 1 - in[2 + i] - geo.pad_l[i];
    if (geo.kernel[i] <= 0 || geo.stride[i] <= 0 || d[i] <= 0 || geo.pad_l[i] < 0)
      bad(o, "expected positive kernel, stride and dilation and non-negative padding");
    // A negative right padding means trailing input the windows never reach (floor mode).
    if (geo.pad_r[i] < 0 && -geo.pad_r[i] >= geo.stride[i] * d[i] + geo.kernel[i])
      bad(o, fmt::format("output extent {} does not fit input extent {}", out[2 + i], in[2 + i]));
  }
  return geo;
}

// ---------------------------------------------------------------------------------------------
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
      bad(o, fmt::format("weight [{}] does not match {} input channels in {} groups", fmt::join(ws, ","), cin, groups_));
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
    w_ = relayout(be, w_plain_, fwd_pd_.weights_desc(), what("w"));
    b_ = relayout(be, b_plain.is_zero() ? fwd_pd_.bias_desc() : b_plain, fwd_pd_.bias_desc(), what("b"));
    xw_ = relayout(be, in_md(0), bwd_w_pd_.src_desc(), what("x_bwd"));
    dyd_ = relayout(be, fwd_pd_.dst_desc(), bwd_d_pd_.diff_dst_desc(), what("dy_data"));
    dyw_ = relayout(be, fwd_pd_.dst_desc(), bwd_w_pd_.diff_dst_desc(), what("dy_weights"));
    wd_ = relayout(be, w_plain_, bwd_d_pd_.weights_desc(), what("w_bwd"));
    dx_ = relayout(be, bwd_d_pd_.diff_src_desc(), in_md(0), what("dx"));
    dw_ = relayout(be, bwd_w_pd_.diff_weights_desc(), w_plain_, what("dw"));
    if (has_bias_) db_ = relayout(be, bwd_w_pd_.diff_bias_desc(), b_plain, what("db"));
  }

  void forward(const forward_args& a) override {
    be_.set_threads();
    std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, mem(fwd_pd_.src_desc(), x_.in(a.in[0]))},
                                               {DNNL_ARG_WEIGHTS, mem(fwd_pd_.weights_desc(), w_.in(a.in[1]))},
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
                    {DNNL_ARG_WEIGHTS, mem(bwd_d_pd_.weights_desc(), wd_.in(a.in[1]))},
                    {DNNL_ARG_DIFF_SRC, mem(bwd_d_pd_.diff_src_desc(), dx)}});
      wait();
      dx_.finish(a.d_in[0]);
    }
    if (a.d_in[1]) {
      std::unordered_map<int, dnnl::memory> args{
          {DNNL_ARG_SRC, mem(bwd_w_pd_.src_desc(), xw_.in(a.in[0]))},
          {DNNL_ARG_DIFF_DST, mem(bwd_w_pd_.diff_dst_desc(), dyw_.in(a.d_out[0]))},
          {DNNL_ARG_DIFF_WEIGHTS, mem(bwd_w_pd_.diff_weights_desc(), dw_.out(a.d_in[1]))}};
      if (has_bias_)
        args.emplace(DNNL_ARG_DIFF_BIAS, mem(bwd_w_pd_.diff_bias_desc(), db_.out(a.d_in[2])));
      exec(bwd_w_, args);
      wait();
      dw_.finish(a.d_in[1]);
      if (has_bias_) db_.finish(a.d_in[2]);
    }
  }
  bool backward_reads_output(int) const override { return false; }

 private:
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

// ---------------------------------------------------------------------------------------------
// Batch normalization over axis 1. Training: batch statistics, running statistics updated with
// PyTorch's rule (unbiased variance); inference: running statistics.
class batchnorm final : public cpu_kernel {
 public:
  batchnorm(cpu_backend& be, const swap::graph& g, int op) : cpu_kernel(be, g, op) {
    const auto& o = this->op();
    const auto& xs = in_shape(0);
    if (xs.size() < 2) bad(o, "expected an input [N, C, ...]");
    C_ = xs[1];
    count_ = numel(xs) / C_;
    if (o.inputs.size() < 3 || numel(in_shape(1)) != C_ || numel(in_shape(2)) != C_)
      bad(o, fmt::format("expected inputs (x, scale[{}], shift[{}][, running mean, running variance])", C_, C_));
    eps_ = static_cast<float>(o.attr.epsilon);
    momentum_ = static_cast<float>(o.attr.momentum);
    const md& x = in_md(0);
    using nf = dnnl::normalization_flags;
    const auto flags = nf::use_scale | nf::use_shift;
    train_pd_ = dnnl::batch_normalization_forward::primitive_desc(
        dnnl::batch_normalization_forward::desc(prop::forward_training, x, eps_, flags), be.eng);
    infer_pd_ = dnnl::batch_normalization_forward::primitive_desc(
        dnnl::batch_normalization_forward::desc(prop::forward_inference, x, eps_, flags | nf::use_global_stats),
        be.eng);
    bwd_pd_ = dnnl::batch_normalization_backward::primitive_desc(
        dnnl::batch_normalization_backward::desc(prop::backward, x, x, eps_, flags), be.eng, train_pd_);
    train_ = dnnl::batch_normalization_forward(train_pd_);
    infer_ = dnnl::batch_normalization_forward(infer_pd_);
    bwd_ = dnnl::batch_normalization_backward(bwd_pd_);
    set_out_md(0, train_pd_.dst_desc());
    dy_ = relayout(be, train_pd_.dst_desc(), bwd_pd_.diff_dst_desc(), what("dy"));
    dx_ = relayout(be, bwd_pd_.diff_src_desc(), x, what("dx"));
    if (o.inputs.size() >= 5) {
      mean_init_ = o.inputs[3];
      var_init_ = o.inputs[4];
    }
  }
  std::int64_t state_bytes() const override { return 2 * C_ * 4; }  // batch mean, biased variance
  std::vector<buffer_spec> buffer_specs() const override {
    return {{op().name + "/running_mean", C_, 0.0f, mean_init_}, {op().name + "/running_var", C_, 1.0f, var_init_}};
  }

  void forward(const forward_args& a) override {
    be_.set_threads();
    const md c = plain_md({C_});
    const md& x = in_md(0);
    auto* st = static_cast<float*>(a.state);
    if (a.step.training) {
      exec(train_, {{DNNL_ARG_SRC, mem(x, a.in[0])},
                    {DNNL_ARG_SCALE, mem(c, a.in[1])},
                    {DNNL_ARG_SHIFT, mem(c, a.in[2])},
                    {DNNL_ARG_MEAN, mem(c, st)},
                    {DNNL_ARG_VARIANCE, mem(c, st + C_)},
                    {DNNL_ARG_DST, mem(train_pd_.dst_desc(), a.out[0])}});
      wait();
      float* rm = a.buffers[0];
      float* rv = a.buffers[1];
      const float unbias = count_ > 1 ? static_cast<float>(count_) / static_cast<float>(count_ - 1) : 1.0f;
      for (std::int64_t i = 0; i < C_; ++i) {
        rm[i] = (1 - momentum_) * rm[i] + momentum_ * st[i];
        rv[i] = (1 - momentum_) * rv[i] + momentum_ * st[C_ + i] * unbias;
      }
    } else {
      exec(infer_, {{DNNL_ARG_SRC, mem(x, a.in[0])},
                    {DNNL_ARG_SCALE, mem(c, a.in[1])},
                    {DNNL_ARG_SHIFT, mem(c, a.in[2])},
                    {DNNL_ARG_MEAN, mem(c, a.buffers[0])},
                    {DNNL_ARG_VARIANCE, mem(c, a.buffers[1])},
                    {DNNL_ARG_DST, mem(infer_pd_.dst_desc(), a.out[0])}});
      wait();
    }
  }

  void backward(const backward_args& a) override {
    be_.set_threads();
    const md c = plain_md({C_});
    auto* st = static_cast<float*>(a.state);
    // The primitive writes all three gradients; park the ones nobody asked for.
    std::vector<float> spare(a.d_in[1] && a.d_in[2] ? 0 : 2 * static_cast<std::size_t>(C_));
    void* dscale = a.d_in[1] ? a.d_in[1] : spare.data();
    void* dshift = a.d_in[2] ? a.d_in[2] : spare.data() + (spare.empty() ? 0 : C_);
    void* dx = nullptr;
    device_buffer tmp;
    if (a.d_in[0]) {
      dx = dx_.out(a.d_in[0]);
    } else {
      tmp = device_buffer(be_.memory(), bwd_pd_.diff_src_desc().get_size(), what("dx_unused"));
      dx = tmp.data();
    }
    exec(bwd_, {{DNNL_ARG_SRC, mem(in_md(0), a.in[0])},
                {DNNL_ARG_MEAN, mem(c, st)},
                {DNNL_ARG_VARIANCE, mem(c, st + C_)},
                {DNNL_ARG_DIFF_DST, mem(bwd_pd_.diff_dst_desc(), dy_.in(a.d_out[0]))},
                {DNNL_ARG_SCALE, mem(c, a.in[1])},
                {DNNL_ARG_DIFF_SRC, mem(bwd_pd_.diff_src_desc(), dx)},
                {DNNL_ARG_DIFF_SCALE, mem(c, dscale)},
                {DNNL_ARG_DIFF_SHIFT, mem(c, dshift)}});
    wait();
    if (a.d_in[0]) dx_.finish(a.d_in[0]);
  }
  bool backward_reads_output(int) const override { return false; }

 private:
  std::int64_t C_ = 0, count_ = 0;
  float eps_ = 1e-5f, momentum_ = 0.1f;
  int mean_init_ = -1, var_init_ = -1;
  dnnl::batch_normalization_forward::primitive_desc train_pd_, infer_pd_;
  dnnl::batch_normalization_backward::primitive_desc bwd_pd_;
  dnnl::batch_normalization_forward train_, infer_;
  dnnl::batch_normalization_backward bwd_;
  relayout dy_, dx_;
};

// ---------------------------------------------------------------------------------------------
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
// a + b of equal shapes, in a's layout.
class add final : public cpu_kernel {
 public:
  add(cpu_backend& be, const swap::graph& g, int op) : cpu_kernel(be, g, op) {
    if (this->op().inputs.size() != 2 || in_shape(0) != in_shape(1) || in_shape(0) != out_shape(0))
      bad(this->op(), fmt::format("expected two inputs of equal shape, got [{}] and [{}]", fmt::join(in_shape(0), ","),
                                  fmt::join(in_shape(this->op().inputs.size() > 1 ? 1 : 0), ",")));
    const md& a = in_md(0);
    b_ = relayout(be, in_md(1), a, what("b"));
    db_ = relayout(be, a, in_md(1), what("db"));
    pd_ = dnnl::binary::primitive_desc(dnnl::binary::desc(dnnl::algorithm::binary_add, a, a, a), be.eng);
    prim_ = dnnl::binary(pd_);
    set_out_md(0, a);
  }
  void forward(const forward_args& a) override {
    be_.set_threads();
    exec(prim_, {{DNNL_ARG_SRC_0, mem(in_md(0), a.in[0])},
                 {DNNL_ARG_SRC_1, mem(in_md(0), b_.in(a.in[1]))},
                 {DNNL_ARG_DST, mem(in_md(0), a.out[0])}});
    wait();
  }
  void backward(const backward_args& a) override {
    be_.set_threads();
    if (a.d_in[0]) std::memcpy(a.d_in[0], a.d_out[0], in_md(0).get_size());
    if (a.d_in[1]) db_.run(a.d_out[0], a.d_in[1]);
  }
  bool backward_reads_input(int) const override { return false; }
  bool backward_reads_output(int) const override { return false; }

 private:
  relayout b_, db_;
  dnnl::binary::primitive_desc pd_;
  dnnl::binary prim_;
};

// ---------------------------------------------------------------------------------------------
// Concatenation along an axis; the output is plain so that the gradient splits into plain views.
class concat final : public cpu_kernel {
 public:
  concat(cpu_backend& be, const swap::graph& g, int op) : cpu_kernel(be, g, op) {
    const auto& o = this->op();
    const auto& ys = out_shape(0);
    axis_ = static_cast<int>(o.attr.axis < 0 ? static_cast<std::int64_t>(ys.size()) + o.attr.axis : o.attr.axis);
    std::vector<md> srcs;
    const md y = plain_md(ys);
    dims offset(ys.size(), 0);
    for (std::size_t i = 0; i < o.inputs.size(); ++i) {
      srcs.push_back(in_md(static_cast<int>(i)));
      const auto& s = in_shape(static_cast<int>(i));
      const md view = y.submemory_desc(dims(s.begin(), s.end()), offset);
      split_.emplace_back(be, view, in_md(static_cast<int>(i)), what("dx"));
      offset[static_cast<std::size_t>(axis_)] += s[static_cast<std::size_t>(axis_)];
    }
    if (offset[static_cast<std::size_t>(axis_)] != ys[static_cast<std::size_t>(axis_)])
      bad(o, "input extents along the axis do not add up to the output's");
    pd_ = dnnl::concat::primitive_desc(y, axis_, srcs, be.eng);
    prim_ = dnnl::concat(pd_);
    set_out_md(0, y);
  }
  void forward(const forward_args& a) override {
    be_.set_threads();
    std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_DST, mem(pd_.dst_desc(), a.out[0])}};
    for (std::size_t i = 0; i < a.in.size(); ++i)
      args.emplace(DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i), mem(in_md(static_cast<int>(i)), a.in[i]));
    exec(prim_, args);
    wait();
  }
  void backward(const backward_args& a) override {
    be_.set_threads();
    for (std::size_t i = 0; i < a.d_in.size(); ++i)
      if (a.d_in[i]) split_[i].run(a.d_out[0], a.d_in[i]);
  }
  bool backward_reads_input(int) const override { return false; }
  bool backward_reads_output(int) const override { return false; }

 private:
  int axis_ = 1;
  std::vector<relayout> split_;
  dnnl::concat::primitive_desc pd_;
  dnnl::concat prim_;
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
// Layer normalization over the last axis with scale and shift [H].
class layernorm final : public cpu_kernel {
 public:
  layernorm(cpu_backend& be, const swap::graph& g, int op) : cpu_kernel(be, g, op) {
    const auto& o = this->op();
    const auto& xs = in_shape(0);
    H_ = xs.back();
    rows_ = numel(xs) / H_;
    if (o.inputs.size() < 3 || numel(in_shape(1)) != H_ || numel(in_shape(2)) != H_)
      bad(o, fmt::format("expected inputs (x, scale[{}], shift[{}])", H_, H_));
    const md x = plain_md(xs);
    using nf = dnnl::normalization_flags;
    const auto flags = nf::use_scale | nf::use_shift;
    const float eps = static_cast<float>(o.attr.epsilon);
    fwd_pd_ = dnnl::layer_normalization_forward::primitive_desc(
        dnnl::layer_normalization_forward::desc(prop::forward_training, x, eps, flags), be.eng);
    bwd_pd_ = dnnl::layer_normalization_backward::primitive_desc(
        dnnl::layer_normalization_backward::desc(prop::backward, x, x, eps, flags), be.eng, fwd_pd_);
    fwd_ = dnnl::layer_normalization_forward(fwd_pd_);
    bwd_ = dnnl::layer_normalization_backward(bwd_pd_);
    to_plain_ = relayout(be, in_md(0), x, what("x"));
    from_plain_ = relayout(be, x, in_md(0), what("dx"));
    set_out_md(0, x);
  }
  std::int64_t state_bytes() const override { return 2 * rows_ * 4; }
  void forward(const forward_args& a) override {
    be_.set_threads();
    auto* st = static_cast<float*>(a.state);
    const md x = plain_md(in_shape(0)), c = plain_md({H_});
    exec(fwd_, {{DNNL_ARG_SRC, mem(x, to_plain_.in(a.in[0]))},
                {DNNL_ARG_SCALE, mem(c, a.in[1])},
                {DNNL_ARG_SHIFT, mem(c, a.in[2])},
                {DNNL_ARG_MEAN, mem(fwd_pd_.mean_desc(), st)},
                {DNNL_ARG_VARIANCE, mem(fwd_pd_.variance_desc(), st + rows_)},
                {DNNL_ARG_DST, mem(x, a.out[0])}});
    wait();
  }
  void backward(const backward_args& a) override {
    be_.set_threads();
    auto* st = static_cast<float*>(a.state);
    const md x = plain_md(in_shape(0)), c = plain_md({H_});
    std::vector<float> spare(2 * static_cast<std::size_t>(H_));
    device_buffer tmp;
    void* dx = nullptr;
    if (a.d_in[0]) {
      dx = from_plain_.out(a.d_in[0]);
    } else {
      tmp = device_buffer(be_.memory(), x.get_size(), what("dx_unused"));
      dx = tmp.data();
    }
    exec(bwd_, {{DNNL_ARG_SRC, mem(x, to_plain_.in(a.in[0]))},
                {DNNL_ARG_MEAN, mem(fwd_pd_.mean_desc(), st)},
                {DNNL_ARG_VARIANCE, mem(fwd_pd_.variance_desc(), st + rows_)},
                {DNNL_ARG_DIFF_DST, mem(x, a.d_out[0])},
                {DNNL_ARG_SCALE, mem(c, a.in[1])},
                {DNNL_ARG_DIFF_SRC, mem(x, dx)},
                {DNNL_ARG_DIFF_SCALE, mem(c, a.d_in[1] ? a.d_in[1] : spare.data())},
                {DNNL_ARG_DIFF_SHIFT, mem(c, a.d_in[2] ? a.d_in[2] : spare.data() + H_)}});
    wait();
    if (a.d_in[0]) from_plain_.finish(a.d_in[0]);
  }
  bool backward_reads_output(int) const override { return false; }

 private:
  std::int64_t H_ = 0, rows_ = 0;
  dnnl::layer_normalization_forward::primitive_desc fwd_pd_;
  dnnl::layer_normalization_backward::primitive_desc bwd_pd_;
  dnnl::layer_normalization_forward fwd_;
  dnnl::layer_normalization_backward bwd_;
  relayout to_plain_, from_plain_;
};

// ---------------------------------------------------------------------------------------------
// Softmax along an axis (plain layout).
class softmax final : public cpu_kernel {
 public:
  softmax(cpu_backend& be, const swap::graph& g, int op) : cpu_kernel(be, g, op) {
    const auto& xs = in_shape(0);
    const std::int64_t ax = this->op().attr.axis;
    axis_ = static_cast<int>(ax < 0 ? static_cast<std::int64_t>(xs.size()) + ax : ax);
    const md x = plain_md(xs);
    fwd_pd_ = dnnl::softmax_forward::primitive_desc(dnnl::softmax_forward::desc(prop::forward_training, x, axis_),
                                                    be.eng);
    bwd_pd_ =
        dnnl::softmax_backward::primitive_desc(dnnl::softmax_backward::desc(x, x, axis_), be.eng, fwd_pd_);
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

std::unique_ptr<kernel> make_linear(cpu_backend& be, const swap::graph& g, int op) {
  return std::make_unique<linear>(be, g, op);
}
std::unique_ptr<kernel> make_conv(cpu_backend& be, const swap::graph& g, int op) {
  return std::make_unique<conv>(be, g, op);
}
std::unique_ptr<kernel> make_batchnorm(cpu_backend& be, const swap::graph& g, int op) {
  return std::make_unique<batchnorm>(be, g, op);
}
std::unique_ptr<kernel> make_eltwise(cpu_backend& be, const swap::graph& g, int op, dnnl::algorithm alg) {
  return std::make_unique<eltwise>(be, g, op, alg);
}
std::unique_ptr<kernel> make_pool(cpu_backend& be, const swap::graph& g, int op, bool max) {
  return std::make_unique<pool>(be, g, op, max);
}
std::unique_ptr<kernel> make_add(cpu_backend& be, const swap::graph& g, int op) {
  return std::make_unique<add>(be, g, op);
}
std::unique_ptr<kernel> make_concat(cpu_backend& be, const swap::graph& g, int op) {
  return std::make_unique<concat>(be, g, op);
}
std::unique_ptr<kernel> make_reshape(cpu_backend& be, const swap::graph& g, int op) {
  return std::make_unique<reshape>(be, g, op);
}
std::unique_ptr<kernel> make_dropout(cpu_backend& be, const swap::graph& g, int op) {
  return std::make_unique<dropout>(be, g, op);
}
std::unique_ptr<kernel> make_layernorm(cpu_backend& be, const swap::graph& g, int op) {
  return std::make_unique<layernorm>(be, g, op);
}
std::unique_ptr<kernel> make_softmax(cpu_backend& be, const swap::graph& g, int op) {
  return std::make_unique<softmax>(be, g, op);
}

}  // namespace toru::train::detail::cpu
