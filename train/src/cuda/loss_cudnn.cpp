// Softmax cross-entropy: cuDNN's log-softmax, then the loss and its gradient in kernels.cu
// (layers.hpp).
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "kernels.hpp"
#include "layers.hpp"
#include "toru/core/error.hpp"

namespace toru::train::detail::cuda {

softmax_xent_cudnn::softmax_xent_cudnn(cuda_context& ctx, std::int64_t n, std::int64_t classes)
    : ctx_(&ctx), n_(n), classes_(classes) {
  if (n < 1 || classes < 1 || n > std::numeric_limits<int>::max() || classes > std::numeric_limits<int>::max())
    throw error(errc::unsupported, fmt::format("softmax cross-entropy: {} samples x {} classes", n, classes));
  set_nchw(t_, {static_cast<int>(n), static_cast<int>(classes), 1, 1});
}

softmax_xent_cudnn::result softmax_xent_cudnn::forward(const float* logits, const std::int32_t* labels,
                                                       float* state) const {
  const float one = 1, zero = 0;
  check_cudnn(cudnnSoftmaxForward(ctx_->dnn(), CUDNN_SOFTMAX_LOG, CUDNN_SOFTMAX_MODE_INSTANCE, &one, t_, logits, &zero,
                                  t_, state),
              "cudnnSoftmaxForward");
  // Per-sample loss and hit, then a host sum in sample order: n is a batch (small), and a fixed
  // order keeps the loss bit-identical from run to run.
  const auto n = static_cast<std::size_t>(n_);
  device_buffer scratch(ctx_->memory(), n * (sizeof(float) + sizeof(std::int32_t)), "softmax cross-entropy: loss");
  auto* loss = scratch.as<float>();
  auto* correct = reinterpret_cast<std::int32_t*>(loss + n);
  check_cuda(cross_entropy_loss(state, labels, loss, correct, n_, classes_, ctx_->stream()), "cross_entropy_loss");
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
  r.mean_loss = sum / static_cast<double>(n_);
  return r;
}

void softmax_xent_cudnn::backward(const float* state, const std::int32_t* labels, float* dlogits) const {
  check_cuda(
      cross_entropy_backward(state, labels, dlogits, n_, classes_, 1.0f / static_cast<float>(n_), ctx_->stream()),
      "cross_entropy_backward");
}

}  // namespace toru::train::detail::cuda
