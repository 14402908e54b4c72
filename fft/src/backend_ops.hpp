// SPDX-License-Identifier: BSD-3-Clause
// The one interface between a plan (plan3d, plan1d) and where its data lives: work memory, the
// local FFTs, the 1D twiddle, the transposes, the checks of the caller's buffers and scaling.
// Chosen once per plan from the public backend tag (heFFTe's one_dim_backend plays this part):
// FFTW on host memory (backend_fftw.cpp) or cuFFT on device memory (backend_cufft.cpp, or
// backend_cufft_none.cpp when toru is built without CUDA: CMake picks the file, as comm/ pairs
// *_cuda.cpp and *_none.cpp). The plans hold no backend-specific code.
#pragma once

#include <mpi.h>

#include <complex>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "comm_cache.hpp"
#include "common.hpp"
#include "local_fft.hpp"
#include "steps.hpp"
#include "toru/comm/alltoall_plan.hpp"

namespace toru::fft::detail {

/// How a transpose exchanges (the strategy's choices).
struct exchange_settings {
  int chunks = 1;
  bool overlap = false;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  comm::alltoall_algorithm algorithm{};
  bool window = false;  // through the node's shared window (host only)
};

template <class T>
class backend_ops {
 public:
  virtual ~backend_ops() = default;

  /// The caller's buffers and the plan's work regions live in device memory.
  virtual bool device_memory() const = 0;
  /// bytes of work memory where the plan's data lives (FFTW-aligned host memory, or device memory).
  virtual std::shared_ptr<void> allocate(std::size_t bytes) const = 0;
  /// The scratch the host FFTs are planned on (FFTW overwrites it while planning); set once the
  /// plan's work regions exist. Unused on the device.
  virtual void plan_on(void* scratch_a, void* scratch_b) = 0;

  /// A batched transform over the whole stage (src to dst, or in place).
  virtual std::unique_ptr<step<T>> fft_step(fft_kind kind, std::vector<int> dims, std::int64_t units) = 0;
  /// The transform of received units, a transpose's line op, planned for the given batches.
  /// from_window: the exchange leaves units in the node's shared window (out-of-place plans too).
  virtual std::unique_ptr<line_op<T>> fft_lines(fft_kind kind, std::vector<int> dims, std::vector<std::int64_t> batches,
                                                bool from_window) = 0;
  /// 1D six-step: FFT of rows of len then the twiddle (forward), or the conjugate twiddle then the
  /// FFT (backward). twiddle: rows x len values, kept by reference (host) or copied (device).
  virtual std::unique_ptr<line_op<T>> twiddle_fft(fft_kind kind, std::int64_t len, std::vector<std::int64_t> batches,
                                                  const std::vector<std::complex<T>>& twiddle, bool forward) = 0;
  /// Pack, exchange through toru::comm, unpack and the line op per received chunk. workspace:
  /// raised to the exchange's need of the caller's workspace.
  virtual std::unique_ptr<step<T>> transpose(comm_ptr comm, transpose_geometry g, std::unique_ptr<line_op<T>> op,
                                             const exchange_settings& x, std::size_t& workspace) = 0;

  /// The checks of the caller's buffers this rank makes alone, inside the call's agreement.
  virtual void check_buffers_local(const void* in, std::int64_t in_elems, const void* out,
                                   std::int64_t out_elems) const = 0;
  /// The checks that need a collective of their own (after the agreement).
  virtual void check_buffers_collective(MPI_Comm comm, const void* in, std::int64_t in_elems, const void* out,
                                        std::int64_t out_elems, const void* ws) const = 0;
  /// The exchange's own workspace in the caller's ws (after the two regions), or null: the device
  /// exchange stages through comm's own host memory.
  virtual void* exchange_workspace(char* ws_after_regions) const = 0;
  /// Multiplies count values by factor.
  virtual void scale(std::complex<T>* data, std::int64_t count, T factor) const = 0;
  /// Returns when the output is complete (device: the plan's stream drained).
  virtual void finish() const = 0;
};

/// The send and receive regions a plan owns (`bytes` each, a multiple of 64), which are also its
/// planning scratch, where the backend keeps its data.
struct work_regions {
  std::size_t bytes = 0;
  std::shared_ptr<void> memory;
  bool device = false;
  char* base() const { return static_cast<char*>(memory.get()); }
  void* scratch_a() const { return device ? nullptr : base(); }
  void* scratch_b() const { return device ? nullptr : base() + bytes; }
};

/// Two regions of `elems` values of `elem_bytes` each (throws errc::out_of_memory, not collective).
template <class T>
work_regions make_work_regions(std::int64_t elems, std::size_t elem_bytes, const backend_ops<T>& ops) {
  work_regions r;
  r.bytes = (checked_bytes(elems, elem_bytes, "FFT workspace") + 63) / 64 * 64;
  r.memory = ops.allocate(2 * r.bytes);
  r.device = ops.device_memory();
  return r;
}

/// FFTW plans with these planner flags, on host memory.
template <class T>
std::unique_ptr<backend_ops<T>> make_fftw_ops(unsigned flags);
/// Collective over comm: cuFFT on the current CUDA device. errc::no_device on every rank unless
/// every rank sees one; errc::unsupported on every rank when toru was built without CUDA.
template <class T>
std::unique_ptr<backend_ops<T>> make_cufft_ops(MPI_Comm comm);

/// The plan's backend from the public tag's device_memory (collective when device).
template <class T>
std::unique_ptr<backend_ops<T>> make_backend_ops(MPI_Comm comm, bool device, unsigned flags) {
  return device ? make_cufft_ops<T>(comm) : make_fftw_ops<T>(flags);
}

}  // namespace toru::fft::detail
