// SPDX-License-Identifier: BSD-3-Clause
#include "bench/fftw_threads_peer.hpp"

#include <fftw3.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>

#include "toru/core/error.hpp"
#include "toru/core/mpi.hpp"

namespace toru::apps {

namespace {
void init_threads() {
  static std::once_flag init;
  std::call_once(init, [] { toru::expect(fftw_init_threads() != 0, "fftw_init_threads", "success", "failure"); });
}
}  // namespace

bool import_fftw_wisdom(const char* path) {
  init_threads();
  return fftw_import_wisdom_from_filename(path) != 0;
}

bool export_fftw_wisdom(const char* path) {
  init_threads();
  return fftw_export_wisdom_to_filename(path) != 0;
}

fftw_wisdom_aside::fftw_wisdom_aside() : saved_(fftw_export_wisdom_to_string()) { fftw_forget_wisdom(); }

fftw_wisdom_aside::~fftw_wisdom_aside() {
  fftw_forget_wisdom();
  if (saved_) fftw_import_wisdom_from_string(saved_);
  fftw_free(saved_);
}

struct fftw_threads_peer::impl {
  fftw_plan plan = nullptr;
  void* in = nullptr;
  fftw_complex* out = nullptr;
  ~impl() {
    if (plan) fftw_destroy_plan(plan);
    fftw_free(in);
    fftw_free(out);
  }
};

fftw_threads_peer::fftw_threads_peer(peer_kind kind, std::array<std::int64_t, 3> n, int threads, unsigned flags,
                                     int howmany)
    : p_(std::make_unique<impl>()) {
  toru::expect(threads >= 1, "threads", "at least 1", std::to_string(threads));
  toru::expect(howmany >= 1, "howmany", "at least 1", std::to_string(howmany));
  const int dims = kind == peer_kind::c2c_1d ? 1 : 3;
  for (int a = 0; a < dims; ++a) toru::expect(n[a] >= 1, "n", "extents >= 1", std::to_string(n[a]));
  init_threads();
  const std::int64_t total = dims == 1 ? n[0] : n[0] * n[1] * n[2];
  const std::int64_t field_out = kind == peer_kind::r2c_3d ? n[0] * n[1] * (n[2] / 2 + 1) : total;
  in_count_ = total * howmany;
  out_count_ = field_out * howmany;
  p_->in = kind == peer_kind::r2c_3d ? static_cast<void*>(fftw_alloc_real(in_count_))
                                     : static_cast<void*>(fftw_alloc_complex(in_count_));
  p_->out = fftw_alloc_complex(out_count_);
  toru::expect(p_->in && p_->out, "n", "a transform whose arrays fit in memory", std::to_string(total) + " points");
  // The thread count applies to every plan made after it, FFTW-MPI's and toru's included: set for
  // this plan only and put back to 1.
  fftw_plan_with_nthreads(threads);
  const auto t0 = std::chrono::steady_clock::now();
  const int ni[3] = {static_cast<int>(n[0]), static_cast<int>(n[1]), static_cast<int>(n[2])};
  auto* cin = static_cast<fftw_complex*>(p_->in);
  const int idist = static_cast<int>(total), odist = static_cast<int>(field_out);
  switch (kind) {
    case peer_kind::c2c_3d:
    case peer_kind::c2c_1d:
      p_->plan = fftw_plan_many_dft(dims, ni, howmany, cin, nullptr, 1, idist, p_->out, nullptr, 1, odist, FFTW_FORWARD,
                                    flags);
      break;
    case peer_kind::r2c_3d:
      p_->plan = fftw_plan_many_dft_r2c(3, ni, howmany, static_cast<double*>(p_->in), nullptr, 1, idist, p_->out,
                                        nullptr, 1, odist, flags);
      break;
  }
  plan_s_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  fftw_plan_with_nthreads(1);
  toru::expect(p_->plan != nullptr, "n", "a size FFTW's threaded planner accepts", std::to_string(total) + " points");
}

fftw_threads_peer::~fftw_threads_peer() = default;

void fftw_threads_peer::execute() const { fftw_execute(p_->plan); }
std::complex<double>* fftw_threads_peer::in_complex() const { return static_cast<std::complex<double>*>(p_->in); }
double* fftw_threads_peer::in_real() const { return static_cast<double*>(p_->in); }
std::complex<double>* fftw_threads_peer::out() const { return reinterpret_cast<std::complex<double>*>(p_->out); }

void park(MPI_Comm comm) {
  MPI_Request req = MPI_REQUEST_NULL;
  toru::check_mpi(MPI_Ibarrier(comm, &req), "MPI_Ibarrier");
  // Sleeps growing from 50 us to 5 ms: a parked rank sleeping 50 us at a time slowed FFTW's 2-thread
  // 256^3 transform in the process beside it from 0.065-0.070 s to 0.083-0.085 s (fastest of 15,
  // three runs each) and its 4-thread one beside three such ranks 1.9x (median); woken every 5 ms
  // it read as alone. The wait's end is never inside a timed call, so its lateness costs nothing.
  auto nap = std::chrono::microseconds(50);
  for (int done = 0;;) {
    toru::check_mpi(MPI_Test(&req, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done) return;
    std::this_thread::sleep_for(nap);
    nap = std::min(2 * nap, std::chrono::microseconds(5000));
  }
}

}  // namespace toru::apps
