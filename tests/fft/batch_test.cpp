// SPDX-License-Identifier: BSD-3-Clause
// fft3d_batch: every field against serial FFTW of that field alone (interleaved and planar,
// natural and transposed, 1 to 4 fields, odd sizes, double and float); backward restores every
// field; bad howmany fails on every rank.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fft_test_util.hpp"
#include "mpi_test.hpp"
#include "toru/core/error.hpp"
#include "toru/fft/fft3d_batch.hpp"

namespace {

using index3 = std::array<std::int64_t, 3>;
using toru::fft::fields;

template <class T>
void check(index3 n, int F, fields layout, toru::fft::order output, std::array<int, 2> grid = {0, 0}) {
  toru::fft::fft3d_batch<T> plan(MPI_COMM_WORLD, n, F, layout, {.grid = grid, .output = output});
  const std::int64_t N = n[0] * n[1] * n[2];
  // Where field f of the point at local offset i lives, in a box of `extent` points.
  auto at = [&](std::int64_t i, int f, std::int64_t extent) {
    return layout == fields::planar ? f * extent + i : i * F + f;
  };
  std::vector<std::vector<std::complex<double>>> all(F), want(F);
  for (int f = 0; f < F; ++f) {
    all[f].resize(static_cast<std::size_t>(N));
    for (std::int64_t i = 0; i < N; ++i) all[f][i] = toru::test::cnoise(static_cast<std::uint64_t>(i), 20 + f);
    want[f] = toru::test::serial_dft3(n, all[f], -1);
  }
  std::vector<std::complex<T>> a(plan.alloc_size()), b(plan.alloc_size()), c(plan.alloc_size());
  const std::int64_t ein = plan.inbox().extent(), eout = plan.outbox().extent();
  for (int f = 0; f < F; ++f)
    toru::test::for_each(plan.inbox(), [&](index3 g, std::int64_t i) {
      a[at(i, f, ein)] = std::complex<T>(all[f][toru::test::flat(n, g)]);
    });
  const auto a0 = a;
  plan.forward(a.data(), b.data());
  EXPECT_EQ(a, a0) << "out of place must preserve the input";
  const std::string what = "howmany " + std::to_string(F) + (layout == fields::planar ? " planar" : " interleaved");
  for (int f = 0; f < F; ++f) {
    toru::test::error_norm e;
    toru::test::for_each(plan.outbox(),
                         [&](index3 g, std::int64_t i) { e.add(b[at(i, f, eout)], want[f][toru::test::flat(n, g)]); });
    EXPECT_LT(e.rel(), toru::test::tolerance<T>(static_cast<double>(N))) << what << " field " << f;
  }
  plan.backward(b.data(), c.data(), toru::fft::scale::full);
  for (int f = 0; f < F; ++f) {
    toru::test::error_norm r;
    toru::test::for_each(plan.inbox(),
                         [&](index3 g, std::int64_t i) { r.add(c[at(i, f, ein)], all[f][toru::test::flat(n, g)]); });
    EXPECT_LT(r.rel(), toru::test::tolerance<T>(static_cast<double>(N))) << what << " field " << f << " round trip";
  }
}

TEST(FftBatch, EveryFieldMatchesSerialFftw) {
  for (auto output : {toru::fft::order::natural, toru::fft::order::transposed})
    for (auto layout : {fields::interleaved, fields::planar}) {
      check<double>({6, 5, 7}, 3, layout, output);
      check<double>({9, 4, 3}, 2, layout, output);
      // A forced 1 x P grid with n1 = 1 leaves ranks without points, which fft3d's plan refuses:
      // the reshape pipeline runs instead of that plan field by field.
      check<double>({6, 1, 5}, 3, layout, output, {1, toru::test::nranks()});
    }
  check<double>({5, 5, 5}, 1, fields::interleaved, toru::fft::order::natural);
  check<float>({7, 6, 5}, 4, fields::planar, toru::fft::order::natural);
}

TEST(FftBatch, BadHowmanyFailsOnEveryRank) {
  const int me = toru::test::rank(), P = toru::test::nranks();
  try {
    toru::fft::fft3d_batch<double>(MPI_COMM_WORLD, {4, 4, 4}, 0);
    ADD_FAILURE() << "howmany 0 accepted";
  } catch (const toru::error& e) {
    EXPECT_EQ(e.code(), toru::errc::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("howmany"), std::string::npos) << e.what();
  }
  if (P > 1) {
    try {
      toru::fft::fft3d_batch<double>(MPI_COMM_WORLD, {4, 4, 4}, me == 0 ? 3 : 2);
      ADD_FAILURE() << "howmany differing across ranks accepted";
    } catch (const toru::error& e) {
      EXPECT_EQ(e.code(), toru::errc::mismatch);
    }
  }
}

}  // namespace
