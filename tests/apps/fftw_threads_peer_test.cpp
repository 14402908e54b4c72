// SPDX-License-Identifier: BSD-3-Clause
// toru-fft-bench's shared-memory limit (bench/fftw_threads_peer.hpp): FFTW's threaded transforms
// against a direct O(N^2) DFT on awkward sizes, and park() leaving the waiting ranks' cores idle.
#include <gtest/gtest.h>
#include <mpi.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <numbers>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bench/fftw_threads_peer.hpp"
#include "toru/core/error.hpp"

#include <fftw3.h>

namespace {

using cpx = std::complex<double>;
using toru::apps::fftw_threads_peer;
using toru::apps::peer_kind;

// Forward DFT of a row-major n0 x n1 x n2 array, summed directly; returns the k2 < m2 columns.
std::vector<cpx> direct_dft(const std::vector<cpx>& x, std::array<std::int64_t, 3> n, std::int64_t m2) {
  std::vector<cpx> y(n[0] * n[1] * m2);
  for (std::int64_t k0 = 0; k0 < n[0]; ++k0)
    for (std::int64_t k1 = 0; k1 < n[1]; ++k1)
      for (std::int64_t k2 = 0; k2 < m2; ++k2) {
        cpx s = 0;
        for (std::int64_t i0 = 0; i0 < n[0]; ++i0)
          for (std::int64_t i1 = 0; i1 < n[1]; ++i1)
            for (std::int64_t i2 = 0; i2 < n[2]; ++i2) {
              const double ph = static_cast<double>(k0 * i0 % n[0]) / n[0] +
                                static_cast<double>(k1 * i1 % n[1]) / n[1] + static_cast<double>(k2 * i2 % n[2]) / n[2];
              s += x[(i0 * n[1] + i1) * n[2] + i2] * std::polar(1.0, -2 * std::numbers::pi * ph);
            }
        y[(k0 * n[1] + k1) * m2 + k2] = s;
      }
  return y;
}

std::vector<cpx> random_input(std::int64_t count, bool real) {
  std::mt19937_64 g(42);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<cpx> x(count);
  for (auto& v : x) v = real ? cpx(u(g), 0) : cpx(u(g), u(g));
  return x;
}

double max_error(const cpx* got, const std::vector<cpx>& want) {
  double e = 0, scale = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    e = std::max(e, std::abs(got[i] - want[i]));
    scale = std::max(scale, std::abs(want[i]));
  }
  return e / scale;
}

TEST(fftw_threads_peer, c2c_3d_matches_direct_dft) {
  const std::array<std::int64_t, 3> n{6, 10, 7};
  fftw_threads_peer p(peer_kind::c2c_3d, n, 2, FFTW_ESTIMATE);
  const auto x = random_input(p.in_count(), false);
  std::copy(x.begin(), x.end(), p.in_complex());
  p.execute();
  ASSERT_EQ(p.out_count(), 420);
  EXPECT_LT(max_error(p.out(), direct_dft(x, n, n[2])), 1e-13);
  EXPECT_GE(p.plan_seconds(), 0);
}

TEST(fftw_threads_peer, r2c_3d_matches_direct_dft) {
  const std::array<std::int64_t, 3> n{5, 6, 9};
  fftw_threads_peer p(peer_kind::r2c_3d, n, 3, FFTW_MEASURE);  // MEASURE clobbers in: filled after
  const auto x = random_input(p.in_count(), true);
  for (std::int64_t i = 0; i < p.in_count(); ++i) p.in_real()[i] = x[i].real();
  p.execute();
  ASSERT_EQ(p.out_count(), 5 * 6 * 5);
  EXPECT_LT(max_error(p.out(), direct_dft(x, n, n[2] / 2 + 1)), 1e-13);
}

TEST(fftw_threads_peer, c2c_1d_matches_direct_dft) {
  const std::int64_t n = 1155;  // 3 * 5 * 7 * 11
  fftw_threads_peer p(peer_kind::c2c_1d, {n, 1, 1}, 2, FFTW_MEASURE);
  const auto x = random_input(n, false);
  std::copy(x.begin(), x.end(), p.in_complex());
  p.execute();
  EXPECT_LT(max_error(p.out(), direct_dft(x, {n, 1, 1}, 1)), 1e-12);
}

TEST(fftw_threads_peer, rejects_zero_threads) {
  try {
    fftw_threads_peer p(peer_kind::c2c_3d, {4, 4, 4}, 0, FFTW_ESTIMATE);
    FAIL() << "no error";
  } catch (const toru::error& e) {
    EXPECT_NE(std::string(e.what()).find("threads"), std::string::npos) << e.what();
  }
}

double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// The limit plans with the process's wisdom set aside: inside the scope FFTW knows nothing it
// learnt before (a wisdom-only plan fails), after it everything is back, and the scope's own plans
// are forgotten; a wisdom file written inside holds the scope's plans and reads back into a scope.
TEST(fftw_threads_peer, wisdom_aside_hides_and_restores_the_process_wisdom) {
  const std::array<std::int64_t, 3> before{15, 1, 1}, inside{21, 1, 1};
  fftw_threads_peer learnt(peer_kind::c2c_1d, before, 2, FFTW_MEASURE);
  EXPECT_NO_THROW(fftw_threads_peer(peer_kind::c2c_1d, before, 2, FFTW_MEASURE | FFTW_WISDOM_ONLY));
  const std::string file = ::testing::TempDir() + "fftw_wisdom_aside_" + std::to_string(::getpid()) + ".wis";
  {
    const toru::apps::fftw_wisdom_aside aside;
    EXPECT_THROW(fftw_threads_peer(peer_kind::c2c_1d, before, 2, FFTW_MEASURE | FFTW_WISDOM_ONLY), toru::error);
    fftw_threads_peer planned(peer_kind::c2c_1d, inside, 2, FFTW_MEASURE);
    EXPECT_TRUE(toru::apps::export_fftw_wisdom(file.c_str()));
  }
  EXPECT_NO_THROW(fftw_threads_peer(peer_kind::c2c_1d, before, 2, FFTW_MEASURE | FFTW_WISDOM_ONLY));
  EXPECT_THROW(fftw_threads_peer(peer_kind::c2c_1d, inside, 2, FFTW_MEASURE | FFTW_WISDOM_ONLY), toru::error);
  {
    const toru::apps::fftw_wisdom_aside aside;
    EXPECT_TRUE(toru::apps::import_fftw_wisdom(file.c_str()));
    EXPECT_NO_THROW(fftw_threads_peer(peer_kind::c2c_1d, inside, 2, FFTW_MEASURE | FFTW_WISDOM_ONLY));
    EXPECT_THROW(fftw_threads_peer(peer_kind::c2c_1d, before, 2, FFTW_MEASURE | FFTW_WISDOM_ONLY), toru::error);
  }
  EXPECT_FALSE(toru::apps::import_fftw_wisdom((file + ".missing").c_str()));
  std::remove(file.c_str());
}

long voluntary_switches() {
  rusage u{};
  getrusage(RUSAGE_THREAD, &u);
  return u.ru_nvcsw;
}

// While rank 0 is busy (here: asleep for 0.4 s), the others wait in park() and must leave their
// cores alone: MPI_Barrier would spin on them for the whole 0.4 s, and a wait that wakes every
// 50 us (2900 wake-ups in the 0.4 s here) slowed FFTW's threads beside it by a quarter.
TEST(fftw_threads_peer, park_waits_without_spinning) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Barrier(MPI_COMM_WORLD);
  const auto t0 = std::chrono::steady_clock::now();
  const double c0 = thread_cpu_seconds();
  const long s0 = voluntary_switches();
  if (rank == 0) std::this_thread::sleep_for(std::chrono::milliseconds(400));
  toru::apps::park(MPI_COMM_WORLD);
  const double cpu = thread_cpu_seconds() - c0;
  const long wakeups = voluntary_switches() - s0;
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_GE(wall, 0.39);
  EXPECT_LT(cpu, 0.25 * wall) << "rank " << rank << ": " << cpu << " s of CPU in " << wall << " s of waiting";
  if (rank != 0) {
    EXPECT_LT(wakeups, 400) << "rank " << rank << " woke " << wakeups << " times in " << wall << " s";
  }
}

}  // namespace
