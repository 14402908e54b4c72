// SPDX-License-Identifier: BSD-3-Clause
#include "cuda_check.hpp"

#include <fmt/format.h>

#include "toru/core/error.hpp"

namespace toru::train::detail::cuda {

void check_cudnn(cudnnStatus_t rc, const char* call, std::source_location where) {
  if (rc == CUDNN_STATUS_SUCCESS) return;
  throw error(rc == CUDNN_STATUS_ALLOC_FAILED ? errc::out_of_memory : errc::cuda,
              fmt::format("{} failed: {} ({})", call, cudnnGetErrorString(rc), static_cast<int>(rc)), where);
}

void check_cublas(cublasStatus_t rc, const char* call, std::source_location where) {
  if (rc == CUBLAS_STATUS_SUCCESS) return;
  throw error(rc == CUBLAS_STATUS_ALLOC_FAILED ? errc::out_of_memory : errc::cuda,
              fmt::format("{} failed: {} ({})", call, cublasGetStatusString(rc), static_cast<int>(rc)), where);
}

}  // namespace toru::train::detail::cuda
