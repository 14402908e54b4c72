// SPDX-License-Identifier: BSD-3-Clause
// howmany fields: one fft3d_batch forward against howmany forwards of toru's fft3d (its own
// layout and strategy), on the same data, alternating, median over rounds. Not a test.
//   mpiexec -n 2 fft_batch_bench [n] [howmany] [rounds]
// Prints one JSON line (rank 0): medians, ranges, the ratio batched / singles.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "toru/fft/fft3d.hpp"
#include "toru/fft/fft3d_batch.hpp"

namespace {
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0, P = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : 128;
  const int F = argc > 2 ? std::atoi(argv[2]) : 3;
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 9;
  {
    using cpx = std::complex<double>;
    toru::fft::fft3d<double> single(MPI_COMM_WORLD, {n, n, n});
    toru::fft::fft3d_batch<double> batch(MPI_COMM_WORLD, {n, n, n}, F, toru::fft::fields::planar);
    std::vector<std::vector<cpx>> sin(F, std::vector<cpx>(single.alloc_size(), cpx(1, 0.5)));
    std::vector<std::vector<cpx>> sout(F, std::vector<cpx>(single.alloc_size()));
    std::vector<cpx> bin(batch.alloc_size(), cpx(1, 0.5)), bout(batch.alloc_size());
    std::vector<double> ts, tb;
    for (int r = -1; r < rounds; ++r) {  // round -1 warms up
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      for (int f = 0; f < F; ++f) single.forward(sin[f].data(), sout[f].data());
      MPI_Barrier(MPI_COMM_WORLD);
      const double t1 = MPI_Wtime();
      batch.forward(bin.data(), bout.data());
      MPI_Barrier(MPI_COMM_WORLD);
      const double t2 = MPI_Wtime();
      if (r >= 0) {
        ts.push_back(t1 - t0);
        tb.push_back(t2 - t1);
      }
    }
    if (rank == 0)
      std::printf(
          "{\"n\": %lld, \"ranks\": %d, \"howmany\": %d, \"rounds\": %d, \"singles_s\": %.6f, \"singles_range\": "
          "[%.6f, "
          "%.6f], \"batched_s\": %.6f, \"batched_range\": [%.6f, %.6f], \"single_strategy\": \"%s\", \"ratio\": "
          "%.3f}\n",
          static_cast<long long>(n), P, F, rounds, median(ts), *std::min_element(ts.begin(), ts.end()),
          *std::max_element(ts.begin(), ts.end()), median(tb), *std::min_element(tb.begin(), tb.end()),
          *std::max_element(tb.begin(), tb.end()), single.strategy().c_str(), median(tb) / median(ts));
  }
  MPI_Finalize();
  return 0;
}
