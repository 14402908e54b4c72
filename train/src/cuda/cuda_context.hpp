// SPDX-License-Identifier: BSD-3-Clause
// One CUDA device as the backend sees it: the device ordinal, one stream every kernel, cuDNN and
// cuBLAS call is queued on, the cuDNN and cuBLAS handles bound to that stream, and the capacity-
// limited memory everything (activations, workspaces) is allocated from.
//
// Numerics: no TF32 in either library (convolution descriptors ask for CUDNN_FMA_MATH and only
// algorithms of that math type are chosen; cuBLAS stays in CUBLAS_DEFAULT_MATH, which uses TF32 only
// when NVIDIA_TF32_OVERRIDE forces it) so that fp32 results match the CPU backend within fp32
// reassociation error.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#include "toru/train/device_memory.hpp"

namespace toru::train::detail::cuda {

class cuda_context {
 public:
  /// Throws toru::error(no_device) "no CUDA device: ..." when the process sees no GPU, and
  /// invalid_argument naming model_options.device when `device` is not one of them.
  cuda_context(int device, std::size_t capacity);
  ~cuda_context();
  cuda_context(const cuda_context&) = delete;
  cuda_context& operator=(const cuda_context&) = delete;

  int device() const noexcept { return device_; }
  cudaStream_t stream() const noexcept { return stream_; }
  cudnnHandle_t dnn() const noexcept { return dnn_; }
  cublasHandle_t blas() const noexcept { return blas_; }
  device_memory& memory() noexcept { return *mem_; }
  /// A device vector of at least n ones (column sums by GEMV); grows on demand.
  const float* ones(std::int64_t n);
  void synchronize();
  /// Makes this context's device current on the calling thread (the runtime's current device is
  /// per thread; an engine may drive the model from another thread than the one that built it).
  void activate() const;

 private:
  void release() noexcept;
  int device_ = 0;
  cudaStream_t stream_ = nullptr;
  cudnnHandle_t dnn_ = nullptr;
  cublasHandle_t blas_ = nullptr;
  std::unique_ptr<device_memory> mem_;
  device_buffer ones_;
  std::int64_t ones_count_ = 0;
};

}  // namespace toru::train::detail::cuda
