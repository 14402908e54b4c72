// SPDX-License-Identifier: BSD-3-Clause
// The node-local one-copy exchange (docs/fft.md, "One-copy exchanges on a node") and the strategy
// table: every forced path against serial FFTW on random inputs and awkward sizes, the choice
// agreed on every rank, the window's lifetime (plan destruction is local; the window goes with
// its communicator).
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "fft_test_util.hpp"
#include "mpi_test.hpp"
#include "node_window.hpp"
#include "plan3d.hpp"
#include "strategy.hpp"
#include "toru/comm/wisdom.hpp"
#include "toru/core/error.hpp"
#include "toru/core/events.hpp"
#include "toru/fft/fft1d.hpp"
#include "toru/fft/fft3d.hpp"
#include "wisdom.hpp"

namespace {

using toru::fft::decomposition;
using toru::fft::effort;
using toru::fft::exchange_path;
using toru::fft::order;
using toru::test::cnoise;
using cpx = std::complex<double>;

// Forward against serial FFTW, then backward back to the input; returns the strategy string.
std::string check_3d(MPI_Comm comm, std::array<std::int64_t, 3> n, toru::fft::options3d opts, bool in_place) {
  SCOPED_TRACE(::testing::Message() << n[0] << "x" << n[1] << "x" << n[2] << " " << toru::fft::to_string(opts.output)
                                    << " " << toru::fft::to_string(opts.decomp) << " path "
                                    << toru::fft::to_string(opts.path) << (in_place ? " in place" : ""));
  toru::fft::fft3d<double> plan(comm, n, opts);
  const std::int64_t N = n[0] * n[1] * n[2];
  std::vector<cpx> x(static_cast<std::size_t>(N));
  for (std::int64_t i = 0; i < N; ++i) x[i] = cnoise(static_cast<std::uint64_t>(i), 17);
  const auto X = toru::test::serial_dft3(n, x, FFTW_FORWARD);
  std::vector<cpx> a(plan.alloc_size()), b(plan.alloc_size()), c(plan.alloc_size());
  toru::test::for_each(plan.inbox(), [&](auto g, std::int64_t i) { a[i] = x[toru::test::flat(n, g)]; });
  cpx* out = in_place ? a.data() : b.data();
  plan.forward(a.data(), out);
  toru::test::error_norm e;
  toru::test::for_each(plan.outbox(), [&](auto g, std::int64_t i) { e.add(out[i], X[toru::test::flat(n, g)]); });
  EXPECT_LT(e.rel(comm), toru::test::tolerance<double>(static_cast<double>(N)));
  cpx* back = in_place ? out : c.data();
  plan.backward(out, back, toru::fft::scale::full);
  toru::test::error_norm r;
  toru::test::for_each(plan.inbox(), [&](auto g, std::int64_t i) { r.add(back[i], x[toru::test::flat(n, g)]); });
  EXPECT_LT(r.rel(comm), toru::test::tolerance<double>(static_cast<double>(N)));
  return plan.strategy();
}

std::string check_1d(std::int64_t n, toru::fft::options1d opts, bool in_place) {
  SCOPED_TRACE(::testing::Message() << "1D n=" << n << " " << toru::fft::to_string(opts.output) << " path "
                                    << toru::fft::to_string(opts.path));
  toru::fft::fft1d<double> plan(MPI_COMM_WORLD, n, opts);
  std::vector<cpx> x(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) x[i] = cnoise(static_cast<std::uint64_t>(i), 23);
  const auto X = toru::test::serial_dft1(x, FFTW_FORWARD);
  std::vector<cpx> a(plan.alloc_size()), b(plan.alloc_size()), c(plan.alloc_size());
  for (std::int64_t i = 0; i < plan.in_count(); ++i) a[i] = x[plan.in_start() + i];
  cpx* out = in_place ? a.data() : b.data();
  plan.forward(a.data(), out);
  toru::test::error_norm e;
  for (std::int64_t i = 0; i < plan.out_count(); ++i) {
    std::int64_t k = plan.out_start() + i;
    if (opts.output == order::transposed) k = k / plan.n2() + plan.n1() * (k % plan.n2());
    e.add(out[i], X[k]);
  }
  EXPECT_LT(e.rel(), toru::test::tolerance<double>(static_cast<double>(n)));
  cpx* back = in_place ? out : c.data();
  plan.backward(out, back, toru::fft::scale::full);
  toru::test::error_norm r;
  for (std::int64_t i = 0; i < plan.in_count(); ++i) r.add(back[i], x[plan.in_start() + i]);
  EXPECT_LT(r.rel(), toru::test::tolerance<double>(static_cast<double>(n)));
  return plan.strategy();
}

// r2c forward against serial FFTW's r2c, then c2r back; returns the strategy string.
std::string check_r2c_3d(std::array<std::int64_t, 3> n, toru::fft::options3d opts) {
  SCOPED_TRACE(::testing::Message() << "r2c " << n[0] << "x" << n[1] << "x" << n[2] << " "
                                    << toru::fft::to_string(opts.output) << " " << toru::fft::to_string(opts.decomp));
  toru::fft::fft3d_r2c<double> plan(MPI_COMM_WORLD, n, opts);
  const std::array<std::int64_t, 3> nh{n[0], n[1], n[2] / 2 + 1};
  const std::int64_t N = n[0] * n[1] * n[2];
  std::vector<double> x(static_cast<std::size_t>(N));
  for (std::int64_t i = 0; i < N; ++i) x[i] = toru::test::noise(static_cast<std::uint64_t>(i), 29);
  const auto X = toru::test::serial_r2c3(n, x);
  std::vector<cpx> a(plan.alloc_size()), b(plan.alloc_size());
  auto* real = reinterpret_cast<double*>(a.data());
  toru::test::for_each(plan.inbox(), [&](auto g, std::int64_t i) { real[i] = x[toru::test::flat(n, g)]; });
  plan.forward(real, b.data());
  toru::test::error_norm e;
  toru::test::for_each(plan.outbox(), [&](auto k, std::int64_t i) { e.add(b[i], X[toru::test::flat(nh, k)]); });
  EXPECT_LT(e.rel(), toru::test::tolerance<double>(static_cast<double>(N)));
  plan.backward(b.data(), real, toru::fft::scale::full);
  toru::test::error_norm r;
  toru::test::for_each(plan.inbox(), [&](auto g, std::int64_t i) { r.add(real[i], x[toru::test::flat(n, g)]); });
  EXPECT_LT(r.rel(), toru::test::tolerance<double>(static_cast<double>(N)));
  return plan.strategy();
}

// Rank 0's string, on every rank.
std::string rank0(const std::string& s) {
  int len = static_cast<int>(s.size());
  MPI_Bcast(&len, 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::string s0 = s;
  s0.resize(static_cast<std::size_t>(len));
  MPI_Bcast(s0.data(), len, MPI_CHAR, 0, MPI_COMM_WORLD);
  return s0;
}

bool window_disabled() {
  const char* e = std::getenv("TORU_FFT_WINDOW");
  return e && std::string(e) == "0";
}

TEST(FftWindow, ThreeDEveryPathMatchesSerialFftw) {
  if (window_disabled()) GTEST_SKIP() << "TORU_FFT_WINDOW=0";
  // Primes, uneven splits, a size-1 axis, fewer planes than ranks (pencil or idle ranks).
  const std::array<std::array<std::int64_t, 3>, 5> sizes{{{7, 9, 11}, {30, 17, 64}, {16, 6, 2}, {5, 1, 7}, {13, 4, 3}}};
  for (auto n : sizes)
    for (auto d : {decomposition::automatic, decomposition::slab, decomposition::pencil})
      for (auto o : {order::natural, order::transposed})
        for (auto path : {exchange_path::window, exchange_path::alltoall})
          for (bool in_place : {false, true}) {
            toru::fft::options3d opts{.decomp = d, .output = o, .path = path};
            std::string strategy;
            try {
              strategy = check_3d(MPI_COMM_WORLD, n, opts, in_place);
            } catch (const toru::error& err) {
              // Impossible grids, and the window forced where the output must be FFTW-MPI's
              // middle layout: refused on every rank, never wrong.
              EXPECT_EQ(err.code(), toru::errc::invalid_argument) << err.what();
              continue;
            }
            if (path == exchange_path::window) {
              EXPECT_NE(strategy.find("window"), std::string::npos) << strategy;
            }
            if (path == exchange_path::alltoall) {
              EXPECT_EQ(strategy.find("window"), std::string::npos) << strategy;
            }
          }
}

TEST(FftWindow, OneDEveryPathMatchesSerialFftw) {
  if (window_disabled()) GTEST_SKIP() << "TORU_FFT_WINDOW=0";
  for (std::int64_t n : {4096, 1000, 97, 6, 2310})
    for (auto o : {order::natural, order::transposed})
      for (auto path : {exchange_path::window, exchange_path::alltoall})
        for (bool in_place : {false, true}) {
          const std::string s = check_1d(n, {.output = o, .path = path}, in_place);
          EXPECT_EQ(s.find("window") != std::string::npos, path == exchange_path::window) << s;
        }
}

TEST(FftWindow, EstimateTakesTheWindowOnOneNode) {
  if (window_disabled()) GTEST_SKIP() << "TORU_FFT_WINDOW=0";
  // Everything runs on one node here: the cost model counts 2 copies against 4 for an all-to-all.
  EXPECT_NE(check_1d(4096, {}, false).find("window"), std::string::npos);
  EXPECT_NE(check_3d(MPI_COMM_WORLD, {12, 10, 9}, {.decomp = decomposition::pencil}, false).find("window"),
            std::string::npos);
  // overlap = false forbids only overlapping candidates.
  EXPECT_NE(check_1d(1000, {.overlap = false}, false).find("window"), std::string::npos);
}

TEST(FftWindow, MeasureAgreesOnEveryRankAndIsCorrect) {
  for (auto o : {order::natural, order::transposed}) {
    const std::string s3 = check_3d(MPI_COMM_WORLD, {16, 12, 10}, {.output = o, .planner = effort::measure}, false);
    const std::string s1 = check_1d(2310, {.output = o, .planner = effort::measure}, true);
    // Same choice everywhere: compare rank 0's strings.
    for (const std::string& s : {s3, s1}) {
      int len = static_cast<int>(s.size()), len0 = len;
      MPI_Bcast(&len0, 1, MPI_INT, 0, MPI_COMM_WORLD);
      ASSERT_EQ(len, len0) << s;
      std::string s0 = s;
      MPI_Bcast(s0.data(), len, MPI_CHAR, 0, MPI_COMM_WORLD);
      EXPECT_EQ(s, s0);
    }
  }
}

TEST(FftWindow, EstimateAgreesOnEveryRankOnUnevenSizes) {
  // Prime and uneven sizes split unevenly over 3 ranks: each rank's exchange differs in size, the
  // strategy must not (a rank that picks another exchange hangs the next collective). Runs with and
  // without the window (TORU_FFT_WINDOW=0).
  const std::array<std::array<std::int64_t, 3>, 4> sizes{{{13, 7, 11}, {31, 5, 2}, {11, 13, 7}, {5, 3, 17}}};
  for (auto n : sizes)
    for (auto d : {decomposition::automatic, decomposition::slab, decomposition::pencil})
      for (auto o : {order::natural, order::transposed}) {
        const toru::fft::options3d opts{.decomp = d, .output = o};
        for (bool r2c : {false, true}) {
          std::string s;
          try {
            s = r2c ? check_r2c_3d(n, opts) : check_3d(MPI_COMM_WORLD, n, opts, false);
          } catch (const toru::error& err) {
            EXPECT_NE(d, decomposition::automatic) << err.what();
            EXPECT_EQ(err.code(), toru::errc::invalid_argument) << err.what();
            continue;
          }
          EXPECT_EQ(s, rank0(s)) << (r2c ? "r2c " : "c2c ") << n[0] << "x" << n[1] << "x" << n[2];
        }
      }
  for (std::int64_t n : {1001, 310, 97})
    for (auto o : {order::natural, order::transposed}) {
      const std::string s = check_1d(n, {.output = o}, false);
      EXPECT_EQ(s, rank0(s)) << "1D " << n;
    }
}

TEST(FftWindow, MeasureChoiceComesFromWisdomTheSecondTime) {
  // One file for all ranks: rank 0's name (only rank 0 reads and writes it).
  std::string path = "/tmp/toru_fft_wisdom_test_" + std::to_string(::getpid()) + ".json";
  path = rank0(path);
  if (toru::test::rank() == 0) std::remove(path.c_str());
  MPI_Barrier(MPI_COMM_WORLD);
  ::setenv("TORU_FFT_WISDOM", path.c_str(), 1);
  toru::comm::forget_wisdom();  // earlier tests' measurements are in the process's store
  const toru::fft::options3d m3{.planner = effort::measure};
  const toru::fft::options1d m1{.planner = effort::measure};
  const long t0 = toru::fft::detail::measured_timings();
  const std::string a3 = check_3d(MPI_COMM_WORLD, {16, 12, 10}, m3, false);
  const std::string a1 = check_1d(2310, m1, false);
  const long t1 = toru::fft::detail::measured_timings();
  EXPECT_GT(t1, t0) << "the first plans must time their candidates";
  // Same keys: the recorded choice, no timing, on every rank.
  EXPECT_EQ(check_3d(MPI_COMM_WORLD, {16, 12, 10}, m3, false), a3);
  EXPECT_EQ(check_1d(2310, m1, false), a1);
  EXPECT_EQ(toru::fft::detail::measured_timings(), t1);
  // The file is the process's whole wisdom document: a fresh store loads it through comm's API
  // and the plan times nothing.
  toru::comm::forget_wisdom();
  ::unsetenv("TORU_FFT_WISDOM");
  toru::comm::load_wisdom(MPI_COMM_WORLD, path);
  EXPECT_EQ(check_3d(MPI_COMM_WORLD, {16, 12, 10}, m3, false), a3);
  EXPECT_EQ(toru::fft::detail::measured_timings(), t1);
  ::setenv("TORU_FFT_WISDOM", path.c_str(), 1);
  // Another key (size) is timed again.
  check_3d(MPI_COMM_WORLD, {16, 12, 12}, m3, false);
  EXPECT_GT(toru::fft::detail::measured_timings(), t1);
  if (toru::test::rank() == 0) {
    std::ifstream in(path);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("fft3d c2c double 16x12x10"), std::string::npos) << text;
    EXPECT_NE(text.find(a3), std::string::npos) << text;
  }
  ::unsetenv("TORU_FFT_WISDOM");
  MPI_Barrier(MPI_COMM_WORLD);
  if (toru::test::rank() == 0) std::remove(path.c_str());
}

TEST(FftWindow, ForcedWindowRefusedWhenDisabled) {
  if (!window_disabled()) GTEST_SKIP() << "runs under TORU_FFT_WINDOW=0";
  try {
    toru::fft::fft1d<double> plan(MPI_COMM_WORLD, 1000, {.path = exchange_path::window});
    ADD_FAILURE() << "a forced window without one was accepted";
  } catch (const toru::error& e) {
    EXPECT_EQ(e.code(), toru::errc::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("options.path"), std::string::npos) << e.what();
  }
  EXPECT_EQ(check_1d(1000, {}, false).find("window"), std::string::npos);
  EXPECT_EQ(check_3d(MPI_COMM_WORLD, {7, 9, 11}, {}, false).find("window"), std::string::npos);
}

// TORU_FFT_STRATEGY set on every rank for one scope.
struct forced_strategy {
  explicit forced_strategy(const char* name) { ::setenv("TORU_FFT_STRATEGY", name, 1); }
  ~forced_strategy() { ::unsetenv("TORU_FFT_STRATEGY"); }
};

constexpr const char* direct_name = "middle layout M, direct window";

TEST(FftWindow, EveryMiddleLayoutCandidateMatchesSerialFftw) {
  // The slab's middle layout M three ways (the local FFTs writing into the node arrays, the copy
  // into the peers' window buffers, MPI_Alltoallw), each forced, against serial FFTW: uneven
  // splits of both axes, c2c and r2c, both orders, in and out of place. A candidate that does not
  // apply (no window, too many ranks for a slab) is refused on every rank, never wrong.
  const std::array<std::array<std::int64_t, 3>, 3> sizes{{{16, 12, 10}, {30, 17, 64}, {5, 6, 4}}};
  int direct_ran = 0;
  for (const char* name : {direct_name, "middle layout M, window", "middle layout M, MPI_Alltoallw"}) {
    const forced_strategy force(name);
    for (auto n : sizes)
      for (auto o : {order::natural, order::transposed}) {
        const toru::fft::options3d opts{.decomp = decomposition::slab, .output = o};
        for (int variant = 0; variant < 3; ++variant) {
          std::string s;
          try {
            s = variant == 2 ? check_r2c_3d(n, opts) : check_3d(MPI_COMM_WORLD, n, opts, variant == 1);
          } catch (const toru::error& err) {
            EXPECT_EQ(err.code(), toru::errc::invalid_argument) << name << ": " << err.what();
            continue;
          }
          EXPECT_EQ(s, name);
          EXPECT_EQ(s, rank0(s));
          if (s == direct_name) ++direct_ran;
        }
      }
  }
  // On one node with the window on, MPI places the parts end to end (Open MPI's default
  // MPI_Win_allocate_shared): the direct path must have run wherever a slab fits.
  if (!window_disabled() && toru::test::nranks() <= 5) {
    EXPECT_GT(direct_ran, 0);
  }
}

// Counts the axis-0 FFTs that ran straight between M and a shared output, and the gather passes.
std::atomic<int> to_rows{0}, from_rows{0}, gathers{0};
void count_shared(int kind, const char* name, const char*, std::uint64_t, double) noexcept {
  if (kind != static_cast<int>(toru::events::kind::begin)) return;
  const std::string_view n(name);
  if (n == "fft.axis0.in_rows") ++to_rows;
  if (n == "fft.axis0.from_rows") ++from_rows;
  if (n == "fft.window.out") ++gathers;
}
struct shared_counts {
  shared_counts() {
    to_rows = from_rows = gathers = 0;
    toru::events::set_sink(&count_shared);
  }
  ~shared_counts() { toru::events::set_sink(nullptr); }
};

TEST(FftWindow, SharedOutMatchesSerialFftwWithoutTheGatherPass) {
  // shared_out() on the direct window in natural order: the axis-0 FFTs write (read) every rank's
  // buffer straight. Against serial FFTW on uneven splits (45 planes, 20 rows over 2-4 ranks), out
  // of place and in place, c2c and r2c, forward and backward; the gather/scatter pass must not run
  // (the events), and a private buffer on the same plan still gives the same answer.
  if (window_disabled()) GTEST_SKIP() << "TORU_FFT_WINDOW=0";
  const forced_strategy force(direct_name);
  const std::array<std::int64_t, 3> n{45, 20, 126};
  const std::int64_t N = n[0] * n[1] * n[2];
  const toru::fft::options3d opts{.decomp = decomposition::slab};
  toru::fft::fft3d<double> plan(MPI_COMM_WORLD, n, opts);
  if (plan.strategy() != direct_name) GTEST_SKIP() << "no direct window here: " << plan.strategy();
  std::vector<cpx> x(static_cast<std::size_t>(N));
  for (std::int64_t i = 0; i < N; ++i) x[i] = cnoise(static_cast<std::uint64_t>(i), 41);
  const auto X = toru::test::serial_dft3(n, x, FFTW_FORWARD);
  const int windows = toru::fft::detail::live_windows();
  cpx* shared = plan.shared_out();
  EXPECT_EQ(plan.shared_out(), shared);
  EXPECT_EQ(toru::fft::detail::live_windows(), windows + 1);  // a window of its own
  std::vector<cpx> a(plan.alloc_size()), c(plan.alloc_size());
  toru::test::for_each(plan.inbox(), [&](auto g, std::int64_t i) { a[i] = x[toru::test::flat(n, g)]; });
  const auto expect_spectrum = [&](const cpx* out) {
    toru::test::error_norm e;
    toru::test::for_each(plan.outbox(), [&](auto k, std::int64_t i) { e.add(out[i], X[toru::test::flat(n, k)]); });
    EXPECT_LT(e.rel(), toru::test::tolerance<double>(static_cast<double>(N)));
  };
  const auto expect_input = [&](const cpx* back) {
    toru::test::error_norm r;
    toru::test::for_each(plan.inbox(), [&](auto g, std::int64_t i) { r.add(back[i], x[toru::test::flat(n, g)]); });
    EXPECT_LT(r.rel(), toru::test::tolerance<double>(static_cast<double>(N)));
  };
  {
    const shared_counts counted;
    // The backward's planes read M through a plane scratch ("fft.window.out" too): count forwards.
    const auto forward_without_gather = [&](const cpx* in) {
      gathers = 0;
      plan.forward(in, shared);
      EXPECT_EQ(gathers.load(), 0);
    };
    forward_without_gather(a.data());
    expect_spectrum(shared);
    plan.backward(shared, c.data(), toru::fft::scale::full);
    expect_input(c.data());
    // In place in the shared buffer, twice (the buffers alternate between uses).
    for (int round = 0; round < 2; ++round) {
      std::copy(a.begin(), a.end(), shared);
      forward_without_gather(shared);
      expect_spectrum(shared);
      plan.backward(shared, shared, toru::fft::scale::full);
      expect_input(shared);
    }
    // Every rank has i1 rows of M here (20 rows, at most 4 ranks), so runs the axis-0 FFTs.
    EXPECT_EQ(to_rows.load(), 3);
    EXPECT_EQ(from_rows.load(), 3);
  }
  {
    const shared_counts counted;
    std::vector<cpx> b(plan.alloc_size());
    plan.forward(a.data(), b.data());
    expect_spectrum(b.data());
    EXPECT_EQ(to_rows.load(), 0);
    EXPECT_GT(gathers.load(), 0);
  }

  // r2c: the complex side shared, the real side the caller's.
  toru::fft::fft3d_r2c<double> r2c(MPI_COMM_WORLD, n, opts);
  ASSERT_EQ(r2c.strategy(), direct_name);
  const std::array<std::int64_t, 3> nh{n[0], n[1], n[2] / 2 + 1};
  std::vector<double> xr(static_cast<std::size_t>(N));
  for (std::int64_t i = 0; i < N; ++i) xr[i] = toru::test::noise(static_cast<std::uint64_t>(i), 43);
  const auto XR = toru::test::serial_r2c3(n, xr);
  std::vector<double> real(2 * static_cast<std::size_t>(r2c.alloc_size()));
  toru::test::for_each(r2c.inbox(), [&](auto g, std::int64_t i) { real[i] = xr[toru::test::flat(n, g)]; });
  cpx* spectrum = r2c.shared_out();
  EXPECT_NE(spectrum, shared);
  const shared_counts counted;
  r2c.forward(real.data(), spectrum);
  EXPECT_EQ(gathers.load(), 0);
  toru::test::error_norm e;
  toru::test::for_each(r2c.outbox(), [&](auto k, std::int64_t i) { e.add(spectrum[i], XR[toru::test::flat(nh, k)]); });
  EXPECT_LT(e.rel(), toru::test::tolerance<double>(static_cast<double>(N)));
  std::vector<double> back(real.size());
  r2c.backward(spectrum, back.data(), toru::fft::scale::full);
  toru::test::error_norm r;
  toru::test::for_each(r2c.inbox(), [&](auto g, std::int64_t i) { r.add(back[i], xr[toru::test::flat(n, g)]); });
  EXPECT_LT(r.rel(), toru::test::tolerance<double>(static_cast<double>(N)));
  EXPECT_EQ(from_rows.load(), 1);

  // Packed real rows (options3d::rows, NumPy's), in place in the shared buffer: the real planes are
  // shorter than the complex planes they become, so the forward must not overrun unread input.
  toru::fft::options3d po = opts;
  po.rows = toru::fft::real_rows::packed;
  toru::fft::fft3d_r2c<double> packed(MPI_COMM_WORLD, n, po);
  ASSERT_EQ(packed.strategy(), direct_name);
  ASSERT_EQ(packed.inbox().row_stride, n[2]);
  cpx* both = packed.shared_out();
  auto* rows = reinterpret_cast<double*>(both);
  toru::test::for_each(packed.inbox(), [&](auto g, std::int64_t i) { rows[i] = xr[toru::test::flat(n, g)]; });
  packed.forward(rows, both);
  toru::test::error_norm ep;
  toru::test::for_each(packed.outbox(), [&](auto k, std::int64_t i) { ep.add(both[i], XR[toru::test::flat(nh, k)]); });
  EXPECT_LT(ep.rel(), toru::test::tolerance<double>(static_cast<double>(N)));
  packed.backward(both, rows, toru::fft::scale::full);
  toru::test::error_norm rp;
  toru::test::for_each(packed.inbox(), [&](auto g, std::int64_t i) { rp.add(rows[i], xr[toru::test::flat(n, g)]); });
  EXPECT_LT(rp.rel(), toru::test::tolerance<double>(static_cast<double>(N)));
}

TEST(FftWindow, SharedOutUnderMeasureMatchesSerialFftw) {
  // Under MEASURE shared_out() times tile widths on a sample of the rows (writing zeros there and,
  // backward, into M): the transforms after it still match serial FFTW, both directions, r2c too.
  if (window_disabled()) GTEST_SKIP() << "TORU_FFT_WINDOW=0";
  const forced_strategy force(direct_name);
  const std::array<std::int64_t, 3> n{45, 20, 126};
  const std::int64_t N = n[0] * n[1] * n[2];
  const toru::fft::options3d opts{.decomp = decomposition::slab, .planner = effort::measure};
  toru::fft::fft3d<double> plan(MPI_COMM_WORLD, n, opts);
  if (plan.strategy() != direct_name) GTEST_SKIP() << "no direct window here: " << plan.strategy();
  std::vector<cpx> x(static_cast<std::size_t>(N));
  for (std::int64_t i = 0; i < N; ++i) x[i] = cnoise(static_cast<std::uint64_t>(i), 47);
  const auto X = toru::test::serial_dft3(n, x, FFTW_FORWARD);
  std::vector<cpx> a(plan.alloc_size()), c(plan.alloc_size());
  toru::test::for_each(plan.inbox(), [&](auto g, std::int64_t i) { a[i] = x[toru::test::flat(n, g)]; });
  cpx* k = plan.shared_out();
  const shared_counts counted;
  plan.forward(a.data(), k);
  toru::test::error_norm e;
  toru::test::for_each(plan.outbox(), [&](auto g, std::int64_t i) { e.add(k[i], X[toru::test::flat(n, g)]); });
  EXPECT_LT(e.rel(), toru::test::tolerance<double>(static_cast<double>(N)));
  plan.backward(k, c.data(), toru::fft::scale::full);
  toru::test::error_norm r;
  toru::test::for_each(plan.inbox(), [&](auto g, std::int64_t i) { r.add(c[i], x[toru::test::flat(n, g)]); });
  EXPECT_LT(r.rel(), toru::test::tolerance<double>(static_cast<double>(N)));
  EXPECT_EQ(to_rows.load(), 1);
  EXPECT_EQ(from_rows.load(), 1);
}

TEST(FftWindow, SharedOutOnSomeRanksOnlyIsAMismatchEverywhere) {
  // One rank passing its shared_out() while another passes a buffer of its own: the same error on
  // every rank, before any rank writes another's buffer; the plan still works after it.
  if (toru::test::nranks() < 2) GTEST_SKIP() << "needs 2 ranks";
  const std::array<std::int64_t, 3> n{45, 20, 126};
  toru::fft::fft3d<double> plan(MPI_COMM_WORLD, n, {.decomp = decomposition::slab});
  std::vector<cpx> a(plan.alloc_size(), cpx(1, 0)), b(plan.alloc_size());
  cpx* out = toru::test::rank() == 1 ? b.data() : plan.shared_out();
  if (toru::test::rank() == 1) (void)plan.shared_out();  // collective on every rank
  try {
    plan.forward(a.data(), out);
    ADD_FAILURE() << "expected errc::mismatch";
  } catch (const toru::error& e) {
    EXPECT_EQ(e.code(), toru::errc::mismatch) << e.what();
    EXPECT_NE(std::string(e.what()).find("shared_out"), std::string::npos) << e.what();
  }
  plan.forward(a.data(), plan.shared_out());
  // A constant input: all of it lands on frequency 0.
  double off = 0;
  toru::test::for_each(plan.outbox(), [&](auto k, std::int64_t i) {
    const cpx want = k[0] == 0 && k[1] == 0 && k[2] == 0 ? cpx(static_cast<double>(n[0] * n[1] * n[2]), 0) : cpx(0, 0);
    off = std::max(off, std::abs(plan.shared_out()[i] - want));
  });
  EXPECT_LT(off, 1e-9 * static_cast<double>(n[0] * n[1] * n[2]));
}

TEST(FftWindow, OneDDirectWindowMatchesSerialFftw) {
  // The 1D direct window forced (and the element-wise window beside it), against serial FFTW:
  // square, rectangular (n1 != n2), prime-factor and uneven splits, given n1s whose lines split
  // unevenly and leave a part-tile (2020 = 20 x 101: 101 lines in tiles of 32), both orders, in
  // and out of place. Where a rank would hold no rows (97 = 1 x 97 on 2 ranks or more), the node
  // arrays have an empty part and the direct window is refused on every rank.
  int direct_ran = 0;
  for (const char* name : {"direct window", "window, 1 blocks"}) {
    const forced_strategy force(name);
    for (const auto& [n, n1] : std::vector<std::pair<std::int64_t, std::int64_t>>{
             {4096, 0}, {1000, 0}, {2310, 0}, {360, 24}, {3 * 1024, 96}, {2020, 20}, {2020, 101}, {97, 0}})
      for (auto o : {order::natural, order::transposed})
        for (bool in_place : {false, true}) {
          std::string s;
          try {
            s = check_1d(n, {.n1 = n1, .output = o}, in_place);
          } catch (const toru::error& err) {
            EXPECT_EQ(err.code(), toru::errc::invalid_argument) << name << ": " << err.what();
            continue;
          }
          EXPECT_EQ(s, name);
          EXPECT_EQ(s, rank0(s));
          if (s == std::string("direct window")) ++direct_ran;
        }
  }
  if (!window_disabled() && toru::test::nranks() <= 4) {
    // Every size, both orders, in and out of place; 97 only where one rank holds all of it.
    EXPECT_EQ(direct_ran, toru::test::nranks() == 1 ? 32 : 28);
  }
}

TEST(FftWindow, DirectWindowsOfOnePlanAndAnotherShareTheNodeArrays) {
  // A 1D and a 3D plan on the direct windows of one communicator, sized so that their parts match
  // on 1, 2 and 4 ranks (4096 = 64 x 64 against 32 x 16 x 8: the same node array object, its
  // parities shared), their transforms interleaved: every result against serial FFTW.
  if (window_disabled()) GTEST_SKIP() << "TORU_FFT_WINDOW=0";
  const std::int64_t n = 4096;
  const std::array<std::int64_t, 3> n3{32, 16, 8};
  std::optional<forced_strategy> force(std::in_place, direct_name);
  toru::fft::fft3d<double> p3(MPI_COMM_WORLD, n3, {.decomp = decomposition::slab});
  force.emplace("direct window");
  const int windows = toru::fft::detail::live_windows();
  toru::fft::fft1d<double> p1(MPI_COMM_WORLD, n);
  force.reset();
  if (p3.strategy() != direct_name) GTEST_SKIP() << "no 3D direct window here: " << p3.strategy();
  ASSERT_EQ(p1.strategy(), "direct window");
  const int P = toru::test::nranks();
  if (P == 1 || P == 2 || P == 4) {
    EXPECT_EQ(toru::fft::detail::live_windows(), windows) << "the 1D plan found the 3D plan's arrays";
  }

  std::vector<cpx> x1(static_cast<std::size_t>(n)), x3(static_cast<std::size_t>(n3[0] * n3[1] * n3[2]));
  for (std::size_t i = 0; i < x1.size(); ++i) x1[i] = cnoise(i, 41);
  for (std::size_t i = 0; i < x3.size(); ++i) x3[i] = cnoise(i, 43);
  const auto X1 = toru::test::serial_dft1(x1, FFTW_FORWARD);
  const auto X3 = toru::test::serial_dft3(n3, x3, FFTW_FORWARD);
  std::vector<cpx> a1(p1.alloc_size()), b1(p1.alloc_size()), a3(p3.alloc_size()), b3(p3.alloc_size());
  for (int round = 0; round < 3; ++round) {
    for (std::int64_t i = 0; i < p1.in_count(); ++i) a1[i] = x1[p1.in_start() + i];
    toru::test::for_each(p3.inbox(), [&](auto g, std::int64_t i) { a3[i] = x3[toru::test::flat(n3, g)]; });
    p1.forward(a1.data(), b1.data());
    p3.forward(a3.data(), b3.data());
    toru::test::error_norm e1, e3;
    for (std::int64_t i = 0; i < p1.out_count(); ++i) e1.add(b1[i], X1[p1.out_start() + i]);
    toru::test::for_each(p3.outbox(), [&](auto g, std::int64_t i) { e3.add(b3[i], X3[toru::test::flat(n3, g)]); });
    EXPECT_LT(e1.rel(), toru::test::tolerance<double>(static_cast<double>(n))) << "round " << round;
    EXPECT_LT(e3.rel(), toru::test::tolerance<double>(static_cast<double>(x3.size()))) << "round " << round;
    p3.backward(b3.data(), a3.data(), toru::fft::scale::full);
    p1.backward(b1.data(), a1.data(), toru::fft::scale::full);
    toru::test::error_norm r1, r3;
    for (std::int64_t i = 0; i < p1.in_count(); ++i) r1.add(a1[i], x1[p1.in_start() + i]);
    toru::test::for_each(p3.inbox(), [&](auto g, std::int64_t i) { r3.add(a3[i], x3[toru::test::flat(n3, g)]); });
    EXPECT_LT(r1.rel(), toru::test::tolerance<double>(static_cast<double>(n))) << "round " << round;
    EXPECT_LT(r3.rel(), toru::test::tolerance<double>(static_cast<double>(x3.size()))) << "round " << round;
  }
}

TEST(FftWindow, ForcedMeasurePlanTimesNothingAndKeepsTheTablesChoice) {
  // A plan with one applicable candidate (TORU_FFT_STRATEGY) has nothing to choose: it must not
  // time it, nor record it under the table's key, where the next unforced plan would read it back.
  toru::comm::forget_wisdom();
  const toru::fft::options3d m3{.planner = effort::measure};
  toru::fft::fft3d<double> chosen(MPI_COMM_WORLD, {16, 12, 10}, m3);
  const std::vector<std::string> names = chosen.candidates();
  ASSERT_FALSE(names.empty());
  EXPECT_NE(std::find(names.begin(), names.end(), chosen.strategy()), names.end()) << chosen.strategy();
  const long t0 = toru::fft::detail::measured_timings();
  for (const std::string& name : names) {
    const forced_strategy force(name.c_str());
    EXPECT_EQ(check_3d(MPI_COMM_WORLD, {16, 12, 10}, m3, false), name);
  }
  EXPECT_EQ(toru::fft::detail::measured_timings(), t0);
  EXPECT_EQ(check_3d(MPI_COMM_WORLD, {16, 12, 10}, m3, false), chosen.strategy());
  EXPECT_EQ(toru::fft::detail::measured_timings(), t0) << "the table's choice came from the store";
  toru::comm::forget_wisdom();
}

// planner_seconds(): what MEASURE timed, per applicable candidate, the same on every rank (the
// slowest rank's figures); nothing under ESTIMATE or when the choice is read back from wisdom. On
// one node MEASURE leaves the element-wise all-to-all candidates untimed (overlap hides nothing
// there, and the window candidates move the same bytes with fewer copies).
TEST(FftWindow, PlannerSecondsAreWhatMeasureTimed) {
  toru::comm::forget_wisdom();
  const toru::fft::options3d m3{.planner = effort::measure};
  const toru::fft::options1d m1{.planner = effort::measure};
  toru::fft::fft3d<double> p3(MPI_COMM_WORLD, {16, 12, 10}, m3);
  toru::fft::fft1d<double> p1(MPI_COMM_WORLD, 2310, m1);
  auto check = [](const auto& plan) {
    const auto timed = plan.planner_seconds();
    auto names = plan.candidates();
    if (names.size() < 2) {  // nothing to choose: nothing timed
      EXPECT_TRUE(timed.empty());
      return;
    }
    // The tests run on one node; TORU_FFT_WINDOW=0 makes the plans cost it as several.
    // Where the direct window applies, it is timed in place of the other two M candidates.
    if (!window_disabled()) {
      std::erase_if(names, [](const std::string& n) { return n.starts_with("all-to-all"); });
      if (std::ranges::find(names, std::string(direct_name)) != names.end())
        std::erase_if(names, [](const std::string& n) { return n.starts_with("middle layout M") && n != direct_name; });
    }
    ASSERT_EQ(timed.size(), names.size());
    double chosen = -1, fastest = 1e30;
    for (std::size_t i = 0; i < timed.size(); ++i) {
      EXPECT_EQ(timed[i].first, names[i]);
      EXPECT_GT(timed[i].second, 0) << timed[i].first;
      if (timed[i].first == plan.strategy()) chosen = timed[i].second;
      fastest = std::min(fastest, timed[i].second);
      double lo = timed[i].second, hi = timed[i].second;
      MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
      MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      EXPECT_EQ(lo, hi) << timed[i].first;
    }
    // the choice is the fastest figure, or within the 2 % that lets an earlier candidate win a tie
    EXPECT_LE(chosen, fastest / 0.98 + 1e-12) << plan.strategy();
  };
  check(p3);
  check(p1);
  // The same keys again: the choice comes from the store, nothing is timed.
  EXPECT_TRUE(toru::fft::fft3d<double>(MPI_COMM_WORLD, {16, 12, 10}, m3).planner_seconds().empty());
  EXPECT_TRUE(toru::fft::fft1d<double>(MPI_COMM_WORLD, 2310, m1).planner_seconds().empty());
  EXPECT_TRUE(toru::fft::fft3d<double>(MPI_COMM_WORLD, {16, 12, 10}).planner_seconds().empty());
  toru::comm::forget_wisdom();
}

TEST(FftWindow, MeasureChoiceGoesThroughCommWisdom) {
  // The FFT's measured choices live in toru's one wisdom store: exported with comm's entries,
  // imported back, no timing on a hit.
  toru::comm::forget_wisdom();
  // Natural order: more than one candidate applies with or without the window (transposed output
  // without it leaves only MPI_Alltoallw, which is not timed).
  const toru::fft::options3d m3{.planner = effort::measure};
  const long t0 = toru::fft::detail::measured_timings();
  const std::string a = check_3d(MPI_COMM_WORLD, {12, 8, 6}, m3, false);
  const long t1 = toru::fft::detail::measured_timings();
  EXPECT_GT(t1, t0);
  const std::string doc = toru::comm::export_wisdom();
  EXPECT_NE(doc.find("\"toru_wisdom\""), std::string::npos) << doc;
  EXPECT_NE(doc.find("fft3d c2c double 12x8x6"), std::string::npos) << doc;
  EXPECT_NE(doc.find(a), std::string::npos) << doc;
  // In-process: the same key again times nothing.
  EXPECT_EQ(check_3d(MPI_COMM_WORLD, {12, 8, 6}, m3, false), a);
  EXPECT_EQ(toru::fft::detail::measured_timings(), t1);
  // Forgotten: timed again; imported from the exported document: not timed, same choice.
  toru::comm::forget_wisdom();
  check_3d(MPI_COMM_WORLD, {12, 8, 6}, m3, false);
  const long t2 = toru::fft::detail::measured_timings();
  EXPECT_GT(t2, t1);
  toru::comm::forget_wisdom();
  toru::comm::import_wisdom(doc);
  EXPECT_EQ(check_3d(MPI_COMM_WORLD, {12, 8, 6}, m3, false), a);
  EXPECT_EQ(toru::fft::detail::measured_timings(), t2);
  // A malformed section is refused and leaves the store as it was.
  EXPECT_THROW(toru::comm::import_wisdom(R"({"toru_wisdom": 1, "fft": 3})"), toru::error);
  EXPECT_THROW(toru::comm::import_wisdom(R"({"toru_alltoall_wisdom": 1, "entries": [], "sections": {"fft": 3}})"),
               toru::error);
  EXPECT_EQ(check_3d(MPI_COMM_WORLD, {12, 8, 6}, m3, false), a);
  EXPECT_EQ(toru::fft::detail::measured_timings(), t2);
  toru::comm::forget_wisdom();
}

TEST(FftStrategy, EstimateIsTheFastestRecordedCandidateWithinTheNoiseFloor) {
  // The model against what was measured: 128^3 c2c double slabs on this project's idle 2-core
  // machine, every candidate forced and timed in one rotation (docs/history/benchmarks-2026-12.md, "Every
  // candidate timed", 2026-12-02: `toru-fft-bench --candidates`, median seconds per forward; noise
  // floor = that row's same-plan-twice figure). The facts are those plan3d gives such a plan (B =
  // N/P complex doubles, one node, M applies). The pick must be a measured candidate and within
  // the noise floor of the fastest one: a model change that moves ESTIMATE to an unmeasured or
  // slower candidate fails here until it is measured.
  struct recorded {
    int ranks;
    bool natural;
    double noise;
    std::vector<std::pair<std::string, double>> seconds;
  };
  const std::vector<recorded> runs = {{2,
                                       true,
                                       0.002,
                                       {{"middle layout M, direct window", 0.0178},
                                        {"middle layout M, window", 0.0212},
                                        {"window, 16 blocks", 0.0237},
                                        {"middle layout M, MPI_Alltoallw", 0.0239},
                                        {"all-to-all, overlap x4", 0.0274},
                                        {"all-to-all, no overlap", 0.0278}}},
                                      {4,
                                       true,
                                       0.131,
                                       {{"middle layout M, direct window", 0.0154},
                                        {"middle layout M, window", 0.0169},
                                        {"window, 8 blocks", 0.0185},
                                        {"middle layout M, MPI_Alltoallw", 0.0202},
                                        {"all-to-all, overlap x4", 0.0221},
                                        {"all-to-all, no overlap", 0.0232}}},
                                      {2,
                                       false,
                                       0.016,
                                       {{"middle layout M, direct window", 0.0190},
                                        {"middle layout M, MPI_Alltoallw", 0.0194},
                                        {"middle layout M, window", 0.0221}}},
                                      {4,
                                       false,
                                       0.043,
                                       {{"middle layout M, direct window", 0.0145},
                                        {"middle layout M, window", 0.0163},
                                        {"middle layout M, MPI_Alltoallw", 0.0177}}}};
  const double N = 128.0 * 128 * 128;
  for (const auto& run : runs) {
    toru::fft::detail::plan_facts f;
    f.exchange_bytes = N / run.ranks * 16;
    f.exchanges = run.natural ? 2 : 1;
    f.fft_flops = 5 * N * std::log2(N) / run.ranks;
    f.one_node = true;
    f.ranks_per_core = std::max(1.0, run.ranks / 2.0);
    f.mid_possible = true;
    f.mid_required = !run.natural;
    f.mid_exchanges = run.natural ? 2 : 1;
    toru::fft::detail::set_3d_window_weights(f);
    f.direct_possible = true;
    const auto table = toru::fft::detail::strategy_table(f);
    const int pick = toru::fft::detail::cheapest(table);
    ASSERT_GE(pick, 0);
    const std::string name = table[pick].s.name();
    double best = 1e9, got = -1;
    for (const auto& [n, t] : run.seconds) {
      best = std::min(best, t);
      if (n == name) got = t;
    }
    const char* order = run.natural ? "natural" : "transposed";
    EXPECT_GT(got, 0) << run.ranks << " ranks " << order << ": ESTIMATE took " << name
                      << ", which was not measured: " << toru::fft::detail::describe_table(table);
    EXPECT_LE(got, best * (1 + run.noise))
        << run.ranks << " ranks " << order << ": " << toru::fft::detail::describe_table(table);
    // Without the node arrays (MPI placed them apart, or an empty part), the next best measured.
    f.direct_possible = false;
    const auto without = toru::fft::detail::strategy_table(f);
    const std::string second = without[toru::fft::detail::cheapest(without)].s.name();
    double best2 = 1e9, got2 = -1;
    for (const auto& [n, t] : run.seconds) {
      if (n == "middle layout M, direct window") continue;
      best2 = std::min(best2, t);
      if (n == second) got2 = t;
    }
    EXPECT_GT(got2, 0) << second;
    // The M window and MPI_Alltoallw trade places between the orders (2.2-2.6 copies of B either
    // way at 2 ranks): the model ties them, so the fallback may miss by that much.
    EXPECT_LE(got2, best2 * 1.15) << run.ranks << " ranks " << order
                                  << " without the direct window: " << toru::fft::detail::describe_table(without);
  }
}

TEST(FftStrategy, AFigureOfATenthOfASecondIsOneRunAShorterOneTheBestOfTwo) {
  // time_steps (plan3d.hpp) on a step that sleeps: a transform of single_run_seconds or more on the
  // slowest rank is one run, its first; a shorter one is an untimed run and the best of two, or,
  // warm (the steps ran before), the best of two. In the first case only rank 0 is slow: every
  // rank must run as often as the slowest rank's figure asks, or the collective runs would hang.
  namespace d = toru::fft::detail;
  struct sleeper final : d::step<double> {
    double seconds = 0;
    int* runs = nullptr;
    void run(const void*, void*, const d::work_buffers&) const override {
      ++*runs;
      std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    }
  };
  const int rank = toru::test::rank();
  struct scripted {
    double seconds;
    bool warm;
    int runs;
  };
  const double slow = rank == 0 ? 1.2 * d::single_run_seconds : 0.002;
  for (const scripted& c : {scripted{slow, false, 1}, scripted{0.002, false, 3}, scripted{0.002, true, 2}}) {
    int runs = 0;
    auto st = std::make_unique<sleeper>();
    st->seconds = c.seconds;
    st->runs = &runs;
    std::vector<std::unique_ptr<d::step<double>>> steps;
    steps.push_back(std::move(st));
    const double figure = d::time_steps<double>(MPI_COMM_WORLD, steps, nullptr, nullptr, {}, c.warm);
    EXPECT_EQ(runs, c.runs) << "sleeping " << c.seconds << " s" << (c.warm ? ", warm" : "");
    EXPECT_GE(figure, c.seconds);
  }
}

TEST(FftStrategy, MeasureDecidesByTheMedianOfTheCloseCandidatesNotOneLuckyTiming) {
  // A scripted clock: candidate 0 takes 1.0 s every time; candidate 1 is 10 % slower but its first
  // timing was lucky (0.9 s); candidate 2 is far behind. Every rank adds a little of its own, so a
  // figure is only right if it is the max over ranks. One pass (the old protocol) takes 1; the
  // run-off times 0 and 1 again, not 2, and the medians take 0.
  namespace d = toru::fft::detail;
  const int rank = toru::test::rank(), size = toru::test::nranks();
  std::vector<d::candidate> table(4);
  for (int i = 0; i < 4; ++i) {
    table[i].applicable = i != 3;  // the inapplicable one is never timed
    table[i].s.chunks = i + 1;
    table[i].s.window = true;
  }
  std::vector<int> calls(4, 0);
  const auto clock = [&](int i) {
    const int k = calls[i]++;
    const double own = 0.001 * rank;
    if (i == 0) return 1.0 + own;
    if (i == 1) return (k == 0 ? 0.9 : 1.1) + own;
    return 3.0 + own;
  };
  std::vector<double> seconds;
  EXPECT_EQ(d::timed_choice(MPI_COMM_WORLD, table, clock, seconds), 0);
  EXPECT_EQ(calls, (std::vector<int>{d::runoff_figures, d::runoff_figures, 2, 0}))
      << "2, outside the margin, gets its second figure, no more";
  const double slowest = 0.001 * (size - 1);
  ASSERT_EQ(seconds.size(), 4u);
  EXPECT_DOUBLE_EQ(seconds[0], 1.0 + slowest);
  EXPECT_DOUBLE_EQ(seconds[1], 1.1 + slowest) << "the median of 0.9, 1.1, 1.1";
  EXPECT_DOUBLE_EQ(seconds[2], 3.0 + slowest);
  EXPECT_EQ(seconds[3], 0);

  // Figures of a few milliseconds: five each in the run-off. Candidate 1 (10 % slower) is lucky in
  // two of them, which three figures would have taken for its median.
  std::ranges::fill(calls, 0);
  const auto fast = [&](int i) {
    const int k = calls[i]++;
    if (i == 0) return 0.005;
    if (i == 1) return k < 2 ? 0.0045 : 0.0055;
    return 0.05;
  };
  EXPECT_EQ(d::timed_choice(MPI_COMM_WORLD, table, fast, seconds), 0);
  EXPECT_EQ(calls, (std::vector<int>{d::runoff_figures_short, d::runoff_figures_short, 2, 0}));
  EXPECT_DOUBLE_EQ(seconds[1], 0.0055) << "the median of 0.0045, 0.0045, 0.0055, 0.0055, 0.0055";

  // A clear winner: nothing within the margin, no run-off; the others' second figures confirm it.
  std::ranges::fill(calls, 0);
  const auto clear = [&](int i) {
    ++calls[i];
    return i == 2 ? 1.0 : 2.0;
  };
  EXPECT_EQ(d::timed_choice(MPI_COMM_WORLD, table, clear, seconds), 2);
  EXPECT_EQ(calls, (std::vector<int>{2, 2, 1, 0}));

  // The fastest descheduled on its first figure (1.5 s, then 0.8): its second figure puts it back
  // in front, and the run-off against the one within the margin of that (0.9) decides.
  std::ranges::fill(calls, 0);
  const auto unlucky = [&](int i) {
    const int k = calls[i]++;
    if (i == 0) return k == 0 ? 1.5 : 0.8;
    if (i == 1) return 0.9;
    return 2.0;
  };
  EXPECT_EQ(d::timed_choice(MPI_COMM_WORLD, table, unlucky, seconds), 0);
  EXPECT_DOUBLE_EQ(seconds[0], 0.8);
  EXPECT_DOUBLE_EQ(seconds[1], 0.9);

  // The fastest (0.5) slowed on its first figure to just inside the margin (1.0 against 0.9), then
  // put outside it by another's second chance (1.5, then 0.8): it gets its own second chance and
  // wins outright; without it the run-off would have been 1 against 2.
  std::ranges::fill(calls, 0);
  const auto cold = [&](int i) {
    const int k = calls[i]++;
    if (i == 0) return k == 0 ? 1.0 : 0.5;
    if (i == 1) return 0.9;
    return k == 0 ? 1.5 : 0.8;
  };
  EXPECT_EQ(d::timed_choice(MPI_COMM_WORLD, table, cold, seconds), 0);
  EXPECT_EQ(calls, (std::vector<int>{2, 2, 2, 0})) << "each outside the margin at some point, timed twice";
  EXPECT_DOUBLE_EQ(seconds[0], 0.5);

  // Ties within 2 % still go to the earlier row (no overlap before overlap).
  std::ranges::fill(calls, 0);
  const auto tie = [&](int i) {
    ++calls[i];
    return i == 0 ? 1.0 : 0.99;
  };
  EXPECT_EQ(d::timed_choice(MPI_COMM_WORLD, table, tie, seconds), 0);
  EXPECT_EQ(calls, (std::vector<int>{d::runoff_figures, d::runoff_figures, d::runoff_figures, 0}));
}

TEST(FftStrategy, MeasureLeavesTheAllToAllUntimedOnOneNodeOnly) {
  // On one node overlap hides nothing (the model's hidden time is 0), so MEASURE spends no plan
  // time on it; across nodes it is timed. A scripted clock makes the untimed candidate the fastest,
  // so that timing it would have shown in the choice.
  namespace d = toru::fft::detail;
  d::plan_facts f;
  f.exchange_bytes = 64.0 * (1 << 20);
  f.exchanges = 2;
  f.fft_flops = 5.0 * (1 << 24) * 24 / 2;
  f.one_node = true;
  auto t = d::strategy_table(f);
  std::vector<int> calls(t.size(), 0);
  int overlap = -1;
  for (int i = 0; i < static_cast<int>(t.size()); ++i)
    if (t[static_cast<std::size_t>(i)].applicable && t[static_cast<std::size_t>(i)].s.overlap) overlap = i;
  ASSERT_GE(overlap, 0) << d::describe_table(t);
  EXPECT_FALSE(t[static_cast<std::size_t>(overlap)].untimed.empty());
  const auto clock = [&](int i) {
    ++calls[static_cast<std::size_t>(i)];
    return i == overlap ? 0.5 : 1.0 + 0.1 * i;
  };
  std::vector<double> seconds;
  const int pick = d::timed_choice(MPI_COMM_WORLD, t, clock, seconds);
  EXPECT_NE(pick, overlap);
  EXPECT_EQ(calls[static_cast<std::size_t>(overlap)], 0);
  EXPECT_EQ(seconds[static_cast<std::size_t>(overlap)], 0);
  for (const auto& [name, s] : d::timed_names(t, seconds)) EXPECT_GT(s, 0) << name;

  // Across nodes the same candidate is timed, and its figure wins.
  f.one_node = false;
  t = d::strategy_table(f);
  ASSERT_TRUE(t[static_cast<std::size_t>(overlap)].applicable) << d::describe_table(t);
  EXPECT_TRUE(t[static_cast<std::size_t>(overlap)].untimed.empty());
  std::ranges::fill(calls, 0);
  EXPECT_EQ(d::timed_choice(MPI_COMM_WORLD, t, clock, seconds), overlap);
  EXPECT_GT(calls[static_cast<std::size_t>(overlap)], 0);

  // On one node the all-to-all without overlap is left untimed while a window candidate applies
  // (timed in its stead), and timed where none does (options.path = alltoall).
  int plain = -1;
  for (int i = 0; i < static_cast<int>(t.size()); ++i)
    if (t[static_cast<std::size_t>(i)].applicable && !t[static_cast<std::size_t>(i)].s.window &&
        !t[static_cast<std::size_t>(i)].s.overlap)
      plain = i;
  ASSERT_GE(plain, 0) << d::describe_table(t);
  // The scripted clock makes it the fastest, so that timing it would show in the choice.
  const auto plain_fastest = [&](int i) {
    ++calls[static_cast<std::size_t>(i)];
    return i == plain ? 0.5 : 1.0 + 0.1 * i;
  };
  f.one_node = true;
  t = d::strategy_table(f);
  EXPECT_FALSE(t[static_cast<std::size_t>(plain)].untimed.empty()) << d::describe_table(t);
  std::ranges::fill(calls, 0);
  EXPECT_NE(d::timed_choice(MPI_COMM_WORLD, t, plain_fastest, seconds), plain);
  EXPECT_EQ(calls[static_cast<std::size_t>(plain)], 0);
  f.path = toru::fft::exchange_path::alltoall;
  t = d::strategy_table(f);
  EXPECT_TRUE(t[static_cast<std::size_t>(plain)].untimed.empty()) << d::describe_table(t);
  std::ranges::fill(calls, 0);
  EXPECT_EQ(d::timed_choice(MPI_COMM_WORLD, t, clock, seconds), plain);  // the overlap stays untimed
  EXPECT_EQ(calls[static_cast<std::size_t>(overlap)], 0);
  f.path = toru::fft::exchange_path::automatic;

  // The slab's M candidates: the direct window is timed in place of the M window and
  // MPI_Alltoallw where it applies (a scripted clock making those the fastest), and where it
  // does not they are timed.
  {
    d::plan_facts m = f;
    m.mid_possible = true;
    m.mid_exchanges = 2;
    m.direct_possible = true;
    t = d::strategy_table(m);
    std::vector<int> twins;
    int direct = -1;
    for (int i = 0; i < static_cast<int>(t.size()); ++i) {
      const auto& c = t[static_cast<std::size_t>(i)];
      if (c.applicable && c.s.mid && !c.s.direct) twins.push_back(i);
      if (c.applicable && c.s.direct) direct = i;
    }
    ASSERT_EQ(twins.size(), 2u) << d::describe_table(t);
    ASSERT_GE(direct, 0) << d::describe_table(t);
    const auto twins_fastest = [&](int i) {
      ++calls[static_cast<std::size_t>(i)];
      return std::ranges::find(twins, i) != twins.end() ? 0.5 : 1.0 + 0.1 * i;
    };
    std::ranges::fill(calls, 0);
    calls.resize(t.size(), 0);
    const int chosen = d::timed_choice(MPI_COMM_WORLD, t, twins_fastest, seconds);
    for (int i : twins) {
      EXPECT_FALSE(t[static_cast<std::size_t>(i)].untimed.empty()) << d::describe_table(t);
      EXPECT_EQ(calls[static_cast<std::size_t>(i)], 0);
      EXPECT_NE(chosen, i);
    }
    EXPECT_GT(calls[static_cast<std::size_t>(direct)], 0);
    m.direct_possible = false;
    t = d::strategy_table(m);
    std::ranges::fill(calls, 0);
    const int without = d::timed_choice(MPI_COMM_WORLD, t, twins_fastest, seconds);
    EXPECT_TRUE(std::ranges::find(twins, without) != twins.end()) << d::describe_table(t);
    for (int i : twins) EXPECT_TRUE(t[static_cast<std::size_t>(i)].untimed.empty()) << d::describe_table(t);
  }

  // Where only untimed candidates apply (overlap forced), they are timed after all.
  f.one_node = true;
  f.overlap_forced = true;
  t = d::strategy_table(f);
  std::ranges::fill(calls, 0);
  EXPECT_EQ(d::timed_choice(MPI_COMM_WORLD, t, clock, seconds), overlap);
}

TEST(FftWindow, BuffersStartOnCacheLinesAndAddressTheSameBytesOnEveryRank) {
  // MPI's shared segments start anywhere (Open MPI: 8 bytes past a line), and FFTW runs its scalar
  // codelets on memory that is not SIMD-aligned: the window's FFTs were 1.5-3x slower for it.
  if (window_disabled()) GTEST_SKIP() << "TORU_FFT_WINDOW=0";
  namespace d = toru::fft::detail;
  const int me = toru::test::rank(), P = toru::test::nranks();
  const std::size_t bytes = 1000 + 8 * static_cast<std::size_t>(me);  // uneven, not a multiple of 64
  const d::node_window* w = d::shared_window(MPI_COMM_WORLD, bytes);
  ASSERT_NE(w, nullptr);
  EXPECT_GE(w->bytes(), bytes);
  for (int r = 0; r < P; ++r)
    for (int parity = 0; parity < 2; ++parity)
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(w->buffer(r, parity)) % d::node_window::buffer_alignment, 0u)
          << "rank " << r << " buffer " << parity;
  // Rank r fills its buffers with r's stamp; every rank reads every buffer back in full.
  const int parity = w->next_use();
  auto* mine = reinterpret_cast<std::uint64_t*>(w->buffer(me, parity));
  const std::size_t words = w->bytes() / sizeof(std::uint64_t);
  for (std::size_t i = 0; i < words; ++i) mine[i] = static_cast<std::uint64_t>(me) << 32 | i;
  w->fence();
  for (int r = 0; r < P; ++r) {
    const auto* b = reinterpret_cast<const std::uint64_t*>(w->buffer(r, parity));
    std::size_t bad = 0;
    for (std::size_t i = 0; i < words; ++i) bad += b[i] != (static_cast<std::uint64_t>(r) << 32 | i);
    EXPECT_EQ(bad, 0u) << "buffer of rank " << r;
  }
  w->fence();
  // A node array's parts (16-byte multiples, as the slab's rows) stay end to end, from a line.
  const std::size_t part = 16 * (37 + static_cast<std::size_t>(me));
  if (const d::node_array* a = d::shared_array(MPI_COMM_WORLD, part)) {
    for (int parity2 = 0; parity2 < 2; ++parity2) {
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a->base(parity2)) % d::node_window::buffer_alignment, 0u);
      for (int r = 1; r < P; ++r)
        EXPECT_EQ(a->part(r, parity2), a->part(r - 1, parity2) + a->part_bytes()[r - 1]) << "part " << r;
    }
    const int pa = a->next_use();
    auto* p = reinterpret_cast<unsigned char*>(a->part(me, pa));
    for (std::size_t i = 0; i < part; ++i) p[i] = static_cast<unsigned char>(me * 31 + i);
    a->fence(pa);
    for (int r = 0; r < P; ++r) {
      const auto* q = reinterpret_cast<const unsigned char*>(a->part(r, pa));
      std::size_t bad = 0;
      for (std::size_t i = 0; i < a->part_bytes()[r]; ++i) bad += q[i] != static_cast<unsigned char>(r * 31 + i);
      EXPECT_EQ(bad, 0u) << "part of rank " << r;
    }
    a->fence(pa);
  }
}

TEST(FftWindow, LifetimeFollowsTheCommunicator) {
  if (window_disabled()) GTEST_SKIP() << "TORU_FFT_WINDOW=0";
  MPI_Comm dup = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  const int before = toru::fft::detail::live_windows();
  // The element-wise window (ESTIMATE would take the 1D direct window, below).
  std::optional<forced_strategy> element_window(std::in_place, "window, 1 blocks");
  {
    toru::fft::fft1d<double> a(dup, 4096, {.path = exchange_path::window});
    toru::fft::fft1d<double> b(dup, 1000, {.path = exchange_path::window});  // fits a's window: shared
    EXPECT_EQ(toru::fft::detail::live_windows(), before + 1);
  }
  // Destroying plans is local (rank 0 destroys a third plan alone while the others wait in a
  // barrier: no hang) and leaves the window cached for the next plan.
  {
    auto c = std::make_unique<toru::fft::fft1d<double>>(dup, 4096, toru::fft::options1d{.path = exchange_path::window});
    if (toru::test::rank() == 0) c.reset();
    MPI_Barrier(dup);
  }
  EXPECT_EQ(toru::fft::detail::live_windows(), before + 1);
  check_1d(4096, {.path = exchange_path::window}, false);  // a plan on the world is unaffected
  element_window.reset();
  // The direct windows' node arrays follow the same rule: cached on dup, freed with it.
  if (toru::test::nranks() <= 5) {
    const forced_strategy force(direct_name);
    toru::fft::fft3d<double> d(dup, {16, 12, 10}, {.decomp = decomposition::slab});
    EXPECT_EQ(d.strategy(), direct_name);
    EXPECT_GT(toru::fft::detail::live_windows(), before + 1);
  }
  const int with_3d = toru::fft::detail::live_windows();
  {
    toru::fft::fft1d<double> e(dup, 4096);
    EXPECT_EQ(e.strategy(), "direct window");
  }
  EXPECT_GT(toru::fft::detail::live_windows(), with_3d);
  MPI_Comm_free(&dup);  // frees dup's toru communicators when no plan holds them, and its windows
  EXPECT_EQ(toru::fft::detail::live_windows(), before);
}

}  // namespace
