// SPDX-License-Identifier: BSD-3-Clause
// The CUDA backend's kernels: each forward op of the graph mapped onto a layer of layers.hpp.
// Op types and input conventions are the CPU backend's (train/src/cpu/): builder names and their
// ONNX spellings, parameters as extra inputs, batch-norm running statistics as buffers.
#include <algorithm>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "backend_cuda.hpp"
#include "cuda_check.hpp"
#include "kernels.hpp"
#include "layers.hpp"
#include "toru/core/error.hpp"

namespace toru::train::detail::cuda {

namespace {

using shape_t = std::vector<std::int64_t>;

std::int64_t numel(const shape_t& s) {
  std::int64_t n = 1;
  for (auto e : s) n *= e;
  return n;
}

std::int64_t product(const shape_t& s, std::size_t begin, std::size_t end) {
  std::int64_t n = 1;
  for (std::size_t i = begin; i < end && i < s.size(); ++i) n *= s[i];
  return n;
}

const float* f(const void* p) { return static_cast<const float*>(p); }
float* f(void* p) { return static_cast<float*>(p); }

class cuda_kernel : public kernel {
 public:
  cuda_kernel(cuda_backend& be, const swap::graph& g, int op) : be_(be), ctx_(be.context()), g_(g), op_(op) {}
  std::int64_t output_bytes(int i) const override { return numel(out_shape(i)) * 4; }
  // A failing CUDA, cuDNN or cuBLAS call names itself; add the op it ran for.
  void forward(const forward_args& a) final {
    try {
      ctx_.activate();
      run_forward(a);
    } catch (const toru::error& e) {
      throw error(e.code(), fmt::format("op '{}' ({}) forward: {}", op().name, op().type, e.message()));
    }
  }
  void backward(const backward_args& a) final {
    try {
      ctx_.activate();
      run_backward(a);
    } catch (const toru::error& e) {
      throw error(e.code(), fmt::format("op '{}' ({}) backward: {}", op().name, op().type, e.message()));
    }
  }

 protected:
  virtual void run_forward(const forward_args& a) = 0;
  virtual void run_backward(const backward_args& a) = 0;
  const swap::op& op() const { return g_.ops[static_cast<std::size_t>(op_)]; }
  const shape_t& in_shape(int i) const { return g_.tensors[op().inputs.at(static_cast<std::size_t>(i))].shape; }
  const shape_t& out_shape(int i) const { return g_.tensors[op().outputs.at(static_cast<std::size_t>(i))].shape; }
  std::string what(const char* part) const { return op().name + "/" + part; }
  [[noreturn]] void bad(const std::string& msg) const {
    throw error(errc::invalid_argument, fmt::format("op '{}' ({}): {}", op().name, op().type, msg));
  }
  [[noreturn]] void unsupported(const std::string& msg) const {
    throw error(errc::unsupported, fmt::format("op '{}' ({}): {} on the CUDA backend", op().name, op().type, msg));
  }
  int as_int(std::int64_t v, const char* name) const {
    if (v < 0 || v > std::numeric_limits<int>::max())
      unsupported(fmt::format("{} = {} exceeds cuDNN's 32-bit sizes", name, v));
    return static_cast<int>(v);
  }
  /// NCHW view of an [N, C, spatial...] tensor with at most 2 spatial axes (1-D: W = 1).
  nchw image(const shape_t& s) const {
    if (s.size() < 3 || s.size() > 4)
      unsupported(fmt::format("a tensor [{}] (only [N, C, L] and [N, C, H, W] are supported)", fmt::join(s, ",")));
    return {as_int(s[0], "N"), as_int(s[1], "C"), as_int(s[2], "H"), s.size() == 4 ? as_int(s[3], "W") : 1};
  }
  void copy(void* dst, const void* src, std::int64_t bytes) const {
    if (bytes > 0 && dst != src)
      check_cuda(cudaMemcpyAsync(dst, src, static_cast<std::size_t>(bytes), cudaMemcpyDeviceToDevice, ctx_.stream()),
                 "cudaMemcpyAsync (D2D)");
  }

  cuda_backend& be_;
  cuda_context& ctx_;
  const swap::graph& g_;
  int op_;
};

// Spatial attributes as 2-vectors (1-D ops get the neutral second axis); an attribute of one value
// applies to every axis.
pair spatial(const shape_t& v, int def, std::size_t nd, const char* name, const std::string& op_name) {
  pair r{def, def};
  if (v.size() == 1) {
    r[0] = static_cast<int>(v[0]);
    if (nd == 2) r[1] = static_cast<int>(v[0]);
  } else if (v.size() == nd) {
    for (std::size_t i = 0; i < nd; ++i) r[i] = static_cast<int>(v[i]);
  } else if (!v.empty()) {
    throw error(errc::invalid_argument,
                fmt::format("op '{}' attribute {}: expected {} values, got {}", op_name, name, nd, v.size()));
  }
  return r;
}

// cuDNN pads symmetrically: a graph whose output extent needs more right padding than left (ceil
// mode, asymmetric ONNX pads that change the output) cannot run as is.
void expect_output(const nchw& got, const shape_t& want, const std::string& op_name) {
  const bool ok =
      got[0] == want[0] && got[1] == want[1] && got[2] == want[2] && (want.size() == 3 || got[3] == want[3]);
  if (!ok)
    throw error(
        errc::unsupported,
        fmt::format("op '{}': cuDNN (symmetric padding, floor mode) gives an output [{}, {}, {}, {}], the graph "
                    "wants [{}]: ceil mode or asymmetric padding are not supported on the CUDA backend",
                    op_name, got[0], got[1], got[2], got[3], fmt::join(want, ",")));
}

// ---------------------------------------------------------------------------------------------
class conv final : public cuda_kernel {
 public:
  conv(cuda_backend& be, const swap::graph& g, int op) : cuda_kernel(be, g, op), layer_(ctx_, shape()) {
    expect_output(layer_.output(), out_shape(0), this->op().name);
  }
  std::int64_t workspace_bytes() const override { return static_cast<std::int64_t>(layer_.workspace_bytes()); }
  void run_forward(const forward_args& a) override {
    layer_.forward(f(a.in[0]), f(a.in[1]), bias_ ? f(a.in[2]) : nullptr, f(a.out[0]), a.workspace);
  }
  void run_backward(const backward_args& a) override {
    layer_.backward(f(a.in[0]), f(a.in[1]), f(a.d_out[0]), f(a.d_in[0]), f(a.d_in[1]), bias_ ? f(a.d_in[2]) : nullptr,
                    a.workspace);
  }
  bool backward_reads_output(int) const override { return false; }

 private:
  conv2d_shape shape() {
    const auto& o = op();
    const auto& xs = in_shape(0);
    if (o.inputs.size() < 2) bad("expected inputs (x, weight[, bias])");
    const auto& ws = in_shape(1);
    if (ws.size() != xs.size())
      bad(fmt::format("expected input and weight of equal rank, got [{}] and [{}]", fmt::join(xs, ","),
                      fmt::join(ws, ",")));
    const std::size_t nd = xs.size() - 2;
    conv2d_shape s;
    s.x = image(xs);
    s.out_channels = as_int(ws[0], "output channels");
    s.groups = as_int(o.attr.groups, "groups");
    if (s.groups < 1 || s.x[1] % s.groups || s.out_channels % s.groups || ws[1] != s.x[1] / s.groups)
      bad(fmt::format("weight [{}] does not match {} input channels in {} groups", fmt::join(ws, ","), s.x[1],
                      s.groups));
    s.kernel = {as_int(ws[2], "kernel"), nd == 2 ? as_int(ws[3], "kernel") : 1};
    s.stride = spatial(o.attr.stride, 1, nd, "stride", o.name);
    s.pad = spatial(o.attr.pad_begin, 0, nd, "pad_begin", o.name);
    s.dilation = spatial(o.attr.dilation, 1, nd, "dilation", o.name);
    if (std::min({s.stride[0], s.stride[1], s.dilation[0], s.dilation[1]}) < 1 || std::min(s.pad[0], s.pad[1]) < 0)
      bad("expected positive stride and dilation and non-negative padding");
    bias_ = s.bias = o.inputs.size() > 2;
    if (bias_ && numel(in_shape(2)) != s.out_channels) bad(fmt::format("expected a bias of {} values", s.out_channels));
    return s;
  }
  bool bias_ = false;
  conv2d_cudnn layer_;
};

// ---------------------------------------------------------------------------------------------
class batchnorm final : public cuda_kernel {
 public:
  batchnorm(cuda_backend& be, const swap::graph& g, int op)
      : cuda_kernel(be, g, op), layer_(ctx_, shape(), op_attr().epsilon, op_attr().momentum) {
    if (this->op().inputs.size() >= 5) mean_init_ = this->op().inputs[3], var_init_ = this->op().inputs[4];
  }
  std::int64_t state_bytes() const override { return layer_.state_count() * 4; }
  std::vector<buffer_spec> buffer_specs() const override {
    return {{op().name + "/running_mean", C_, 0.0f, mean_init_}, {op().name + "/running_var", C_, 1.0f, var_init_}};
  }
  void run_forward(const forward_args& a) override {
    if (a.step.training)
      layer_.forward_training(f(a.in[0]), f(a.in[1]), f(a.in[2]), f(a.out[0]), a.buffers[0], a.buffers[1], f(a.state));
    else
      layer_.forward_inference(f(a.in[0]), f(a.in[1]), f(a.in[2]), f(a.out[0]), a.buffers[0], a.buffers[1]);
  }
  void run_backward(const backward_args& a) override {
    // cuDNN writes all three gradients; park the ones nobody asked for.
    device_buffer spare_x, spare_p;
    float* dx = f(a.d_in[0]);
    if (!dx) {
      spare_x = device_buffer(ctx_.memory(), static_cast<std::size_t>(numel(in_shape(0))) * 4, what("dx_unused"));
      dx = spare_x.as<float>();
    }
    if (!a.d_in[1] || !a.d_in[2])
      spare_p = device_buffer(ctx_.memory(), static_cast<std::size_t>(2 * C_) * 4, what("dparams_unused"));
    float* dscale = a.d_in[1] ? f(a.d_in[1]) : spare_p.as<float>();
    float* dshift = a.d_in[2] ? f(a.d_in[2]) : spare_p.as<float>() + C_;
    layer_.backward(f(a.in[0]), f(a.d_out[0]), f(a.in[1]), f(a.state), dx, dscale, dshift);
  }
  bool backward_reads_output(int) const override { return false; }

 private:
  const swap::op_attributes& op_attr() const { return op().attr; }
  // Spatial batch norm averages over N and every spatial position: any [N, C, ...] is {N, C, S, 1}.
  nchw shape() {
    const auto& xs = in_shape(0);
    if (xs.size() < 2) bad("expected an input [N, C, ...]");
    C_ = xs[1];
    if (op().inputs.size() < 3 || numel(in_shape(1)) != C_ || numel(in_shape(2)) != C_)
      bad(fmt::format("expected inputs (x, scale[{}], shift[{}][, running mean, running variance])", C_, C_));
    return {as_int(xs[0], "N"), as_int(C_, "C"), as_int(product(xs, 2, xs.size()), "spatial size"), 1};
  }
  std::int64_t C_ = 0;
  int mean_init_ = -1, var_init_ = -1;
  batchnorm_cudnn layer_;
};

// ---------------------------------------------------------------------------------------------
class activation final : public cuda_kernel {
 public:
  activation(cuda_backend& be, const swap::graph& g, int op, activation_kind kind)
      : cuda_kernel(be, g, op), layer_(ctx_, kind, numel(in_shape(0))) {}
  void run_forward(const forward_args& a) override { layer_.forward(f(a.in[0]), f(a.out[0])); }
  void run_backward(const backward_args& a) override {
    if (a.d_in[0]) layer_.backward(f(a.in[0]), f(a.out[0]), f(a.d_out[0]), f(a.d_in[0]));
  }

 private:
  activation_cudnn layer_;
};

class gelu final : public cuda_kernel {
 public:
  using cuda_kernel::cuda_kernel;
  void run_forward(const forward_args& a) override {
    check_cuda(gelu_forward(f(a.in[0]), f(a.out[0]), numel(in_shape(0)), ctx_.stream()), "gelu_forward");
  }
  void run_backward(const backward_args& a) override {
    if (a.d_in[0])
      check_cuda(gelu_backward(f(a.in[0]), f(a.d_out[0]), f(a.d_in[0]), numel(in_shape(0)), ctx_.stream()),
                 "gelu_backward");
  }
  bool backward_reads_output(int) const override { return false; }
};

// ---------------------------------------------------------------------------------------------
// Max and average pooling. cuDNN pads symmetrically with the left padding; where the graph's
// output needs a different right padding (ceil mode, asymmetric ONNX pads), max pooling runs on an
// explicitly padded copy of the input (-inf border, kept as the kernel's state for the backward);
// average pooling, whose divisor depends on what the padding covers, is refused then.
class pool final : public cuda_kernel {
 public:
  pool(cuda_backend& be, const swap::graph& g, int op, bool max) : cuda_kernel(be, g, op) { make(max); }
  std::int64_t state_bytes() const override { return padded_ ? count(xp_) * 4 : 0; }
  void run_forward(const forward_args& a) override {
    if (!padded_) return layer_->forward(f(a.in[0]), f(a.out[0]));
    float* xp = f(a.state);
    check_cuda(fill(xp, -std::numeric_limits<float>::infinity(), count(xp_), ctx_.stream()), "fill (pool padding)");
    check_cuda(pad_planes(f(a.in[0]), xp, planes(), x_[2], x_[3], xp_[2], xp_[3], top_, left_, ctx_.stream()),
               "pad_planes");
    layer_->forward(xp, f(a.out[0]));
  }
  void run_backward(const backward_args& a) override {
    if (!a.d_in[0]) return;
    if (!padded_) return layer_->backward(f(a.in[0]), f(a.out[0]), f(a.d_out[0]), f(a.d_in[0]));
    device_buffer dxp(ctx_.memory(), static_cast<std::size_t>(count(xp_)) * 4, what("dx_padded"));
    layer_->backward(f(a.state), f(a.out[0]), f(a.d_out[0]), dxp.as<float>());
    check_cuda(
        crop_planes(dxp.as<float>(), f(a.d_in[0]), planes(), x_[2], x_[3], xp_[2], xp_[3], top_, left_, ctx_.stream()),
        "crop_planes");
  }

 private:
  std::int64_t planes() const { return static_cast<std::int64_t>(x_[0]) * x_[1]; }
  void make(bool max) {
    const auto& o = op();
    const auto& xs = in_shape(0);
    const auto& ys = out_shape(0);
    x_ = image(xs);
    if (ys.size() != xs.size()) bad("expected output of the input's rank");
    const std::size_t nd = xs.size() - 2;
    pair window{}, stride{}, pad{0, 0};
    if (o.type == "GlobalAveragePool" || o.attr.kernel.empty()) {
      // Global or adaptive pooling with an integral ratio: window = stride = in / out.
      for (std::size_t i = 0; i < 2; ++i) {
        const std::int64_t in = i < nd ? xs[2 + i] : 1, out = i < nd ? ys[2 + i] : 1;
        if (in % out)
          bad(fmt::format("adaptive pooling [{}] -> [{}] needs output extents that divide the input's",
                          fmt::join(xs, ","), fmt::join(ys, ",")));
        window[i] = stride[i] = as_int(in / out, "window");
      }
    } else {
      window = spatial(o.attr.kernel, 1, nd, "kernel", o.name);
      stride = spatial(o.attr.stride, 1, nd, "stride", o.name);
      pad = spatial(o.attr.pad_begin, 0, nd, "pad_begin", o.name);
      if (std::min({window[0], window[1], stride[0], stride[1]}) < 1 || std::min(pad[0], pad[1]) < 0)
        bad("expected positive kernel and stride and non-negative padding");
      const pair pad_end = spatial(o.attr.pad_end, -1, nd, "pad_end", o.name);
      // Average pooling that counts padding divides by what the padding covers: only symmetric.
      if (!max && o.attr.count_include_pad && !o.attr.pad_end.empty() && (pad_end[0] != pad[0] || pad_end[1] != pad[1]))
        unsupported("average pooling with asymmetric padding counted in the divisor");
    }
    const auto kind = max ? pool_kind::max : pool_kind::avg;
    layer_ = std::make_unique<pool_cudnn>(ctx_, x_, kind, window, stride, pad, o.attr.count_include_pad);
    const nchw& got = layer_->output();
    const bool fits = got[2] == ys[2] && (nd == 1 || got[3] == ys[3]);
    if (fits || !max) return expect_output(got, ys, o.name);
    // Right padding the output extent needs (negative: trailing input no window reaches).
    pair extra{0, 0};
    for (std::size_t i = 0; i < nd; ++i) {
      const std::int64_t in = xs[2 + i], out = ys[2 + i];
      extra[i] = as_int(std::max<std::int64_t>((out - 1) * stride[i] + window[i] - in - pad[i], 0), "padding");
    }
    padded_ = true;
    top_ = pad[0], left_ = pad[1];
    xp_ = {x_[0], x_[1], x_[2] + pad[0] + extra[0], x_[3] + pad[1] + extra[1]};
    layer_ = std::make_unique<pool_cudnn>(ctx_, xp_, kind, window, stride, pair{0, 0}, o.attr.count_include_pad);
    expect_output(layer_->output(), ys, o.name);
  }
  nchw x_{}, xp_{};
  bool padded_ = false;
  int top_ = 0, left_ = 0;
  std::unique_ptr<pool_cudnn> layer_;
};

// ---------------------------------------------------------------------------------------------
class add final : public cuda_kernel {
 public:
  add(cuda_backend& be, const swap::graph& g, int op) : cuda_kernel(be, g, op) {
    if (this->op().inputs.size() != 2 || in_shape(0) != in_shape(1) || in_shape(0) != out_shape(0))
      bad(fmt::format("expected two inputs of equal shape, got [{}] and [{}]", fmt::join(in_shape(0), ","),
                      fmt::join(in_shape(this->op().inputs.size() > 1 ? 1 : 0), ",")));
  }
  void run_forward(const forward_args& a) override {
    check_cuda(add_forward(f(a.in[0]), f(a.in[1]), f(a.out[0]), numel(out_shape(0)), ctx_.stream()), "add_forward");
  }
  void run_backward(const backward_args& a) override {
    for (int i = 0; i < 2; ++i)
      if (a.d_in[static_cast<std::size_t>(i)]) copy(a.d_in[static_cast<std::size_t>(i)], a.d_out[0], output_bytes(0));
  }
  bool backward_reads_input(int) const override { return false; }
  bool backward_reads_output(int) const override { return false; }
};

// Concatenation: the output as [outer, total * inner], input i a column block [outer, n_i * inner]
// of it — one strided 2-D copy per input, both ways.
class concat final : public cuda_kernel {
 public:
  concat(cuda_backend& be, const swap::graph& g, int op) : cuda_kernel(be, g, op) {
    const auto& ys = out_shape(0);
    const std::int64_t ax =
        this->op().attr.axis < 0 ? static_cast<std::int64_t>(ys.size()) + this->op().attr.axis : this->op().attr.axis;
    if (ax < 0 || ax >= static_cast<std::int64_t>(ys.size()))
      bad(fmt::format("axis {} out of range for rank {}", this->op().attr.axis, ys.size()));
    const auto axis = static_cast<std::size_t>(ax);
    outer_ = product(ys, 0, axis);
    inner_ = product(ys, axis + 1, ys.size());
    total_ = ys[axis];
    std::int64_t sum = 0;
    for (std::size_t i = 0; i < this->op().inputs.size(); ++i) {
      const auto& s = in_shape(static_cast<int>(i));
      if (s.size() != ys.size()) bad("inputs and output differ in rank");
      extents_.push_back(s[axis]);
      sum += s[axis];
    }
    if (sum != total_) bad("input extents along the axis do not add up to the output's");
  }
  void run_forward(const forward_args& a) override {
    std::int64_t offset = 0;
    for (std::size_t i = 0; i < a.in.size(); ++i) {
      copy_block(f(a.out[0]) + offset * inner_, total_, f(a.in[i]), extents_[i]);
      offset += extents_[i];
    }
  }
  void run_backward(const backward_args& a) override {
    std::int64_t offset = 0;
    for (std::size_t i = 0; i < a.d_in.size(); ++i) {
      if (a.d_in[i]) copy_block(f(a.d_in[i]), extents_[i], f(a.d_out[0]) + offset * inner_, total_);
      offset += extents_[i];
    }
  }
  bool backward_reads_input(int) const override { return false; }
  bool backward_reads_output(int) const override { return false; }

 private:
  // Copies [outer, width * inner] elements between rows of dst_cols and src_cols (times inner) floats.
  void copy_block(float* dst, std::int64_t dst_cols, const float* src, std::int64_t src_cols) const {
    const std::int64_t width = std::min(dst_cols, src_cols) * inner_;
    if (width == 0 || outer_ == 0) return;
    check_cuda(cudaMemcpy2DAsync(dst, static_cast<std::size_t>(dst_cols * inner_) * 4, src,
                                 static_cast<std::size_t>(src_cols * inner_) * 4, static_cast<std::size_t>(width) * 4,
                                 static_cast<std::size_t>(outer_), cudaMemcpyDeviceToDevice, ctx_.stream()),
               "cudaMemcpy2DAsync (concat)");
  }
  std::int64_t outer_ = 1, inner_ = 1, total_ = 0;
  std::vector<std::int64_t> extents_;
};

class reshape final : public cuda_kernel {
 public:
  reshape(cuda_backend& be, const swap::graph& g, int op) : cuda_kernel(be, g, op) {
    if (numel(in_shape(0)) != numel(out_shape(0)))
      bad(fmt::format("cannot reshape [{}] to [{}]", fmt::join(in_shape(0), ","), fmt::join(out_shape(0), ",")));
  }
  void run_forward(const forward_args& a) override { copy(a.out[0], a.in[0], output_bytes(0)); }
  void run_backward(const backward_args& a) override {
    if (a.d_in[0]) copy(a.d_in[0], a.d_out[0], output_bytes(0));
  }
  bool backward_reads_input(int) const override { return false; }
  bool backward_reads_output(int) const override { return false; }
};

// ---------------------------------------------------------------------------------------------
// Dropout: the CPU backend's mask (kernels.hpp), recomputed in backward instead of stored.
class dropout final : public cuda_kernel {
 public:
  dropout(cuda_backend& be, const swap::graph& g, int op) : cuda_kernel(be, g, op) {
    p_ = this->op().attr.p;
    if (!(p_ >= 0 && p_ < 1)) bad(fmt::format("attribute p: expected a probability in [0, 1), got {}", p_));
    count_ = numel(in_shape(0));
    per_sample_ = count_ / in_shape(0)[0];
  }
  void run_forward(const forward_args& a) override {
    if (!a.step.training || p_ == 0) return copy(a.out[0], a.in[0], count_ * 4);
    check_cuda(dropout_forward(f(a.in[0]), f(a.out[0]), count_, key(a.step), ctx_.stream()), "dropout_forward");
  }
  void run_backward(const backward_args& a) override {
    if (!a.d_in[0]) return;
    if (p_ == 0) return copy(a.d_in[0], a.d_out[0], count_ * 4);
    check_cuda(dropout_backward(f(a.d_out[0]), f(a.d_in[0]), count_, key(a.step), ctx_.stream()), "dropout_backward");
  }
  bool backward_reads_input(int) const override { return false; }
  bool backward_reads_output(int) const override { return false; }

 private:
  dropout_key key(const step_info& s) const {
    return {.seed = s.seed,
            .step = s.step,
            .op = static_cast<std::uint64_t>(op_),
            .first_sample = s.first_sample,
            .sample_size = per_sample_,
            .p = static_cast<float>(p_),
            .scale = static_cast<float>(1.0 / (1.0 - p_))};
  }
  double p_ = 0;
  std::int64_t count_ = 0, per_sample_ = 1;
};

// ---------------------------------------------------------------------------------------------
class layernorm final : public cuda_kernel {
 public:
  layernorm(cuda_backend& be, const swap::graph& g, int op) : cuda_kernel(be, g, op) {
    const auto& xs = in_shape(0);
    H_ = xs.back();
    rows_ = numel(xs) / H_;
    if (this->op().inputs.size() < 3 || numel(in_shape(1)) != H_ || numel(in_shape(2)) != H_)
      bad(fmt::format("expected inputs (x, scale[{}], shift[{}])", H_, H_));
    eps_ = static_cast<float>(this->op().attr.epsilon);
  }
  std::int64_t state_bytes() const override { return 2 * rows_ * 4; }  // mean, 1/sqrt(var + eps) per row
  void run_forward(const forward_args& a) override {
    float* st = f(a.state);
    check_cuda(layer_norm_forward(f(a.in[0]), f(a.in[1]), f(a.in[2]), f(a.out[0]), st, st + rows_, rows_, H_, eps_,
                                  ctx_.stream()),
               "layer_norm_forward");
  }
  void run_backward(const backward_args& a) override {
    const float* st = f(a.state);
    device_buffer spare;
    if (!a.d_in[1] || !a.d_in[2])
      spare = device_buffer(ctx_.memory(), static_cast<std::size_t>(2 * H_) * 4, what("dparams_unused"));
    float* dscale = a.d_in[1] ? f(a.d_in[1]) : spare.as<float>();
    float* dshift = a.d_in[2] ? f(a.d_in[2]) : spare.as<float>() + H_;
    check_cuda(layer_norm_backward(f(a.in[0]), f(a.d_out[0]), f(a.in[1]), st, st + rows_, f(a.d_in[0]), dscale, dshift,
                                   rows_, H_, ctx_.stream()),
               "layer_norm_backward");
  }
  bool backward_reads_output(int) const override { return false; }

 private:
  std::int64_t H_ = 0, rows_ = 0;
  float eps_ = 1e-5f;
};

// ---------------------------------------------------------------------------------------------
// [outer, classes, inner] split of a shape around an axis (negative counts from the end).
struct axis_split {
  std::int64_t outer = 1, classes = 1, inner = 1;
};
axis_split split_at(const shape_t& s, std::int64_t axis, const std::string& op_name) {
  const std::int64_t ax = axis < 0 ? static_cast<std::int64_t>(s.size()) + axis : axis;
  if (ax < 0 || ax >= static_cast<std::int64_t>(s.size()))
    throw error(errc::invalid_argument,
                fmt::format("op '{}' axis: expected an axis of a rank-{} tensor, got {}", op_name, s.size(), axis));
  const auto a = static_cast<std::size_t>(ax);
  return {product(s, 0, a), s[a], product(s, a + 1, s.size())};
}

class softmax final : public cuda_kernel {
 public:
  softmax(cuda_backend& be, const swap::graph& g, int op)
      : cuda_kernel(be, g, op),
        split_(split_at(in_shape(0), this->op().attr.axis, this->op().name)),
        layer_(ctx_, split_.outer, split_.classes, split_.inner) {}
  void run_forward(const forward_args& a) override { layer_.forward(f(a.in[0]), f(a.out[0])); }
  void run_backward(const backward_args& a) override {
    if (a.d_in[0]) layer_.backward(f(a.out[0]), f(a.d_out[0]), f(a.d_in[0]));
  }
  bool backward_reads_input(int) const override { return false; }

 private:
  axis_split split_;
  softmax_cudnn layer_;
};

// ---------------------------------------------------------------------------------------------
// linear / Gemm / MatMul with a 2-D weight: leading input axes flatten into the rows.
class linear final : public cuda_kernel {
 public:
  linear(cuda_backend& be, const swap::graph& g, int op) : cuda_kernel(be, g, op), layer_(make()) {}
  void run_forward(const forward_args& a) override {
    layer_.forward(f(a.in[0]), f(a.in[1]), bias_ ? f(a.in[2]) : nullptr, f(a.out[0]));
  }
  void run_backward(const backward_args& a) override {
    layer_.backward(f(a.in[0]), f(a.in[1]), f(a.d_out[0]), f(a.d_in[0]), f(a.d_in[1]), bias_ ? f(a.d_in[2]) : nullptr);
  }
  bool backward_reads_output(int) const override { return false; }

 private:
  linear_cublas make() {
    const auto& o = op();
    if (o.inputs.size() < 2) bad("expected inputs (x, weight[, bias])");
    const auto& xs = in_shape(0);
    const auto& ws = in_shape(1);
    if (ws.size() != 2) bad(fmt::format("expected a 2-D weight, got [{}]", fmt::join(ws, ",")));
    const bool trans_b = o.attr.trans_b;
    const std::int64_t K = xs.back(), N = trans_b ? ws[0] : ws[1];
    if ((trans_b ? ws[1] : ws[0]) != K)
      bad(fmt::format("weight [{}] does not match {} input features", fmt::join(ws, ","), K));
    const std::int64_t M = numel(xs) / K;
    bias_ = o.inputs.size() > 2;
    if (bias_ && numel(in_shape(2)) != N) bad(fmt::format("expected a bias of {} values", N));
    if (numel(out_shape(0)) != M * N) bad("output shape does not match the input and weight");
    return linear_cublas(ctx_, M, K, N, bias_, trans_b);
  }
  bool bias_ = false;
  linear_cublas layer_;
};

// The builders' batched product of two activations: a [..., M, K] x b [..., K, N], b either with
// the same batch or 2-D (shared).
class matmul final : public cuda_kernel {
 public:
  matmul(cuda_backend& be, const swap::graph& g, int op) : cuda_kernel(be, g, op), layer_(make()) {}
  void run_forward(const forward_args& a) override { layer_.forward(f(a.in[0]), f(a.in[1]), f(a.out[0])); }
  void run_backward(const backward_args& a) override {
    layer_.backward(f(a.in[0]), f(a.in[1]), f(a.d_out[0]), f(a.d_in[0]), f(a.d_in[1]));
  }
  bool backward_reads_output(int) const override { return false; }

 private:
  matmul_cublas make() {
    if (op().inputs.size() != 2) bad("expected inputs (a, b)");
    const auto& as = in_shape(0);
    const auto& bs = in_shape(1);
    if (as.size() < 2 || bs.size() < 2) bad("expected inputs of rank >= 2");
    const std::int64_t M = as[as.size() - 2], K = as.back(), N = bs.back();
    const std::int64_t batch = product(as, 0, as.size() - 2);
    const bool b_batched = bs.size() > 2;
    if (bs[bs.size() - 2] != K || (b_batched && product(bs, 0, bs.size() - 2) != batch) ||
        numel(out_shape(0)) != batch * M * N)
      bad(fmt::format("cannot multiply [{}] by [{}] into [{}]", fmt::join(as, ","), fmt::join(bs, ","),
                      fmt::join(out_shape(0), ",")));
    return matmul_cublas(ctx_, batch, M, K, N, b_batched);
  }
  matmul_cublas layer_;
};

// ---------------------------------------------------------------------------------------------
class loss final : public loss_kernel {
 public:
  loss(cuda_backend& be, const swap::graph& g, int op)
      : ctx_(be.context()), split_(make_split(g, op)), layer_(ctx_, split_.outer, split_.classes, split_.inner) {}
  std::int64_t output_bytes(int) const override { return 4; }
  std::int64_t state_bytes() const override { return layer_.state_count() * 4; }
  void forward(const forward_args& a) override {
    ctx_.activate();
    const auto r = layer_.forward(f(a.in[0]), static_cast<const std::int32_t*>(a.in[1]), f(a.state));
    result_ = {.loss = r.mean_loss, .correct = r.correct};
    first_bad_ = r.first_bad_label;
    value_ = static_cast<float>(r.mean_loss);
    check_cuda(cudaMemcpyAsync(a.out[0], &value_, 4, cudaMemcpyHostToDevice, ctx_.stream()), "cudaMemcpyAsync (loss)");
    ctx_.synchronize();
  }
  void backward(const backward_args& a) override {
    ctx_.activate();
    if (a.d_in[0]) layer_.backward(f(a.state), static_cast<const std::int32_t*>(a.in[1]), f(a.d_in[0]));
  }
  bool backward_reads_output(int) const override { return false; }
  forward_result result() const override { return result_; }
  std::int64_t first_bad_label() const override { return first_bad_; }

 private:
  static axis_split make_split(const swap::graph& g, int op) {
    const auto& o = g.ops[static_cast<std::size_t>(op)];
    const auto& s = g.tensors[o.inputs.at(0)].shape;
    if (s.size() < 2)
      throw error(errc::invalid_argument, fmt::format("op '{}': expected logits of rank >= 2 ([N, classes, ...]), got "
                                                      "rank {}",
                                                      o.name, s.size()));
    const axis_split sp = split_at(s, o.attr.axis, o.name);
    if (sp.outer < 1 || o.attr.axis == 0)
      throw error(errc::invalid_argument, fmt::format("op '{}' axis: expected a class axis >= 1", o.name));
    const auto labels = g.tensors[o.inputs.at(1)].bytes / 4;
    if (labels != sp.outer * sp.inner)
      throw error(errc::invalid_argument,
                  fmt::format("op '{}' labels '{}': expected {} int32 labels, got a tensor of {}", o.name,
                              g.tensors[o.inputs[1]].name, sp.outer * sp.inner, labels));
    return sp;
  }
  cuda_context& ctx_;
  axis_split split_;
  softmax_xent_cudnn layer_;
  forward_result result_;
  std::int64_t first_bad_ = -1;
  float value_ = 0;
};

}  // namespace

std::unique_ptr<kernel> make_cuda_kernel(cuda_backend& be, const swap::graph& g, int op) {
  const auto& o = g.ops[static_cast<std::size_t>(op)];
  const std::string& t = o.type;
  if (t == "linear" || t == "Gemm" || t == "MatMul") return std::make_unique<linear>(be, g, op);
  if (t == "matmul") return std::make_unique<matmul>(be, g, op);
  if (t == "conv" || t == "Conv") return std::make_unique<conv>(be, g, op);
  if (t == "batchnorm" || t == "BatchNormalization") return std::make_unique<batchnorm>(be, g, op);
  if (t == "relu" || t == "Relu") return std::make_unique<activation>(be, g, op, activation_kind::relu);
  if (t == "sigmoid" || t == "Sigmoid") return std::make_unique<activation>(be, g, op, activation_kind::sigmoid);
  if (t == "tanh" || t == "Tanh") return std::make_unique<activation>(be, g, op, activation_kind::tanh);
  if (t == "gelu" || t == "Gelu") return std::make_unique<gelu>(be, g, op);
  if (t == "maxpool" || t == "MaxPool") return std::make_unique<pool>(be, g, op, true);
  if (t == "avgpool" || t == "AveragePool" || t == "GlobalAveragePool") return std::make_unique<pool>(be, g, op, false);
  if (t == "add" || t == "Add" || (t == "Sum" && o.inputs.size() == 2)) return std::make_unique<add>(be, g, op);
  if (t == "concat" || t == "Concat") return std::make_unique<concat>(be, g, op);
  if (t == "flatten" || t == "Flatten" || t == "reshape" || t == "Reshape" || t == "Squeeze" || t == "Unsqueeze" ||
      t == "Identity")
    return std::make_unique<reshape>(be, g, op);
  if (t == "dropout" || t == "Dropout") return std::make_unique<dropout>(be, g, op);
  if (t == "layernorm" || t == "LayerNormalization") return std::make_unique<layernorm>(be, g, op);
  if (t == "softmax" || t == "Softmax") return std::make_unique<softmax>(be, g, op);
  if (t == "loss") return std::make_unique<loss>(be, g, op);
  throw error(errc::unsupported,
              fmt::format("op '{}': type '{}' is not supported by the CUDA backend (supported: linear/Gemm/MatMul, "
                          "matmul, conv/Conv, batchnorm, relu, gelu, sigmoid, tanh, maxpool, avgpool, "
                          "GlobalAveragePool, add, concat, flatten/reshape, dropout, layernorm, softmax, loss)",
                          o.name, t));
}

}  // namespace toru::train::detail::cuda
