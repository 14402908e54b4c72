// SPDX-License-Identifier: BSD-3-Clause
// What the per-call argument agreement costs next to the FFT it guards: a 32^3 complex-double
// forward (which includes the agreement) and the agreement's bare allreduce (3 x int64, MPI_MIN),
// interleaved, median of the max over ranks. A benchmark, not a test: docs/fft.md quotes it.
//   mpiexec -n 2 fft_agreement_bench [n] [reps]
#include <mpi.h>

#include <algorithm>
#include <array>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "toru/fft/fft3d.hpp"

namespace {
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
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
  const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : 32;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 200;
  int rank = 0, P = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  {
    toru::fft::fft3d<double> plan(MPI_COMM_WORLD, {n, n, n});
    std::vector<std::complex<double>> a(plan.alloc_size(), 1.0), b(plan.alloc_size());
    std::array<std::int64_t, 3> w{INT64_MAX, 42, ~42}, lo{};
    constexpr int inner = 20;  // allreduces per sample, so one sample is well above the clock's grain
    std::vector<double> fft_t, agree_t;
    for (int r = 0; r < reps + 5; ++r) {
      MPI_Barrier(MPI_COMM_WORLD);
      double t = MPI_Wtime();
      plan.forward(a.data(), b.data());
      t = max_over_ranks(MPI_Wtime() - t);
      MPI_Barrier(MPI_COMM_WORLD);
      double u = MPI_Wtime();
      for (int i = 0; i < inner; ++i) MPI_Allreduce(w.data(), lo.data(), 3, MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD);
      u = max_over_ranks((MPI_Wtime() - u) / inner);
      if (r >= 5) {
        fft_t.push_back(t);
        agree_t.push_back(u);
      }
    }
    if (rank == 0)
      std::printf("%d ranks, %lldx%lldx%lld forward: median %.1f us; agreement allreduce: median %.2f us (%.2f%%)\n", P,
                  static_cast<long long>(n), static_cast<long long>(n), static_cast<long long>(n), median(fft_t) * 1e6,
                  median(agree_t) * 1e6, 100 * median(agree_t) / median(fft_t));
  }
  MPI_Finalize();
}
