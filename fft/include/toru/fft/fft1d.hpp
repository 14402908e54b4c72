// SPDX-License-Identifier: BSD-3-Clause
// Distributed 1D complex FFT of N = n1 * n2 points (six-step: transpose, n2 FFTs of length n1,
// twiddle, transpose, n1 FFTs of length n2, transpose), as FFTW-MPI's rank-1 DFT.
//
//   toru::fft::fft1d<double> plan(MPI_COMM_WORLD, 1 << 22);     // collective
//   std::vector<std::complex<double>> x(plan.alloc_size()), y(plan.alloc_size());
//   // x[i] is global element plan.in_start() + i, for i < plan.in_count()
//   plan.forward(x.data(), y.data());                            // y[i] = X[plan.out_start() + i]
//
// Distribution: the input is split in whole rows of n2 (in_start() = first row * n2); the natural
// output in whole rows of n1. With options1d{.output = order::transposed} (FFTW_MPI_SCRAMBLED_OUT)
// the last transpose is skipped: rank r holds k1 in [k1_start, k1_start + k1_count) and, at local
// index (k1 - k1_start) * n2 + k2, the coefficient X[k1 + n1 * k2]; backward() accepts that order.
// Two all-to-alls instead of three. Plans are immutable; calls are const and collective, and must
// not run concurrently on one plan or on plans built over the same communicator.
#pragma once

#include <mpi.h>

#include <complex>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "toru/core/request.hpp"
#include "toru/fft/backend.hpp"
#include "toru/fft/options.hpp"

namespace toru::fft {

namespace detail {
template <class T>
class plan1d;
}

/// What each rank holds in a 1D plan, as fftw_mpi_local_size_1d tells (see fft1d for the orders).
struct local_layout1d {
  std::int64_t n1 = 0, n2 = 0;
  std::int64_t in_start = 0, in_count = 0, out_start = 0, out_count = 0;
  std::int64_t alloc = 0;  // complex elements per buffer
};

/// Not collective: the layout a 1D plan with these arguments would have on `rank` of `nranks`.
/// Throws toru::error on bad arguments (as the plan would).
local_layout1d local_size_1d(int nranks, int rank, std::int64_t n, const options1d& opts = {});

template <precision T, backend B = fftw>
class fft1d {
  static_assert(backend_traits<B>::enabled, "this FFT backend is not enabled in this build");

 public:
  using complex_type = std::complex<T>;

  /// Collective. 1 <= n <= (2^31-1)^2 (any n: a prime n gives n1 = 1 and no parallelism); opts.n1,
  /// when set, must divide n; n1 and n / n1 below 2^31. Throws the same toru::error on every rank
  /// on bad or inconsistent arguments (MPI_COMM_NULL or an intercommunicator: on the ranks that
  /// pass it).
  fft1d(MPI_Comm comm, std::int64_t n, options1d opts = {});
  ~fft1d();
  fft1d(fft1d&&) noexcept;
  fft1d& operator=(fft1d&&) noexcept;

  std::int64_t size() const;
  std::int64_t n1() const;
  std::int64_t n2() const;
  /// How the plan runs its transposes, chosen from its strategy table (docs/fft.md, Strategy).
  std::string strategy() const;
  /// The names of every candidate of that table that applies to this plan (strategy() among them):
  /// each can be forced with TORU_FFT_STRATEGY, e.g. to time it against the choice.
  std::vector<std::string> candidates() const;
  /// Under FFTW_MEASURE (planner = effort::measure): the seconds the planner timed for each
  /// applicable candidate, the slowest rank's (finalists: the median of their run-off figures), in
  /// table order. Empty under ESTIMATE, for a plan with one candidate, and when the choice came
  /// from wisdom. For telling a planner's pick from a later benchmark's.
  std::vector<std::pair<std::string, double>> planner_seconds() const;
  /// Input: global elements [in_start, in_start + in_count).
  std::int64_t in_start() const;
  std::int64_t in_count() const;
  /// Natural output: global coefficients [out_start, out_start + out_count). Transposed output:
  /// out_start() is k1_start * n2 and out_count() is k1_count * n2 (see above).
  std::int64_t out_start() const;
  std::int64_t out_count() const;
  std::int64_t alloc_size() const;
  std::size_t workspace_size() const;

  void forward(const complex_type* in, complex_type* out, scale s = scale::none) const;
  void forward(const complex_type* in, complex_type* out, void* ws, scale s = scale::none) const;
  void backward(const complex_type* in, complex_type* out, scale s = scale::none) const;
  void backward(const complex_type* in, complex_type* out, void* ws, scale s = scale::none) const;

  /// Split phase (MPI-4 persistent-collective semantics): start_forward / start_backward begin the
  /// transform (same arguments as forward / backward) and return at once; wait() returns when it
  /// is done, throwing its error if it failed. Meanwhile the caller computes but touches neither
  /// buffer nor this plan (nor another plan on its communicator), and calls MPI itself only under
  /// MPI_THREAD_MULTIPLE. A second start before wait() is errc::invalid_argument. Below
  /// MPI_THREAD_SERIALIZED the transform runs inline in the start call.
  void start_forward(const complex_type* in, complex_type* out, scale s = scale::none) const;
  void start_backward(const complex_type* in, complex_type* out, scale s = scale::none) const;
  void wait() const;
  /// Persistent form: see fft3d::forward_init (collective, checked once; request::start() runs
  /// the transform with no argument checks).
  request forward_init(const complex_type* in, complex_type* out, scale s = scale::none) const;
  request backward_init(const complex_type* in, complex_type* out, scale s = scale::none) const;

 private:
  std::unique_ptr<detail::plan1d<T>> impl_;
  mutable std::unique_ptr<toru::detail::split_phase> phase_;
};

}  // namespace toru::fft
