// SPDX-License-Identifier: BSD-3-Clause
// The cuFFT backend: the device versions of the steps a plan is made of (batched cuFFT plans,
// pack/unpack kernels around the toru::comm exchange, the 1D twiddle), a per-plan CUDA stream and
// device workspace. Compiled when toru is built with CUDA; plans reach it through backend_ops
// (backend_cufft_ops.cpp).
#pragma once

#include <mpi.h>

#include <complex>
#include <cstdint>
#include <memory>
#include <vector>

#include "comm_cache.hpp"
#include "local_fft.hpp"
#include "steps.hpp"
#include "toru/comm/alltoall_plan.hpp"

namespace toru::fft::detail::gpu {

/// The CUDA device and stream of one plan (the device current on the calling thread when the
/// plan was built). Every kernel and cuFFT call of the plan runs on the stream.
struct context;
using context_ptr = std::shared_ptr<context>;

/// Collective over comm: throws errc::no_device on every rank unless every rank sees a CUDA
/// device, then creates the plan's stream on the current device.
context_ptr make_context(MPI_Comm comm);

/// cudaMalloc'd memory, freed (cudaFree) with the last reference.
std::shared_ptr<void> device_alloc(std::size_t bytes);

/// Collective over comm: throws errc::invalid_argument on every rank if any rank passes a null
/// buffer, or one that is not device (or managed) memory of the plan's device.
void expect_device_buffers(const context& ctx, MPI_Comm comm, const void* in, std::int64_t in_elems, const void* out,
                           std::int64_t out_elems, const void* ws);

/// Waits for all work queued on the plan's stream.
void synchronize(const context& ctx);

/// Multiplies count complex elements by factor (queued on the stream).
template <class T>
void scale(const context& ctx, std::complex<T>* data, std::int64_t count, T factor);

/// A batched cuFFT transform over the whole stage (src to dst, or in place).
template <class T>
std::unique_ptr<step<T>> make_fft_step(const context_ptr& ctx, fft_kind kind, std::vector<int> dims,
                                       std::int64_t units);

/// Batched cuFFT over received units (the transpose's line op), planned for the given batches.
template <class T>
std::unique_ptr<line_op<T>> make_fft_lines(const context_ptr& ctx, fft_kind kind, std::vector<int> dims,
                                           std::vector<std::int64_t> batches);

/// 1D six-step: FFT of rows of len then twiddle (forward), or conjugate twiddle then FFT
/// (backward). twiddle: rows x len host values, copied to the device.
template <class T>
std::unique_ptr<line_op<T>> make_twiddle_fft(const context_ptr& ctx, std::int64_t len,
                                             std::vector<std::int64_t> batches, const std::vector<std::complex<T>>& tw,
                                             bool forward);

/// Device pack kernel, exchange through toru::comm with device pointers (CUDA-aware MPI or
/// pinned-host staging, as comm decides), device unpack and line op per received chunk.
/// The geometry must be the balanced split of part_start/part_count.
template <class T>
std::unique_ptr<step<T>> make_transpose(const context_ptr& ctx, comm_ptr comm, transpose_geometry g,
                                        std::unique_ptr<line_op<T>> op, int chunks, bool overlap, MPI_Datatype type,
                                        comm::alltoall_algorithm algorithm);

}  // namespace toru::fft::detail::gpu
