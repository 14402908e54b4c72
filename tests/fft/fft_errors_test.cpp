// SPDX-License-Identifier: BSD-3-Clause
// Bad input: refused with a clear error on every rank, never a hang or a crash.
#include <gtest/gtest.h>

#include "fft_test_util.hpp"
#include "mpi_test.hpp"
#include "toru/core/error.hpp"
#include "toru/fft/fft1d.hpp"
#include "toru/fft/fft3d.hpp"

namespace {

using toru::fft::decomposition;

// Runs f and returns the error every rank must have thrown.
template <class F>
toru::error expect_error(F&& f) {
  try {
    f();
  } catch (const toru::error& e) {
    return e;
  }
  ADD_FAILURE() << "no toru::error thrown";
  return toru::error(toru::errc::success, "none");
}

TEST(FftErrors, SizesDifferingAcrossRanks) {
  if (toru::test::nranks() == 1) GTEST_SKIP() << "needs two ranks";
  const int me = toru::test::rank();
  const auto e = expect_error([&] { toru::fft::fft3d<double>(MPI_COMM_WORLD, {8, 8, me == 0 ? 9 : 8}); });
  EXPECT_EQ(e.code(), toru::errc::mismatch);
  EXPECT_NE(std::string(e.what()).find("n[2]"), std::string::npos) << e.what();
}

TEST(FftErrors, OptionsDifferingAcrossRanks) {
  if (toru::test::nranks() == 1) GTEST_SKIP() << "needs two ranks";
  const auto o = toru::test::rank() == 1 ? toru::fft::order::transposed : toru::fft::order::natural;
  const auto e = expect_error([&] { toru::fft::fft1d<double>(MPI_COMM_WORLD, 64, {.output = o}); });
  EXPECT_EQ(e.code(), toru::errc::mismatch);
}

TEST(FftErrors, ImpossibleDecompositions) {
  const int P = toru::test::nranks();
  if (P == 1) GTEST_SKIP() << "every grid fits one rank";
  auto e = expect_error([&] {
    toru::fft::fft3d<double>(MPI_COMM_WORLD, {1, 16, 16}, {.decomp = decomposition::slab});
  });
  EXPECT_EQ(e.code(), toru::errc::invalid_argument);
  EXPECT_NE(std::string(e.what()).find("slab"), std::string::npos) << e.what();
  e = expect_error([&] {
    toru::fft::fft3d<double>(MPI_COMM_WORLD, {16, 16, 16}, {.decomp = decomposition::pencil, .grid = {P + 1, 1}});
  });
  EXPECT_EQ(e.code(), toru::errc::invalid_argument);
  e = expect_error([&] { toru::fft::fft3d<float>(MPI_COMM_WORLD, {16, 0, 16}); });
  EXPECT_EQ(e.code(), toru::errc::invalid_argument);
}

TEST(FftErrors, TooSmallForEveryRankStillComputesAutomatically) {
  // 2x2x2 on up to 8 ranks: automatic falls back to a slab with idle ranks. The transform of all
  // ones is 8 at k = 0 and 0 everywhere else; every output point is checked.
  toru::fft::fft3d<double> plan(MPI_COMM_WORLD, {2, 2, 2});
  std::vector<std::complex<double>> a(plan.alloc_size(), 1.0), b(plan.alloc_size());
  plan.forward(a.data(), b.data());
  double local[2] = {0, 0};  // points seen, largest error
  toru::test::for_each(plan.outbox(), [&](std::array<std::int64_t, 3> k, std::int64_t i) {
    const double want = k == std::array<std::int64_t, 3>{0, 0, 0} ? 8.0 : 0.0;
    local[0] += 1;
    local[1] = std::max(local[1], std::abs(b[static_cast<std::size_t>(i)] - want));
  });
  double points = 0, err = 0;
  MPI_Allreduce(&local[0], &points, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&local[1], &err, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_EQ(points, 8.0);
  EXPECT_LT(err, 1e-12);
}

TEST(FftErrors, NullBufferOnOneRankFailsEverywhere) {
  toru::fft::fft3d<double> plan(MPI_COMM_WORLD, {8, 6, 4});
  std::vector<std::complex<double>> a(plan.alloc_size()), b(plan.alloc_size());
  const bool culprit = toru::test::rank() == toru::test::nranks() - 1;
  const auto e = expect_error([&] { plan.forward(a.data(), culprit ? nullptr : b.data()); });
  EXPECT_EQ(e.code(), toru::errc::invalid_argument);
  EXPECT_EQ(e.rank(), toru::test::nranks() - 1);
  // The plan still computes afterwards: its values against serial FFTW.
  EXPECT_LT(toru::test::forward_error_against_serial(plan, {8, 6, 4}, MPI_COMM_WORLD),
            toru::test::tolerance<double>(8 * 6 * 4));
}

TEST(FftErrors, SpanTooSmall) {
  toru::fft::fft3d<double> plan(MPI_COMM_WORLD, {8, 6, 4});
  std::vector<std::complex<double>> a(plan.alloc_size()), b(plan.alloc_size());
  const std::size_t short_by = toru::test::rank() == 0 ? 1 : 0;
  const auto e = expect_error([&] {
    plan.forward(std::span<const std::complex<double>>(a),
                 std::span<std::complex<double>>(b.data(), b.size() - short_by));
  });
  EXPECT_EQ(e.code(), toru::errc::invalid_argument);
  EXPECT_NE(std::string(e.what()).find("out"), std::string::npos) << e.what();
}

}  // namespace
