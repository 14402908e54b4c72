// SPDX-License-Identifier: BSD-3-Clause
// The distributed 1D six-step plan (FFTW backend).
#pragma once

#include <mpi.h>

#include <complex>
#include <memory>
#include <vector>

#include "plan3d.hpp"
#include "steps.hpp"
#include "toru/fft/fft1d.hpp"

namespace toru::fft::detail {

template <class T>
class plan1d {
 public:
  /// device: the cufft backend (see plan3d).
  plan1d(MPI_Comm comm, std::int64_t n, const options1d& opts, bool device = false);
  ~plan1d();

  std::int64_t n = 0, n1 = 0, n2 = 0;
  std::int64_t in_start = 0, in_count = 0, out_start = 0, out_count = 0, alloc = 0;
  std::size_t workspace_size() const { return ws_bytes_; }
  const options1d& options() const { return opts_; }
  MPI_Comm comm() const { return comm_->mpi(); }

  /// Collective: check(), then perform().
  void execute(bool forward, const void* in, void* out, void* ws, scale s) const {
    check(forward, in, out, ws, s);
    perform(forward, in, out, ws, s);
  }
  /// Collective: execute's argument checks alone, in one agreement (a persistent request runs them once).
  void check(bool forward, const void* in, const void* out, const void* ws, scale s) const;
  /// Collective: the transform, on arguments check() accepted.
  void perform(bool forward, const void* in, void* out, void* ws, scale s) const;
  std::string strategy_name() const { return strategy_.name(); }
  const std::vector<candidate>& strategies() const { return table_; }
  const std::vector<double>& measured() const { return measured_; }  // MEASURE's figures (may be empty)

 private:
  options1d opts_;
  comm_ptr comm_;
  mpi_comm_ptr agree_;  // where check() agrees (comm_cache.hpp: agreement_comm)
  std::size_t ws_bytes_ = 0;
  work_regions regions_;
  std::unique_ptr<backend_ops<T>> ops_;   // chosen once from the backend tag
  std::vector<std::complex<T>> twiddle_;  // [local n2 rows][n1]: exp(-2 pi i n2 k1 / n)
  std::vector<std::unique_ptr<step<T>>> fwd_, bwd_;
  std::vector<candidate> table_;
  std::vector<double> measured_;
  strategy strategy_;
};

/// The divisor of n closest to sqrt(n) from below.
std::int64_t default_n1(std::int64_t n);
/// Throws toru::error on arguments no 1D plan accepts.
void check_1d(std::int64_t n, const options1d& opts);
local_layout1d make_layout1d(int nranks, int rank, std::int64_t n, const options1d& opts);

}  // namespace toru::fft::detail
