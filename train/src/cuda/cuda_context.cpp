// SPDX-License-Identifier: BSD-3-Clause
#include "cuda_context.hpp"

#include <fmt/format.h>

#include "cuda_check.hpp"
#include "cuda_memory.hpp"
#include "kernels.hpp"
#include "toru/core/device.hpp"
#include "toru/core/error.hpp"

namespace toru::train::detail::cuda {

cuda_context::cuda_context(int device, std::size_t capacity) : device_(device) {
  const int count = gpu_count();
  if (count == 0) throw error(errc::no_device, fmt::format("no CUDA device: {}", gpu_absence_reason()));
  if (device < 0 || device >= count)
    throw error(errc::invalid_argument,
                fmt::format("model_options.device: expected a CUDA device ordinal in [0, {}), got {}", count, device));
  check_cuda(cudaSetDevice(device_), "cudaSetDevice");
  try {
    check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    check_cudnn(cudnnCreate(&dnn_), "cudnnCreate");
    check_cudnn(cudnnSetStream(dnn_, stream_), "cudnnSetStream");
    check_cublas(cublasCreate(&blas_), "cublasCreate");
    check_cublas(cublasSetStream(blas_, stream_), "cublasSetStream");
    check_cublas(cublasSetMathMode(blas_, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
    mem_ = make_cuda_memory(device_, stream_, capacity);
  } catch (...) {
    release();
    throw;
  }
}

cuda_context::~cuda_context() { release(); }

void cuda_context::release() noexcept {
  ones_.reset();
  if (stream_) cudaStreamSynchronize(stream_);
  mem_.reset();
  if (blas_) cublasDestroy(blas_);
  if (dnn_) cudnnDestroy(dnn_);
  if (stream_) cudaStreamDestroy(stream_);
  blas_ = nullptr, dnn_ = nullptr, stream_ = nullptr;
}

const float* cuda_context::ones(std::int64_t n) {
  if (n > ones_count_) {
    ones_ = device_buffer(*mem_, static_cast<std::size_t>(n) * sizeof(float), "cuda backend: ones vector");
    check_cuda(fill(ones_.as<float>(), 1.0f, n, stream_), "fill (ones)");
    ones_count_ = n;
  }
  return ones_.as<float>();
}

void cuda_context::activate() const { check_cuda(cudaSetDevice(device_), "cudaSetDevice"); }

void cuda_context::synchronize() { check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize"); }

}  // namespace toru::train::detail::cuda
