// SPDX-License-Identifier: BSD-3-Clause
// Softmax and softmax cross-entropy: cuDNN's (log-)softmax, the loss and its gradient in kernels.cu
// (layers.hpp).
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "kernels.hpp"
#include "layers.hpp"
#include "toru/core/error.hpp"

namespace toru::train::detail::cuda {

namespace {

// [outer, classes, inner] as NCHW {outer, classes, inner, 1}: CUDNN_SOFTMAX_MODE_CHANNEL then
// normalises over the classes of every (outer, inner) position.
void set_softmax_shape(const tensor_descriptor& t, std::int64_t outer, std::int64_t classes, std::int64_t inner,
                       const char* what) {
  constexpr std::int64_t max = std::numeric_limits<int>::max();
  if (outer < 1 || classes < 1 || inner < 1 || outer > max || classes > max || inner > max ||
      outer * classes * inner > max)
    throw error(errc::unsupported, fmt::format("{}: [{}, {}, {}] exceeds cuDNN's 32-bit tensor sizes or is empty", what,
                                               outer, classes, inner));
  set_nchw(t, {static_cast<int>(outer), static_cast<int>(classes), static_cast<int>(inner), 1});
}

}  // namespace

softmax_cudnn::softmax_cudnn(cuda_context& ctx, std::int64_t outer, std::int64_t classes, std::int64_t inner)
    : ctx_(&ctx) {
  set_softmax_shape(t_, outer, classes, inner, "softmax");
}

void softmax_cudnn::forward(const float* x, float* y) const {
  const float one = 1, zero = 0;
  check_cudnn(
      cudnnSoftmaxForward(ctx_->dnn(), CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, &one, t_, x, &zero, t_, y),
      "cudnnSoftmaxForward");
}

void softmax_cudnn::backward(const float* y, const float* dy, float* dx) const {
  const float one = 1, zero = 0;
  check_cudnn(cudnnSoftmaxBackward(ctx_->dnn(), CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, &one, t_, y, t_, dy,
                                   &zero, t_, dx),
              "cudnnSoftmaxBackward");
}

softmax_xent_cudnn::softmax_xent_cudnn(cuda_context& ctx, std::int64_t outer, std::int64_t classes, std::int64_t inner)
    : ctx_(&ctx), outer_(outer), classes_(classes), inner_(inner) {
  set_softmax_shape(t_, outer, classes, inner, "softmax cross-entropy");
}

softmax_xent_cudnn::result softmax_xent_cudnn::forward(const float* logits, const std::int32_t* labels,
                                                       float* state) const {
  const float one = 1, zero = 0;
  check_cudnn(cudnnSoftmaxForward(ctx_->dnn(), CUDNN_SOFTMAX_LOG, CUDNN_SOFTMAX_MODE_CHANNEL, &one, t_, logits, &zero,
                                  t_, state),
              "cudnnSoftmaxForward (log)");
  const auto n = static_cast<std::size_t>(samples());
  device_buffer scratch(ctx_->memory(), n * (sizeof(float) + sizeof(std::int32_t)), "softmax cross-entropy: loss");
  auto* loss = scratch.as<float>();
  auto* correct = reinterpret_cast<std::int32_t*>(loss + n);
  check_cuda(cross_entropy_loss(state, labels, loss, correct, outer_, classes_, inner_, ctx_->stream()),
             "cross_entropy_loss");
  std::vector<float> h_loss(n);
  std::vector<std::int32_t> h_correct(n);
  check_cuda(cudaMemcpyAsync(h_loss.data(), loss, n * sizeof(float), cudaMemcpyDeviceToHost, ctx_->stream()),
             "cudaMemcpyAsync (loss)");
  check_cuda(
      cudaMemcpyAsync(h_correct.data(), correct, n * sizeof(std::int32_t), cudaMemcpyDeviceToHost, ctx_->stream()),
      "cudaMemcpyAsync (hits)");
  ctx_->synchronize();
  result r;
  double sum = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (h_correct[i] < 0 && r.first_bad_label < 0) r.first_bad_label = static_cast<std::int64_t>(i);
    sum += h_loss[i];
    r.correct += h_correct[i] > 0 ? 1 : 0;
  }
  r.mean_loss = sum / static_cast<double>(n);
  return r;
}

void softmax_xent_cudnn::backward(const float* state, const std::int32_t* labels, float* dlogits) const {
  check_cuda(cross_entropy_backward(state, labels, dlogits, outer_, classes_, inner_,
                                    1.0f / static_cast<float>(samples()), ctx_->stream()),
             "cross_entropy_backward");
}

}  // namespace toru::train::detail::cuda
