// SPDX-License-Identifier: BSD-3-Clause
// Where a 3D FFT's time goes, per strategy (each forced with TORU_FFT_STRATEGY where it applies,
// then the automatic choices of path window and path alltoall): toru's events (fft.local_fft, fft.transpose, the
// node window's fft.window.write / .fence / .out, comm.alltoall) summed per forward + backward pair,
// median over reps of the max over ranks. A benchmark, not a test: docs/fft.md and
// docs/history/benchmarks-2026-12.md quote it.
//   mpiexec -n 2 fft_stage_bench [n] [reps] [natural|transposed] [forced strategy name, alone]
// FFT_STAGE_PLANNER=measure plans with FFTW_MEASURE (default: estimate).
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "toru/core/error.hpp"
#include "toru/core/events.hpp"
#include "toru/fft/fft3d.hpp"

namespace {
using clock_type = std::chrono::steady_clock;
// Main-thread scopes only (toru::comm's helper threads emit too); nested scopes each count whole.
std::thread::id main_thread;
std::map<std::string, double> totals;
std::vector<std::pair<const char*, clock_type::time_point>> open_scopes;

void sink(int kind, const char* name, const char*, std::uint64_t, double) noexcept {
  if (std::this_thread::get_id() != main_thread) return;
  const auto now = clock_type::now();
  if (kind == static_cast<int>(toru::events::kind::begin)) {
    open_scopes.emplace_back(name, now);
  } else if (kind == static_cast<int>(toru::events::kind::end) && !open_scopes.empty()) {
    totals[open_scopes.back().first] += std::chrono::duration<double>(now - open_scopes.back().second).count();
    open_scopes.pop_back();
  }
}

double max_over_ranks(double t) {
  double m = 0;
  MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return m;
}
}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  main_thread = std::this_thread::get_id();
  const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : 128;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 5;
  const bool transposed = argc > 3 && std::strcmp(argv[3], "transposed") == 0;
  const char* only = argc > 4 ? argv[4] : nullptr;  // one forced strategy's name (profiling)
  const char* planner_env = std::getenv("FFT_STAGE_PLANNER");
  const bool measure = planner_env && std::strcmp(planner_env, "measure") == 0;
  int rank = 0, P = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  const char* names[] = {"fft.execute",       "fft.local_fft",     "fft.transpose",    "fft.axis0",
                         "fft.axis0.fwd_oop", "fft.axis0.bwd_oop", "fft.window.write", "fft.window.fence",
                         "fft.window.out",    "comm.alltoall"};
  if (rank == 0)
    std::printf(
        "# fft_stage_bench: %lld^3 c2c double, %d ranks, %s order, forward + backward, median of %d reps "
        "of the max over ranks (s), FFTW_%s\n",
        static_cast<long long>(n), P, transposed ? "transposed" : "natural", reps, measure ? "MEASURE" : "ESTIMATE");
  struct run {
    const char* forced;  // TORU_FFT_STRATEGY, or nullptr
    toru::fft::exchange_path path;
  };
  const run runs[] = {{"middle layout M, direct window", toru::fft::exchange_path::automatic},
                      {"middle layout M, window", toru::fft::exchange_path::automatic},
                      {"middle layout M, MPI_Alltoallw", toru::fft::exchange_path::automatic},
                      {nullptr, toru::fft::exchange_path::window},
                      {nullptr, toru::fft::exchange_path::alltoall}};
  for (const run& rn : runs) {
    const auto path = rn.path;
    if (only && (!rn.forced || std::strcmp(only, rn.forced) != 0)) continue;
    toru::fft::options3d o{.output = transposed ? toru::fft::order::transposed : toru::fft::order::natural,
                           .planner = measure ? toru::fft::effort::measure : toru::fft::effort::estimate,
                           .overlap = false,
                           .path = path};
    if (rn.forced) ::setenv("TORU_FFT_STRATEGY", rn.forced, 1);
    std::unique_ptr<toru::fft::fft3d<double>> made;
    try {
      made = std::make_unique<toru::fft::fft3d<double>>(MPI_COMM_WORLD, std::array<std::int64_t, 3>{n, n, n}, o);
    } catch (const toru::error& e) {  // not applicable here (refused on every rank)
      if (rank == 0) std::printf("%-8s %-34s not applicable: %s\n", "forced", rn.forced, e.what());
    }
    ::unsetenv("TORU_FFT_STRATEGY");
    if (!made) continue;
    const toru::fft::fft3d<double>& plan = *made;
    std::vector<std::complex<double>> a(plan.alloc_size(), 1.0), b(plan.alloc_size());
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = {std::sin(0.1 * double(i)), 0.5};
    plan.forward(a.data(), b.data());  // warm-up
    plan.backward(b.data(), a.data(), toru::fft::scale::full);
    std::map<std::string, std::vector<double>> samples;
    toru::events::set_sink(sink);
    for (int r = 0; r < reps; ++r) {
      totals.clear();
      MPI_Barrier(MPI_COMM_WORLD);
      plan.forward(a.data(), b.data());
      plan.backward(b.data(), a.data(), toru::fft::scale::full);
      for (const char* name : names) samples[name].push_back(max_over_ranks(totals[name]));
    }
    toru::events::set_sink(nullptr);
    if (rank == 0) {
      std::printf("%-8s %-34s",
                  rn.forced                                  ? "forced"
                  : path == toru::fft::exchange_path::window ? "window"
                                                             : "alltoall",
                  plan.strategy().c_str());
      for (const char* name : names) {
        auto v = samples[name];
        std::sort(v.begin(), v.end());
        std::printf(" %s %.4f", name, v[v.size() / 2]);
      }
      std::printf("\n");
    }
  }
  MPI_Finalize();
  return 0;
}
