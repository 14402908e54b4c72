// SPDX-License-Identifier: BSD-3-Clause
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "cpu.hpp"
#include "toru/core/error.hpp"

namespace toru::train::detail {

namespace cpu {

md plain_md(const std::vector<std::int64_t>& shape) {
  dims d(shape.begin(), shape.end());
  dims strides(d.size(), 1);
  for (std::size_t i = d.size(); i-- > 1;) strides[i - 1] = strides[i] * d[i];
  return md(d, dnnl::memory::data_type::f32, strides);
}

cpu_backend::cpu_backend(const model_options& o)
    : threads(o.threads), mem_(make_host_memory({.capacity = o.memory_capacity})) {
  if (o.threads < 0)
    throw error(errc::invalid_argument,
                fmt::format("threads: expected 0 (default) or a positive count, got {}", o.threads));
}

void cpu_backend::set_threads() const {
  if (threads > 0) omp_set_num_threads(threads);
}

std::unique_ptr<kernel> cpu_backend::make_kernel(const swap::graph& g, int op, const model_options& options) {
  if (graph_ != &g) {
    graph_ = &g;
    layouts_.assign(g.tensors.size(), md{});
    for (std::size_t t = 0; t < g.tensors.size(); ++t)
      if (g.tensors[t].producer < 0 && g.tensors[t].type == swap::dtype::f32)
        layouts_[t] = plain_md(g.tensors[t].shape);
  }
  set_threads();
  const auto& o = g.ops[static_cast<std::size_t>(op)];
  const std::string& t = o.type;
  using a = dnnl::algorithm;
  if (t == "linear" || t == "Gemm" || t == "MatMul") return make_linear(*this, g, op);
  if (t == "conv" || t == "Conv") return make_conv(*this, g, op);
  if (t == "batchnorm" || t == "BatchNormalization")
    return make_batchnorm(*this, g, op, fused_relu_of(g, op, options) >= 0);
  if (t == "relu" || t == "Relu") {
    const int x = o.inputs.empty() ? -1 : o.inputs[0];
    const int producer = x < 0 ? -1 : g.tensors[static_cast<std::size_t>(x)].producer;
    if (producer >= 0 && fused_relu_of(g, producer, options) == op) return make_fused_relu(*this, g, op);
    return make_eltwise(*this, g, op, a::eltwise_relu);
  }
  if (t == "gelu" || t == "Gelu") return make_eltwise(*this, g, op, a::eltwise_gelu_erf);
  if (t == "sigmoid" || t == "Sigmoid") return make_eltwise(*this, g, op, a::eltwise_logistic);
  if (t == "tanh" || t == "Tanh") return make_eltwise(*this, g, op, a::eltwise_tanh);
  if (t == "clip" || t == "Clip") return make_clip(*this, g, op);
  // x * sigmoid(alpha x) with alpha 1; the importer fuses the exported Sigmoid and Mul into it.
  if (t == "silu" || t == "Silu") return make_eltwise(*this, g, op, a::eltwise_swish, 1.0f);
  // oneDNN 2.x's hardswish is PyTorch's x * relu6(x + 3) / 6 (ONNX HardSwish); it takes no parameters.
  if (t == "hardswish" || t == "HardSwish") return make_eltwise(*this, g, op, a::eltwise_hardswish);
  if (t == "hardsigmoid" || t == "HardSigmoid") return make_hardsigmoid(*this, g, op);
  if (t == "mul" || t == "Mul") return make_mul(*this, g, op);
  if (t == "pad" || t == "Pad") return make_pad(*this, g, op);
  if (t == "maxpool" || t == "MaxPool") return make_pool(*this, g, op, true);
  if (t == "avgpool" || t == "AveragePool" || t == "GlobalAveragePool") return make_pool(*this, g, op, false);
  if (t == "add" || t == "Add" || (t == "Sum" && o.inputs.size() == 2)) {
    const bool same = o.inputs.size() == 2 && g.tensors[o.inputs[0]].shape == g.tensors[o.inputs[1]].shape;
    return same ? make_add(*this, g, op) : make_add_broadcast(*this, g, op);
  }
  // y = scale * x + shift: arithmetic with a folded scalar (attention's 1/sqrt(d)).
  if (t == "scale")
    return make_eltwise(*this, g, op, a::eltwise_linear, static_cast<float>(o.attr.scale),
                        static_cast<float>(o.attr.shift));
  if (t == "matmul") return make_matmul(*this, g, op);
  if (t == "transpose" || t == "Transpose") return make_transpose(*this, g, op);
  if (t == "slice" || t == "Slice") return make_slice(*this, g, op);
  if (t == "gather" || t == "Gather") return make_gather(*this, g, op);
  if (t == "expand" || t == "Expand") return make_expand(*this, g, op);
  if (t == "reduce_mean" || t == "ReduceMean") return make_reduce_mean(*this, g, op);
  if (t == "concat" || t == "Concat") return make_concat(*this, g, op);
  if (t == "flatten" || t == "Flatten" || t == "reshape" || t == "Reshape" || t == "Squeeze" || t == "Unsqueeze" ||
      t == "Identity")
    return make_reshape(*this, g, op);
  if (t == "dropout" || t == "Dropout") return make_dropout(*this, g, op);
  if (t == "layernorm" || t == "LayerNormalization") return make_layernorm(*this, g, op);
  if (t == "softmax" || t == "Softmax") return make_softmax(*this, g, op);
  if (t == "loss") return make_loss(*this, g, op);
  throw error(
      errc::unsupported,
      fmt::format(
          "op '{}': type '{}' is not supported by the CPU backend (supported: linear/Gemm/MatMul, "
          "conv/Conv, batchnorm, relu, gelu, sigmoid, tanh, clip, silu, hardswish, hardsigmoid, mul, pad, maxpool, "
          "avgpool, "
          "GlobalAveragePool, add (broadcasting), scale, matmul, transpose, slice, gather, expand, reduce_mean, "
          "concat, flatten/reshape, dropout, layernorm, softmax, loss)",
          o.name, t));
}

void cpu_backend::write_plain(int tensor, const float* host, void* storage) {
  const auto& ten = graph_->tensors[static_cast<std::size_t>(tensor)];
  if (ten.type == swap::dtype::i32 || ten.type == swap::dtype::i64) {
    // Token ids (an embedding's Gather indices) arrive as floats holding integers.
    const auto n = numel(ten.shape);
    for (std::int64_t i = 0; i < n; ++i) {
      const float v = host[i];
      if (!(v == std::nearbyint(v) && std::abs(v) < 16777216.0f))
        throw error(errc::invalid_argument, fmt::format("input '{}'[{}]: expected an integer index (a float "
                                                        "holding an integer below 2^24), got {}",
                                                        ten.name, i, v));
      if (ten.type == swap::dtype::i32)
        static_cast<std::int32_t*>(storage)[i] = static_cast<std::int32_t>(v);
      else
        static_cast<std::int64_t*>(storage)[i] = static_cast<std::int64_t>(v);
    }
    return;
  }
  const md& to = layout(tensor);
  const md from = plain_md(graph_->tensors[static_cast<std::size_t>(tensor)].shape);
  if (from == to) {
    std::memcpy(storage, host, from.get_size());
    return;
  }
  dnnl::memory a(from, eng, const_cast<float*>(host)), b(to, eng, storage);
  dnnl::reorder(a, b).execute(strm, a, b);
  strm.wait();
}

void cpu_backend::read_plain(int tensor, const void* storage, float* host) {
  const md& from = layout(tensor);
  const md to = plain_md(graph_->tensors[static_cast<std::size_t>(tensor)].shape);
  if (from == to) {
    std::memcpy(host, storage, to.get_size());
    return;
  }
  dnnl::memory a(from, eng, const_cast<void*>(storage)), b(to, eng, host);
  dnnl::reorder(a, b).execute(strm, a, b);
  strm.wait();
}

// An empty tensor's buffer may be null, and memcpy's pointers must be valid even for 0 bytes.
void cpu_backend::copy_to_device(void* dst, const void* src, std::size_t bytes) {
  if (bytes != 0) std::memcpy(dst, src, bytes);
}
void cpu_backend::copy_to_host(void* dst, const void* src, std::size_t bytes) {
  if (bytes != 0) std::memcpy(dst, src, bytes);
}

void cpu_backend::accumulate(float* dst, const float* src, std::int64_t count) {
  set_threads();
#pragma omp parallel for simd
  for (std::int64_t i = 0; i < count; ++i) dst[i] += src[i];
}

void cpu_backend::fill(float* dst, float value, std::int64_t count) {
  set_threads();
#pragma omp parallel for simd schedule(static)
  for (std::int64_t i = 0; i < count; ++i) dst[i] = value;
}

void parallel_copy(void* dst, const void* src, std::size_t bytes) {
  constexpr std::size_t chunk = std::size_t{1} << 18;
  const std::size_t chunks = (bytes + chunk - 1) / chunk;
#pragma omp parallel for schedule(static) if (chunks > 1)
  for (std::size_t c = 0; c < chunks; ++c)
    std::memcpy(static_cast<char*>(dst) + c * chunk, static_cast<const char*>(src) + c * chunk,
                std::min(chunk, bytes - c * chunk));
}

relayout::relayout(cpu_backend& be, const md& from, const md& to, const std::string& what)
    : be_(&be), from_(from), to_(to) {
  if (from == to) return;
  prim_ = std::make_unique<dnnl::reorder>(dnnl::reorder::primitive_desc(be.eng, from, be.eng, to));
  scratch_ = device_buffer(be.memory(), std::max(from.get_size(), to.get_size()), what);
}

void* relayout::scratch(void* workspace) {
  if (workspace_offset_ == SIZE_MAX) return scratch_.data();
  if (!workspace) throw error(errc::internal, "relayout: a workspace relayout was used without the call's workspace");
  return static_cast<char*>(workspace) + workspace_offset_;
}

relayout workspace_relayouts::make(const md& from, const md& to) {
  relayout r;
  r.be_ = &be_;
  r.from_ = from;
  r.to_ = to;
  if (from == to) return r;
  r.prim_ = std::make_unique<dnnl::reorder>(dnnl::reorder::primitive_desc(be_.eng, from, be_.eng, to));
  r.workspace_offset_ = bytes_;
  bytes_ += (std::max(from.get_size(), to.get_size()) + 63) / 64 * 64;
  return r;
}

const void* relayout::in(const void* src, void* workspace) {
  if (identity()) return src;
  void* s = scratch(workspace);
  dnnl::memory a(from_, be_->eng, const_cast<void*>(src)), b(to_, be_->eng, s);
  prim_->execute(be_->strm, a, b);
  be_->strm.wait();
  return s;
}

void relayout::finish(void* dst, void* workspace) {
  if (identity()) return;
  dnnl::memory a(from_, be_->eng, scratch(workspace)), b(to_, be_->eng, dst);
  prim_->execute(be_->strm, a, b);
  be_->strm.wait();
}

void relayout::run(const void* src, void* dst) {
  if (identity()) {
    if (src != dst) parallel_copy(dst, src, from_.get_size());
    return;
  }
  dnnl::memory a(from_, be_->eng, const_cast<void*>(src)), b(to_, be_->eng, dst);
  prim_->execute(be_->strm, a, b);
  be_->strm.wait();
}

}  // namespace cpu

std::unique_ptr<backend> make_cpu_backend(const model_options& options) {
  return std::make_unique<cpu::cpu_backend>(options);
}

}  // namespace toru::train::detail
