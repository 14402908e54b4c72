// SPDX-License-Identifier: BSD-3-Clause
// howmany fields: one batched forward against howmany single forwards of toru's own plan (its own
// layout and strategy), on the same data, alternating, median over rounds. Not a test. In the same
// run, the shared-memory limit for the same question: FFTW's threaded transform (as many threads
// as ranks, rank 0 alone, the others parked) of howmany fields in one plan (fftw_plan_many_*)
// against howmany single-field executes: what batching gains where no exchange is left to merge.
//   c2c: fft3d_batch (planar) against howmany fft3d
//   r2c: fft3d_batch_r2c (interleaved, as toru-dns) against howmany fft3d_r2c
//   mpiexec -n 2 fft_batch_bench [n] [howmany] [rounds] [c2c|r2c] [natural|transposed] [estimate|measure]
// Prints two JSON lines (rank 0), toru's and the limit's: medians, ranges, the ratio batched /
// singles, and the noise floor (the median round-to-round change of the singles' time).
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include <fftw3.h>

#include "bench/fftw_threads_peer.hpp"
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

// FFTW's threaded limit on rank 0 (P threads; the other ranks parked off the cores): F executes
// of a one-field plan against one F-field plan, alternating as toru's, seconds per round.
timings fftw_limit(bool r2c, std::int64_t n, int F, int P, unsigned flags, int rounds, int rank) {
  timings t;
  if (rank == 0) {
    const auto kind = r2c ? toru::apps::peer_kind::r2c_3d : toru::apps::peer_kind::c2c_3d;
    const toru::apps::fftw_threads_peer one(kind, {n, n, n}, P, flags);
    const toru::apps::fftw_threads_peer many(kind, {n, n, n}, P, flags, F);
    for (const auto* p : {&one, &many}) {
      if (r2c)
        std::fill(p->in_real(), p->in_real() + p->in_count(), 0.75);
      else
        std::fill(p->in_complex(), p->in_complex() + p->in_count(), std::complex<double>(1, 0.5));
    }
    for (int r = -1; r < rounds; ++r) {
      const double t0 = MPI_Wtime();
      for (int f = 0; f < F; ++f) one.execute();
      const double t1 = MPI_Wtime();
      many.execute();
      const double t2 = MPI_Wtime();
      if (r >= 0) {
        t.singles.push_back(t1 - t0);
        t.batched.push_back(t2 - t1);
      }
    }
  }
  toru::apps::park(MPI_COMM_WORLD);
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
    const timings lim =
        fftw_limit(kind == "r2c", n, F, P, planner == "measure" ? FFTW_MEASURE : FFTW_ESTIMATE, rounds, rank);
    const auto& ts = t.singles;
    const auto& tb = t.batched;
    if (rank == 0) {
      std::printf(
          "{\"kind\": \"%s\", \"order\": \"%s\", \"planner\": \"%s\", \"n\": %lld, \"ranks\": %d, \"howmany\": %d, "
          "\"rounds\": %d, "
          "\"singles_s\": %.6f, \"singles_range\": [%.6f, %.6f], \"batched_s\": %.6f, \"batched_range\": [%.6f, "
          "%.6f], \"single_strategy\": \"%s\", \"ratio\": %.3f, \"noise_floor\": %.3f}\n",
          kind.c_str(), ord.c_str(), planner.c_str(), static_cast<long long>(n), P, F, rounds, median(ts),
          *std::min_element(ts.begin(), ts.end()), *std::max_element(ts.begin(), ts.end()), median(tb),
          *std::min_element(tb.begin(), tb.end()), *std::max_element(tb.begin(), tb.end()), strategy.c_str(),
          median(tb) / median(ts), noise_floor(ts));
      std::printf(
          "{\"limit\": \"FFTW threads\", \"threads\": %d, \"singles_s\": %.6f, \"singles_range\": [%.6f, %.6f], "
          "\"batched_s\": %.6f, \"batched_range\": [%.6f, %.6f], \"ratio\": %.3f, \"noise_floor\": %.3f, "
          "\"toru_singles_over_limit_singles\": %.3f}\n",
          P, median(lim.singles), *std::min_element(lim.singles.begin(), lim.singles.end()),
          *std::max_element(lim.singles.begin(), lim.singles.end()), median(lim.batched),
          *std::min_element(lim.batched.begin(), lim.batched.end()),
          *std::max_element(lim.batched.begin(), lim.batched.end()), median(lim.batched) / median(lim.singles),
          noise_floor(lim.singles), median(ts) / median(lim.singles));
    }
  }
  MPI_Finalize();
  return 0;
}
