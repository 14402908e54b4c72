// SPDX-License-Identifier: BSD-3-Clause
#include <cuda_runtime_api.h>
#include <mpi.h>

#include <cstdlib>
#include <cstring>

#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

#include <fmt/format.h>

#include "gpu_staging.hpp"
#include "toru/core/error.hpp"
#include "toru/detail/cuda_check.hpp"

namespace toru::comm::detail {

using toru::detail::check_cuda;

bool is_device_pointer(const void* p) noexcept {
  if (p == nullptr) return false;
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "invalid value" of a plain host pointer on old runtimes
    return false;
  }
  return attr.type == cudaMemoryTypeDevice || attr.type == cudaMemoryTypeManaged;
}

bool mpi_is_cuda_aware() noexcept {
  if (const char* env = std::getenv("TORU_CUDA_AWARE_MPI"); env && *env) return std::strcmp(env, "0") != 0;
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

pinned_buffer::pinned_buffer(std::size_t bytes) : bytes_(bytes) {
  if (bytes == 0) return;
  void* p = nullptr;
  check_cuda(cudaMallocHost(&p, bytes), "cudaMallocHost");
  data_ = static_cast<std::byte*>(p);
}

pinned_buffer::~pinned_buffer() {
  if (data_) cudaFreeHost(data_);
}

void copy_bytes(void* dst, const void* src, std::size_t bytes) {
  if (bytes > 0) check_cuda(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault), "cudaMemcpy");
}

}  // namespace toru::comm::detail
