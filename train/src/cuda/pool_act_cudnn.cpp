// SPDX-License-Identifier: BSD-3-Clause
// Pooling and ReLU/sigmoid on cuDNN (layers.hpp).
#include <limits>

#include <fmt/format.h>

#include "layers.hpp"
#include "toru/core/error.hpp"

namespace toru::train::detail::cuda {

pool_cudnn::pool_cudnn(cuda_context& ctx, const nchw& x, pool_kind kind, pair window, pair stride, pair pad,
                       bool count_include_pad)
    : ctx_(&ctx), x_shape_(x) {
  const cudnnPoolingMode_t mode = kind == pool_kind::max ? CUDNN_POOLING_MAX_DETERMINISTIC
                                  : count_include_pad    ? CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
                                                         : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
  check_cudnn(cudnnSetPooling2dDescriptor(pool_, mode, CUDNN_NOT_PROPAGATE_NAN, window[0], window[1], pad[0], pad[1],
                                          stride[0], stride[1]),
              "cudnnSetPooling2dDescriptor");
  set_nchw(x_, x);
  check_cudnn(cudnnGetPooling2dForwardOutputDim(pool_, x_, &y_shape_[0], &y_shape_[1], &y_shape_[2], &y_shape_[3]),
              "cudnnGetPooling2dForwardOutputDim");
  set_nchw(y_, y_shape_);
}

void pool_cudnn::forward(const float* x, float* y) const {
  const float one = 1, zero = 0;
  check_cudnn(cudnnPoolingForward(ctx_->dnn(), pool_, &one, x_, x, &zero, y_, y), "cudnnPoolingForward");
}

void pool_cudnn::backward(const float* x, const float* y, const float* dy, float* dx) const {
  const float one = 1, zero = 0;
  check_cudnn(cudnnPoolingBackward(ctx_->dnn(), pool_, &one, y_, y, y_, dy, x_, x, &zero, x_, dx),
              "cudnnPoolingBackward");
}

activation_cudnn::activation_cudnn(cuda_context& ctx, activation_kind kind, std::int64_t count)
    : ctx_(&ctx), count_(count) {
  if (count < 1 || count > std::numeric_limits<int>::max())
    throw error(errc::unsupported,
                fmt::format("activation: {} elements; cuDNN takes 1 to {}", count, std::numeric_limits<int>::max()));
  set_nchw(t_, {static_cast<int>(count), 1, 1, 1});
  check_cudnn(cudnnSetActivationDescriptor(act_,
                                           kind == activation_kind::relu      ? CUDNN_ACTIVATION_RELU
                                           : kind == activation_kind::sigmoid ? CUDNN_ACTIVATION_SIGMOID
                                                                              : CUDNN_ACTIVATION_TANH,
                                           CUDNN_NOT_PROPAGATE_NAN, 0.0),
              "cudnnSetActivationDescriptor");
}

void activation_cudnn::forward(const float* x, float* y) const {
  const float one = 1, zero = 0;
  check_cudnn(cudnnActivationForward(ctx_->dnn(), act_, &one, t_, x, &zero, t_, y), "cudnnActivationForward");
}

void activation_cudnn::backward(const float* x, const float* y, const float* dy, float* dx) const {
  const float one = 1, zero = 0;
  check_cudnn(cudnnActivationBackward(ctx_->dnn(), act_, &one, t_, y, t_, dy, t_, x, &zero, t_, dx),
              "cudnnActivationBackward");
}

}  // namespace toru::train::detail::cuda
