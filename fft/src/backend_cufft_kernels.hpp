// SPDX-License-Identifier: BSD-3-Clause
// Launchers of the cuFFT backend's kernels (backend_cufft_kernels.cu). Pointers are device
// pointers to interleaved complex values (std::complex<T> layout); every launch is queued on
// `stream` and returns its launch status.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "backend_cufft_index.hpp"

namespace toru::fft::detail::gpu {

/// Packs this rank's source rows into q blocks (block d at T*B*a_start(d), rows in d's order).
template <class T>
cudaError_t launch_pack(const pack_geometry& g, const T* src, T* send, cudaStream_t stream);

/// Unpacks destination rows [l0, l1) from the received blocks (block s at T*A*b_start(s)).
template <class T>
cudaError_t launch_unpack(const pack_geometry& g, const T* recv, T* dst, std::int64_t l0, std::int64_t l1,
                          cudaStream_t stream);

/// data[i] *= tw[i] (or conj(tw[i])) for i < count complex elements.
template <class T>
cudaError_t launch_twiddle(T* data, const T* tw, std::int64_t count, bool conjugate, cudaStream_t stream);

/// data[i] *= factor for i < count complex elements.
template <class T>
cudaError_t launch_scale(T* data, std::int64_t count, T factor, cudaStream_t stream);

}  // namespace toru::fft::detail::gpu
