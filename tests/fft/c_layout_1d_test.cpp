// SPDX-License-Identifier: BSD-3-Clause
// The C API's 1D layout: the boxes toru_fft_plan_local_size reports follow toru.h's memory rule, and
// scrambled output read with the factors from toru_fft_plan_factors_1d matches serial FFTW.
#include <gtest/gtest.h>

#include <complex>
#include <vector>

#include "fft_test_util.hpp"
#include "mpi_test.hpp"
#include "toru/toru.h"

namespace {

using cpx = std::complex<double>;

// The local memory offset of a box point by toru.h's rule: axes nest order[0] .. order[2], rows
// along order[2] row_stride elements apart.
long long offset(const toru_fft_box& b, const long long g[3]) {
  const int* o = b.order;
  const long long x = g[o[0]] - b.low[o[0]], y = g[o[1]] - b.low[o[1]], z = g[o[2]] - b.low[o[2]];
  return (x * b.size[o[1]] + y) * b.row_stride + z;
}

void check(long long n, long long n1_option, bool scrambled) {
  SCOPED_TRACE(::testing::Message() << "n=" << n << " n1 option=" << n1_option << (scrambled ? " scrambled" : ""));
  toru_fft_options opts = toru_fft_options_default();
  opts.transposed_out = scrambled;
  opts.n1 = n1_option;
  toru_fft_plan plan = nullptr;
  ASSERT_EQ(toru_fft_plan_create_1d(MPI_COMM_WORLD, n, &opts, &plan), TORU_SUCCESS) << toru_last_error();
  toru_fft_box in, out;
  long long alloc = 0, n1 = 0, n2 = 0;
  ASSERT_EQ(toru_fft_plan_local_size(plan, &in, &out, &alloc), TORU_SUCCESS);
  ASSERT_EQ(toru_fft_plan_factors_1d(plan, &n1, &n2), TORU_SUCCESS) << toru_last_error();
  EXPECT_EQ(n1 * n2, n);
  if (n1_option) {
    EXPECT_EQ(n1, n1_option);
  }

  // The boxes are contiguous runs by the memory rule: global index low[0] + i at offset i.
  for (const toru_fft_box* b : {&in, &out}) {
    EXPECT_EQ(b->size[1], 1);
    EXPECT_EQ(b->size[2], 1);
    for (long long i = 0; i < b->size[0]; ++i) {
      const long long g[3] = {b->low[0] + i, 0, 0};
      ASSERT_EQ(offset(*b, g), i);
    }
    EXPECT_LE(b->size[0], alloc);
  }

  std::vector<cpx> x(static_cast<std::size_t>(n));
  for (long long i = 0; i < n; ++i) x[i] = toru::test::cnoise(static_cast<std::uint64_t>(i), 11);
  const auto X = toru::test::serial_dft1(x, FFTW_FORWARD);
  std::vector<cpx> a(static_cast<std::size_t>(alloc)), b(a.size());
  for (long long i = 0; i < in.size[0]; ++i) {
    const long long g[3] = {in.low[0] + i, 0, 0};
    a[offset(in, g)] = x[in.low[0] + i];
  }
  ASSERT_EQ(toru_fft_plan_execute(plan, TORU_FFT_FORWARD, TORU_FFT_SCALE_NONE, a.data(), b.data()), TORU_SUCCESS)
      << toru_last_error();
  toru::test::error_norm e;
  for (long long i = 0; i < out.size[0]; ++i) {
    const long long g[3] = {out.low[0] + i, 0, 0}, j = g[0];
    // Scrambled: position j = k1 * n2 + k2 holds X[k1 + n1 * k2] (toru.h).
    const long long k = scrambled ? j / n2 + n1 * (j % n2) : j;
    e.add(b[offset(out, g)], X[k]);
  }
  EXPECT_LT(e.rel(), toru::test::tolerance<double>(static_cast<double>(n)));
  EXPECT_EQ(toru_fft_plan_destroy(plan), TORU_SUCCESS);
}

TEST(CLayout1d, ScrambledAndNaturalMatchSerialFftw) {
  for (bool scrambled : {true, false}) {
    check(60, 0, scrambled);    // n1 = 6, n2 = 10: uneven over 4 and 7 ranks
    check(97, 0, scrambled);    // prime: n1 = 1
    check(1024, 0, scrambled);  // 32 x 32
    check(360, 8, scrambled);   // a given n1, n2 = 45
  }
}

TEST(CLayout1d, FactorsRefuseA3dPlan) {
  toru_fft_plan plan = nullptr;
  ASSERT_EQ(toru_fft_plan_create_3d(MPI_COMM_WORLD, 4, 4, 4, nullptr, &plan), TORU_SUCCESS);
  long long n1 = -1, n2 = -1;
  EXPECT_EQ(toru_fft_plan_factors_1d(plan, &n1, &n2), TORU_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(toru_fft_plan_factors_1d(plan, nullptr, nullptr), TORU_ERROR_INVALID_ARGUMENT);
  toru_fft_plan_destroy(plan);
}

}  // namespace
