// SPDX-License-Identifier: BSD-3-Clause
// fft3d_r2r against serial FFTW (fftw_plan_r2r_3d on the whole array) for all eight kinds, odd and
// prime sizes, natural and transposed output, double and float; backward restores the input; bad
// kinds and sizes fail the same way on every rank.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fft_test_util.hpp"
#include "mpi_test.hpp"
#include "toru/core/error.hpp"
#include "toru/fft/fft3d_r2r.hpp"

namespace {

using toru::fft::r2r_kind;
using index3 = std::array<std::int64_t, 3>;

fftw_r2r_kind fftw_of(r2r_kind k) {
  const fftw_r2r_kind table[] = {FFTW_REDFT00, FFTW_REDFT10, FFTW_REDFT01, FFTW_REDFT11,
                                 FFTW_RODFT00, FFTW_RODFT10, FFTW_RODFT01, FFTW_RODFT11};
  return table[static_cast<int>(k)];
}

std::vector<double> serial_r2r(index3 n, std::vector<double> a, std::array<r2r_kind, 3> k) {
  std::vector<double> out(a.size());
  fftw_plan p = fftw_plan_r2r_3d(static_cast<int>(n[0]), static_cast<int>(n[1]), static_cast<int>(n[2]), a.data(),
                                 out.data(), fftw_of(k[0]), fftw_of(k[1]), fftw_of(k[2]), FFTW_ESTIMATE);
  fftw_execute(p);
  fftw_destroy_plan(p);
  return out;
}

template <class T>
void check(index3 n, std::array<r2r_kind, 3> kinds, toru::fft::order output) {
  toru::fft::fft3d_r2r<T> plan(MPI_COMM_WORLD, n, kinds, {.output = output});
  std::vector<double> all(static_cast<std::size_t>(n[0] * n[1] * n[2]));
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = toru::test::noise(i, 13);
  const auto want = serial_r2r(n, all, kinds);
  std::vector<T> a(plan.alloc_size()), b(plan.alloc_size()), c(plan.alloc_size());
  toru::test::for_each(plan.inbox(),
                       [&](index3 g, std::int64_t i) { a[i] = static_cast<T>(all[toru::test::flat(n, g)]); });
  const std::vector<T> a0 = a;
  plan.forward(a.data(), b.data());
  EXPECT_EQ(a, a0) << "out of place must preserve the input";
  toru::test::error_norm e;
  toru::test::for_each(plan.outbox(), [&](index3 g, std::int64_t i) { e.add(b[i], want[toru::test::flat(n, g)]); });
  const std::string what = std::string(to_string(kinds[0])) + " " + std::string(to_string(kinds[1])) + " " +
                           std::string(to_string(kinds[2]));
  EXPECT_LT(e.rel(), toru::test::tolerance<T>(static_cast<double>(all.size()))) << what;
  plan.backward(b.data(), c.data(), toru::fft::scale::full);
  toru::test::error_norm r;
  toru::test::for_each(plan.inbox(), [&](index3 g, std::int64_t i) { r.add(c[i], all[toru::test::flat(n, g)]); });
  EXPECT_LT(r.rel(), toru::test::tolerance<T>(static_cast<double>(all.size()))) << what << " round trip";
}

TEST(FftR2r, EveryKindMatchesSerialFftw) {
  for (auto output : {toru::fft::order::natural, toru::fft::order::transposed}) {
    check<double>({7, 5, 6}, {r2r_kind::dct2, r2r_kind::dct1, r2r_kind::dst2}, output);
    check<double>({3, 11, 4}, {r2r_kind::dct3, r2r_kind::dct4, r2r_kind::dst1}, output);
    check<double>({5, 2, 13}, {r2r_kind::dst3, r2r_kind::dst4, r2r_kind::dct2}, output);
  }
  check<float>({6, 7, 5}, {r2r_kind::dct2, r2r_kind::dst2, r2r_kind::dct1}, toru::fft::order::natural);
}

TEST(FftR2r, InPlace) {
  const index3 n{5, 6, 7};
  const std::array kinds{r2r_kind::dct2, r2r_kind::dct2, r2r_kind::dct2};
  toru::fft::fft3d_r2r<double> plan(MPI_COMM_WORLD, n, kinds);
  std::vector<double> all(static_cast<std::size_t>(n[0] * n[1] * n[2]));
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = toru::test::noise(i, 4);
  const auto want = serial_r2r(n, all, kinds);
  std::vector<double> a(plan.alloc_size());
  toru::test::for_each(plan.inbox(), [&](index3 g, std::int64_t i) { a[i] = all[toru::test::flat(n, g)]; });
  plan.forward(a.data(), a.data());
  toru::test::error_norm e;
  toru::test::for_each(plan.outbox(), [&](index3 g, std::int64_t i) { e.add(a[i], want[toru::test::flat(n, g)]); });
  EXPECT_LT(e.rel(), toru::test::tolerance<double>(static_cast<double>(all.size())));
}

TEST(FftR2r, BadArgumentsFailOnEveryRank) {
  const int me = toru::test::rank(), P = toru::test::nranks();
  try {
    toru::fft::fft3d_r2r<double>(MPI_COMM_WORLD, {1, 4, 4}, {r2r_kind::dct1, r2r_kind::dct2, r2r_kind::dct2});
    ADD_FAILURE() << "dct1 on one point accepted";
  } catch (const toru::error& e) {
    EXPECT_EQ(e.code(), toru::errc::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("dct1"), std::string::npos) << e.what();
  }
  if (P > 1) {
    const auto k = me == P - 1 ? r2r_kind::dst2 : r2r_kind::dct2;
    try {
      toru::fft::fft3d_r2r<double>(MPI_COMM_WORLD, {4, 4, 4}, {r2r_kind::dct2, k, r2r_kind::dct2});
      ADD_FAILURE() << "kinds differing across ranks accepted";
    } catch (const toru::error& e) {
      EXPECT_EQ(e.code(), toru::errc::mismatch);
      EXPECT_NE(std::string(e.what()).find("kinds[1]"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
