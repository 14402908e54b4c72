// SPDX-License-Identifier: BSD-3-Clause
// bench/fftw_threads_peer.hpp (bench/support): the shared-memory limit a distributed FFT on one node
// is measured against: FFTW's own threaded transform (libfftw3_threads) of the whole array in one
// process, out of place, as many threads as the run has ranks. A distributed plan on P ranks of one
// node does the same arithmetic plus the exchanges, so toru/limit says what distribution costs.
//
//   toru::apps::fftw_threads_peer limit(toru::apps::peer_kind::c2c_3d, {128, 128, 128}, 4, FFTW_MEASURE);
//   limit.execute();                 // on the calling process, 4 FFTW threads
//   double plan_s = limit.plan_seconds();
//
// Not collective: one process (rank 0 in toru-fft-bench) owns it. park() is the collective that keeps
// the other ranks off the cores meanwhile.
#pragma once

#include <mpi.h>

#include <array>
#include <complex>
#include <cstdint>
#include <memory>

namespace toru::apps {

enum class peer_kind { c2c_3d, r2c_3d, c2c_1d };

class fftw_threads_peer {
 public:
  /// n: the three extents (c2c_1d uses n[0] only). threads >= 1. flags: FFTW_ESTIMATE or
  /// FFTW_MEASURE (MEASURE overwrites the buffers while planning; fill in() afterwards).
  /// howmany >= 1: that many fields in one FFTW plan (fftw_plan_many_*), planar: field f's input
  /// at f * in_count() / howmany, its output likewise - FFTW's own batched transform.
  fftw_threads_peer(peer_kind kind, std::array<std::int64_t, 3> n, int threads, unsigned flags, int howmany = 1);
  ~fftw_threads_peer();
  fftw_threads_peer(const fftw_threads_peer&) = delete;
  fftw_threads_peer& operator=(const fftw_threads_peer&) = delete;

  /// Forward transform, unnormalized (FFTW's sign -1), in() to out().
  void execute() const;
  /// Wall time of the planner call, seconds.
  double plan_seconds() const { return plan_s_; }
  /// c2c: in_count() complex values, row-major; r2c_3d: in_count() reals (unpadded n0*n1*n2);
  /// all fields together.
  std::complex<double>* in_complex() const;
  double* in_real() const;
  std::int64_t in_count() const { return in_count_; }
  /// Complex output, row-major; r2c_3d: n0 x n1 x (n2/2+1).
  std::complex<double>* out() const;
  std::int64_t out_count() const { return out_count_; }

 private:
  struct impl;
  std::unique_ptr<impl> p_;
  double plan_s_ = 0;
  std::int64_t in_count_ = 0, out_count_ = 0;
};

/// FFTW's wisdom for these plans (fftw_import/export_wisdom_from/to_filename), after FFTW's threads
/// are initialised: FFTW drops threaded plans from wisdom imported before fftw_init_threads.
/// Import: false when the file is missing or unreadable (it then holds nothing). Export: false when
/// the file cannot be written.
bool import_fftw_wisdom(const char* path);
bool export_fftw_wisdom(const char* path);

/// FFTW's process-wide wisdom set aside for the scope's life and put back after it, without what
/// was learnt meanwhile: plans made inside start from nothing (or from what the scope imports).
class fftw_wisdom_aside {
 public:
  fftw_wisdom_aside();
  ~fftw_wisdom_aside();
  fftw_wisdom_aside(const fftw_wisdom_aside&) = delete;
  fftw_wisdom_aside& operator=(const fftw_wisdom_aside&) = delete;

 private:
  char* saved_ = nullptr;
};

/// Collective over comm: returns on every rank once every rank has called it. Polls a non-blocking
/// barrier with sleeps (growing to 5 ms) instead of blocking in MPI_Barrier, whose progress engine
/// (Open MPI) spins on a core: while one rank runs FFTW's threads on all of the node's cores, the
/// waiting ranks must neither take cores from it nor keep waking to interrupt it.
void park(MPI_Comm comm);

}  // namespace toru::apps
