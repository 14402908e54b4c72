// SPDX-License-Identifier: BSD-3-Clause
// RAII owners of cuDNN's (legacy, still shipped in cuDNN 9) descriptors. Every shape the backend
// uses is plain NCHW fp32.
#pragma once

#include <cudnn.h>

#include <array>
#include <cstdint>

#include "cuda_check.hpp"

namespace toru::train::detail::cuda {

template <class T, cudnnStatus_t (*create)(T*), cudnnStatus_t (*destroy)(T)>
class cudnn_descriptor {
 public:
  cudnn_descriptor() { check_cudnn(create(&d_), "cudnnCreate*Descriptor"); }
  ~cudnn_descriptor() {
    if (d_) destroy(d_);
  }
  cudnn_descriptor(const cudnn_descriptor&) = delete;
  cudnn_descriptor& operator=(const cudnn_descriptor&) = delete;
  T get() const noexcept { return d_; }
  operator T() const noexcept { return d_; }

 private:
  T d_ = nullptr;
};

using tensor_descriptor =
    cudnn_descriptor<cudnnTensorDescriptor_t, cudnnCreateTensorDescriptor, cudnnDestroyTensorDescriptor>;
using filter_descriptor =
    cudnn_descriptor<cudnnFilterDescriptor_t, cudnnCreateFilterDescriptor, cudnnDestroyFilterDescriptor>;
using convolution_descriptor =
    cudnn_descriptor<cudnnConvolutionDescriptor_t, cudnnCreateConvolutionDescriptor, cudnnDestroyConvolutionDescriptor>;
using pooling_descriptor =
    cudnn_descriptor<cudnnPoolingDescriptor_t, cudnnCreatePoolingDescriptor, cudnnDestroyPoolingDescriptor>;
using activation_descriptor =
    cudnn_descriptor<cudnnActivationDescriptor_t, cudnnCreateActivationDescriptor, cudnnDestroyActivationDescriptor>;

using nchw = std::array<int, 4>;

/// Fully packed NCHW fp32 descriptor (extents must fit int: cuDNN's limit).
inline void set_nchw(const tensor_descriptor& d, const nchw& s) {
  check_cudnn(cudnnSetTensor4dDescriptor(d, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, s[0], s[1], s[2], s[3]),
              "cudnnSetTensor4dDescriptor");
}

inline std::int64_t count(const nchw& s) { return static_cast<std::int64_t>(s[0]) * s[1] * s[2] * s[3]; }

}  // namespace toru::train::detail::cuda
