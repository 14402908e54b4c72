// SPDX-License-Identifier: BSD-3-Clause
// Batch normalisation on cuDNN (layers.hpp).
#include <fmt/format.h>

#include "layers.hpp"
#include "toru/core/error.hpp"

namespace toru::train::detail::cuda {

batchnorm_cudnn::batchnorm_cudnn(cuda_context& ctx, const nchw& x, double epsilon, double momentum)
    : ctx_(&ctx), x_shape_(x), epsilon_(epsilon), momentum_(momentum) {
  if (epsilon < CUDNN_BN_MIN_EPSILON)
    throw error(errc::unsupported,
                fmt::format("batch norm: epsilon {} is below cuDNN's minimum {}", epsilon, CUDNN_BN_MIN_EPSILON));
  set_nchw(x_, x);
  check_cudnn(cudnnDeriveBNTensorDescriptor(param_, x_, CUDNN_BATCHNORM_SPATIAL), "cudnnDeriveBNTensorDescriptor");
}

void batchnorm_cudnn::forward_training(const float* x, const float* gamma, const float* beta, float* y,
                                       float* running_mean, float* running_var, float* state) const {
  const float one = 1, zero = 0;
  check_cudnn(cudnnBatchNormalizationForwardTraining(ctx_->dnn(), CUDNN_BATCHNORM_SPATIAL, &one, &zero, x_, x, x_, y,
                                                     param_, gamma, beta, momentum_, running_mean, running_var,
                                                     epsilon_, state, state + x_shape_[1]),
              "cudnnBatchNormalizationForwardTraining");
}

void batchnorm_cudnn::forward_inference(const float* x, const float* gamma, const float* beta, float* y,
                                        const float* running_mean, const float* running_var) const {
  const float one = 1, zero = 0;
  check_cudnn(cudnnBatchNormalizationForwardInference(ctx_->dnn(), CUDNN_BATCHNORM_SPATIAL, &one, &zero, x_, x, x_, y,
                                                      param_, gamma, beta, running_mean, running_var, epsilon_),
              "cudnnBatchNormalizationForwardInference");
}

void batchnorm_cudnn::backward(const float* x, const float* dy, const float* gamma, const float* state, float* dx,
                               float* dgamma, float* dbeta) const {
  const float one = 1, zero = 0;
  check_cudnn(
      cudnnBatchNormalizationBackward(ctx_->dnn(), CUDNN_BATCHNORM_SPATIAL, &one, &zero, &one, &zero, x_, x, x_, dy, x_,
                                      dx, param_, gamma, dgamma, dbeta, epsilon_, state, state + x_shape_[1]),
      "cudnnBatchNormalizationBackward");
}

}  // namespace toru::train::detail::cuda
