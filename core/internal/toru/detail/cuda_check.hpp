// SPDX-License-Identifier: BSD-3-Clause
// For toru's CUDA code (comm, fft, train): the one check of a CUDA runtime call. Internal: outside
// every include/ folder, never installed, reached through the build-only target toru_internal;
// only files compiled where CUDA exists include it (the *_cuda.cpp / .cu variants).
#pragma once

#include <cuda_runtime_api.h>

#include <source_location>

namespace toru::detail {

/// Throws toru::error naming `call`, CUDA's text and name for the code, and `where`:
/// errc::out_of_memory when `out_of_memory` (callers can tell a full device from a broken one),
/// errc::cuda otherwise. Defined in toru::core_device (core/src/gpu_check.cpp).
[[noreturn]] void throw_cuda_error(bool out_of_memory, const char* text, const char* name, const char* call,
                                   std::source_location where);

/// check_cuda(cudaMalloc(&p, bytes), "cudaMalloc"): returns when rc is cudaSuccess, throws otherwise.
/// Inline, so that CUDA's strings come from the caller's runtime and core_device needs none.
inline void check_cuda(cudaError_t rc, const char* call, std::source_location where = std::source_location::current()) {
  if (rc != cudaSuccess) [[unlikely]]
    throw_cuda_error(rc == cudaErrorMemoryAllocation, cudaGetErrorString(rc), cudaGetErrorName(rc), call, where);
}

}  // namespace toru::detail
