// SPDX-License-Identifier: BSD-3-Clause
// Error checks of the CUDA backend: every CUDA runtime, cuDNN and cuBLAS call goes through one of
// these, which throw toru::error naming the call (errc::out_of_memory for allocation failures, so
// callers can tell a full device from a broken one). The CUDA runtime's is toru's one check
// (core's toru/detail/cuda_check.hpp); cuDNN and cuBLAS are the trainer's alone.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <source_location>

#include "toru/detail/cuda_check.hpp"

namespace toru::train::detail::cuda {

using toru::detail::check_cuda;
void check_cudnn(cudnnStatus_t rc, const char* call, std::source_location where = std::source_location::current());
void check_cublas(cublasStatus_t rc, const char* call, std::source_location where = std::source_location::current());

}  // namespace toru::train::detail::cuda
