// SPDX-License-Identifier: BSD-3-Clause
// Device buffers in the host all-to-all: detection and staging through pinned host memory.
// One implementation per build: gpu_staging_cuda.cpp (CUDA) or gpu_staging_none.cpp.
#pragma once

#include <cstddef>
#include <memory>

namespace toru::comm::detail {

/// True when p is CUDA device (or managed) memory; always false without CUDA.
bool is_device_pointer(const void* p) noexcept;
/// True when the MPI library accepts device pointers (Open MPI's MPIX_Query_cuda_support, or
/// TORU_CUDA_AWARE_MPI=1); always false without CUDA.
bool mpi_is_cuda_aware() noexcept;

/// Pinned host memory (cudaMallocHost), or plain memory without CUDA.
class pinned_buffer {
 public:
  explicit pinned_buffer(std::size_t bytes);
  ~pinned_buffer();
  pinned_buffer(const pinned_buffer&) = delete;
  pinned_buffer& operator=(const pinned_buffer&) = delete;
  std::byte* data() const { return data_; }
  std::size_t size() const { return bytes_; }

 private:
  std::byte* data_ = nullptr;
  std::size_t bytes_ = 0;
};

/// cudaMemcpy in either direction (cudaMemcpyDefault); throws toru::error(cuda) on failure.
void copy_bytes(void* dst, const void* src, std::size_t bytes);

}  // namespace toru::comm::detail
