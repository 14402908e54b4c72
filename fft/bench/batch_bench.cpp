// SPDX-License-Identifier: BSD-3-Clause
// howmany fields: one batched forward against howmany single forwards of toru's own plan (its own
// layout and strategy), on the same data, alternating, median over rounds. Not a test.
//   c2c: fft3d_batch (planar) against howmany fft3d
//   r2c: fft3d_batch_r2c (interleaved, as toru-dns) against howmany fft3d_r2c
//   mpiexec -n 2 fft_batch_bench [n] [howmany] [rounds] [c2c|r2c] [natural|transposed] [estimate|measure]
// Prints one JSON line (rank 0): medians, ranges, the ratio batched / singles, and the noise floor
// (the median round-to-round change of the singles' time).
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "toru/fft/fft3d.hpp"
#include "toru/fft/fft3d_batch.hpp"

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The slowest rank's seconds per round.
struct timings {
  std::vector<double> singles, batched;
};

// Singles then batched, `rounds` times after one warm-up round.
timings alternate(int rounds, const std::function<void()>& singles, const std::function<void()>& batched) {
  timings t;
  for (int r = -1; r < rounds; ++r) {  // round -1 warms up
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    singles();
    MPI_Barrier(MPI_COMM_WORLD);
    const double t1 = MPI_Wtime();
    batched();
    MPI_Barrier(MPI_COMM_WORLD);
    const double t2 = MPI_Wtime();
    if (r >= 0) {
      // The slowest rank's time (barriers bound it already; the max makes it exact).
      double local[2] = {t1 - t0, t2 - t1}, global[2];
      MPI_Allreduce(local, global, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      t.singles.push_back(global[0]);
      t.batched.push_back(global[1]);
    }
  }
  return t;
}

// Round-to-round spread of the singles: the median of |t[r] - t[r-1]| / t[r-1].
double noise_floor(const std::vector<double>& t) {
  std::vector<double> d;
  for (std::size_t r = 1; r < t.size(); ++r) d.push_back(std::abs(t[r] - t[r - 1]) / t[r - 1]);
  return d.empty() ? 0.0 : median(d);
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
  const std::string kind = argc > 4 ? argv[4] : "c2c";
  const std::string ord = argc > 5 ? argv[5] : "natural";
  const std::string planner = argc > 6 ? argv[6] : "estimate";
  if ((kind != "c2c" && kind != "r2c") || (ord != "natural" && ord != "transposed") ||
      (planner != "estimate" && planner != "measure") || F < 1 || rounds < 1) {
    if (rank == 0)
      std::fprintf(stderr,
                   "usage: fft_batch_bench [n] [howmany >= 1] [rounds >= 1] [c2c|r2c] [natural|transposed] "
                   "[estimate|measure]\n");
    MPI_Finalize();
    return 2;
  }
  const toru::fft::options3d opts{
      .output = ord == "natural" ? toru::fft::order::natural : toru::fft::order::transposed,
      .planner = planner == "measure" ? toru::fft::effort::measure : toru::fft::effort::estimate};
  {
    using cpx = std::complex<double>;
    timings t;
    std::string strategy;
    if (kind == "c2c") {
      toru::fft::fft3d<double> single(MPI_COMM_WORLD, {n, n, n}, opts);
      toru::fft::fft3d_batch<double> batch(MPI_COMM_WORLD, {n, n, n}, F, toru::fft::fields::planar, opts);
      std::vector<std::vector<cpx>> sin(F, std::vector<cpx>(single.alloc_size(), cpx(1, 0.5)));
      std::vector<std::vector<cpx>> sout(F, std::vector<cpx>(single.alloc_size()));
      std::vector<cpx> bin(batch.alloc_size(), cpx(1, 0.5)), bout(batch.alloc_size());
      strategy = single.strategy();
      t = alternate(
          rounds,
          [&] {
            for (int f = 0; f < F; ++f) single.forward(sin[f].data(), sout[f].data());
          },
          [&] { batch.forward(bin.data(), bout.data()); });
    } else {
      toru::fft::fft3d_r2c<double> single(MPI_COMM_WORLD, {n, n, n}, opts);
      toru::fft::fft3d_batch_r2c<double> batch(MPI_COMM_WORLD, {n, n, n}, F, toru::fft::fields::interleaved, opts);
      std::vector<std::vector<double>> sin(F, std::vector<double>(2 * single.alloc_size(), 0.75));
      std::vector<std::vector<cpx>> sout(F, std::vector<cpx>(single.alloc_size()));
      std::vector<double> bin(2 * batch.alloc_size(), 0.75);
      std::vector<cpx> bout(batch.alloc_size());
      strategy = single.strategy();
      t = alternate(
          rounds,
          [&] {
            for (int f = 0; f < F; ++f) single.forward(sin[f].data(), sout[f].data());
          },
          [&] { batch.forward(bin.data(), bout.data()); });
    }
    const auto& ts = t.singles;
    const auto& tb = t.batched;
    if (rank == 0)
      std::printf(
          "{\"kind\": \"%s\", \"order\": \"%s\", \"planner\": \"%s\", \"n\": %lld, \"ranks\": %d, \"howmany\": %d, "
          "\"rounds\": %d, "
          "\"singles_s\": %.6f, \"singles_range\": [%.6f, %.6f], \"batched_s\": %.6f, \"batched_range\": [%.6f, "
          "%.6f], \"single_strategy\": \"%s\", \"ratio\": %.3f, \"noise_floor\": %.3f}\n",
          kind.c_str(), ord.c_str(), planner.c_str(), static_cast<long long>(n), P, F, rounds, median(ts),
          *std::min_element(ts.begin(), ts.end()), *std::max_element(ts.begin(), ts.end()), median(tb),
          *std::min_element(tb.begin(), tb.end()), *std::max_element(tb.begin(), tb.end()), strategy.c_str(),
          median(tb) / median(ts), noise_floor(ts));
  }
  MPI_Finalize();
  return 0;
}
