// Bad input: refused with a clear error on every rank, never a hang or a crash.
#include <gtest/gtest.h>

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
  // 2x2x2 on up to 8 ranks: automatic falls back to a slab with idle ranks; check one point.
  toru::fft::fft3d<double> plan(MPI_COMM_WORLD, {2, 2, 2});
  std::vector<std::complex<double>> a(plan.alloc_size(), 1.0), b(plan.alloc_size());
  plan.forward(a.data(), b.data());
  double sum = 0;
  const auto& box = plan.outbox();
  if (box.count() > 0 && box.low == std::array<std::int64_t, 3>{0, 0, 0}) sum = std::abs(b[0]);
  double total = 0;
  MPI_Allreduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_NEAR(total, 8.0, 1e-12);
}

TEST(FftErrors, NullBufferOnOneRankFailsEverywhere) {
  toru::fft::fft3d<double> plan(MPI_COMM_WORLD, {8, 6, 4});
  std::vector<std::complex<double>> a(plan.alloc_size()), b(plan.alloc_size());
  const bool culprit = toru::test::rank() == toru::test::nranks() - 1;
  const auto e = expect_error([&] { plan.forward(a.data(), culprit ? nullptr : b.data()); });
  EXPECT_EQ(e.code(), toru::errc::invalid_argument);
  EXPECT_EQ(e.rank(), toru::test::nranks() - 1);
  // The plan still works afterwards.
  EXPECT_NO_THROW(plan.forward(a.data(), b.data()));
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
