// SPDX-License-Identifier: BSD-3-Clause
// GPU memory of the CUDA backend: a toru::train::device_memory (capacity, high-water mark) whose raw
// allocations come from the device's stream-ordered pool (cudaMallocAsync / cudaFreeAsync on the
// backend's stream). The pool keeps freed blocks cached instead of returning them to the driver, so
// steady-state training steps make no driver allocations, and a block freed while kernels queued
// on the stream still read it is reused only after they ran.
#pragma once

#include <cuda_runtime_api.h>

#include <memory>

#include "toru/train/device_memory.hpp"

namespace toru::train::detail::cuda {

/// capacity 0: unlimited (the device's own memory is the limit). Makes `device` current.
std::unique_ptr<device_memory> make_cuda_memory(int device, cudaStream_t stream, std::size_t capacity);

}  // namespace toru::train::detail::cuda
