// SPDX-License-Identifier: BSD-3-Clause
// fft3d_batch_r2c: every field against serial FFTW r2c of that field alone on the whole array
// (interleaved and planar, natural and transposed, in and out of place, 1 to 4 fields, odd, prime
// and uneven sizes, double and float); backward restores every field and leaves its input alone;
// bad howmany, layout or n on one rank fails on every rank.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "fft_test_util.hpp"
#include "mpi_test.hpp"
#include "toru/core/error.hpp"
#include "toru/fft/fft3d_batch.hpp"

namespace {

using index3 = std::array<std::int64_t, 3>;
using toru::fft::fields;
using toru::fft::order;

template <class T>
void check(index3 n, int F, fields layout, order output, bool in_place, std::array<int, 2> grid = {0, 0}) {
  const std::string what = std::to_string(n[0]) + "x" + std::to_string(n[1]) + "x" + std::to_string(n[2]) +
                           " howmany " + std::to_string(F) + (layout == fields::planar ? " planar" : " interleaved") +
                           (output == order::natural ? " natural" : " transposed") +
                           (in_place ? " in place" : " out of place") + (sizeof(T) == 8 ? " double" : " float");
  SCOPED_TRACE(what);
  using cpx = std::complex<T>;
  toru::fft::fft3d_batch_r2c<T> plan(MPI_COMM_WORLD, n, F, layout, {.grid = grid, .output = output});
  ASSERT_EQ(plan.howmany(), F);
  const index3 nh{n[0], n[1], n[2] / 2 + 1};
  const std::int64_t N = n[0] * n[1] * n[2];
  const std::int64_t ein = plan.inbox().extent(), eout = plan.outbox().extent();
  ASSERT_EQ(plan.inbox().size[2], n[2]);
  ASSERT_EQ(plan.inbox().row_stride, 2 * nh[2]);
  // Where field f of memory offset i lives, in a box of `extent` elements.
  auto at = [&](std::int64_t i, int f, std::int64_t extent) {
    return static_cast<std::size_t>(layout == fields::planar ? f * extent + i : i * F + f);
  };
  std::vector<std::vector<double>> all(F);
  std::vector<std::vector<std::complex<double>>> want(F);
  for (int f = 0; f < F; ++f) {
    all[f].resize(static_cast<std::size_t>(N));
    for (std::int64_t i = 0; i < N; ++i) all[f][i] = toru::test::noise(static_cast<std::uint64_t>(i), 40 + f);
    want[f] = toru::test::serial_r2c3(n, all[f]);
  }
  // A real buffer holds 2 * alloc_size() reals; the padding holds a sentinel nobody may read.
  std::vector<cpx> rbuf(plan.alloc_size(), cpx(T(7), T(7))), spec(plan.alloc_size());
  T* real = reinterpret_cast<T*>(rbuf.data());
  for (int f = 0; f < F; ++f)
    toru::test::for_each(plan.inbox(), [&](index3 g, std::int64_t i) {
      real[at(i, f, ein)] = static_cast<T>(all[f][toru::test::flat(n, g)]);
    });
  const auto r0 = rbuf;
  cpx* s = in_place ? rbuf.data() : spec.data();
  plan.forward(real, s);
  if (!in_place) {
    EXPECT_EQ(rbuf, r0) << "out of place must preserve the input";
  }
  for (int f = 0; f < F; ++f) {
    toru::test::error_norm e;
    toru::test::for_each(plan.outbox(),
                         [&](index3 k, std::int64_t i) { e.add(s[at(i, f, eout)], want[f][toru::test::flat(nh, k)]); });
    EXPECT_LT(e.rel(), toru::test::tolerance<T>(static_cast<double>(N))) << "field " << f;
  }
  const std::vector<cpx> s0(s, s + plan.alloc_size());
  std::vector<cpx> back_buf(plan.alloc_size());
  T* back = in_place ? reinterpret_cast<T*>(s) : reinterpret_cast<T*>(back_buf.data());
  plan.backward(s, back, toru::fft::scale::full);
  if (!in_place) {
    bool preserved = true;
    for (int f = 0; f < F; ++f)
      toru::test::for_each(plan.outbox(), [&](index3, std::int64_t i) {
        preserved = preserved && s[at(i, f, eout)] == s0[at(i, f, eout)];
      });
    EXPECT_TRUE(preserved) << "out-of-place backward modified its input";
  }
  for (int f = 0; f < F; ++f) {
    toru::test::error_norm r;
    toru::test::for_each(plan.inbox(), [&](index3 g, std::int64_t i) {
      r.add(std::complex<T>(back[at(i, f, ein)]), std::complex<double>(all[f][toru::test::flat(n, g)]));
    });
    EXPECT_LT(r.rel(), toru::test::tolerance<T>(static_cast<double>(N))) << "field " << f << " round trip";
  }
}

TEST(FftBatchR2c, EveryFieldMatchesSerialFftw) {
  for (auto output : {order::natural, order::transposed})
    for (auto layout : {fields::interleaved, fields::planar}) {
      check<double>({11, 7, 9}, 3, layout, output, false);
      check<double>({16, 13, 10}, 2, layout, output, false);
      check<double>({11, 7, 9}, 3, layout, output, true);
      // A forced 1 x P grid with n1 = 1: the reshape pipeline (see batch_test).
      check<double>({6, 1, 9}, 3, layout, output, true, {1, toru::test::nranks()});
    }
  check<double>({5, 3, 8}, 1, fields::interleaved, order::transposed, false);
  check<float>({11, 7, 9}, 4, fields::planar, order::natural, false);
  check<float>({16, 13, 10}, 3, fields::interleaved, order::transposed, true);
}

// Same boxes as fft3d_batch<T> on n0 x n1 x (n2/2+1), so a solver can mix the two.
TEST(FftBatchR2c, SpectralBoxIsTheBatchPlansOne) {
  toru::fft::fft3d_batch_r2c<double> r2c(MPI_COMM_WORLD, {9, 6, 10}, 2, fields::interleaved,
                                         {.output = order::transposed});
  toru::fft::fft3d_batch<double> c2c(MPI_COMM_WORLD, {9, 6, 6}, 2, fields::interleaved, {.output = order::transposed});
  EXPECT_EQ(r2c.outbox().low, c2c.outbox().low);
  EXPECT_EQ(r2c.outbox().size, c2c.outbox().size);
  EXPECT_EQ(r2c.outbox().order, c2c.outbox().order);
  EXPECT_EQ(r2c.grid(), c2c.grid());
}

void expect_same_error(const std::function<void()>& make, toru::errc code, const char* word) {
  try {
    make();
    ADD_FAILURE() << "accepted";
  } catch (const toru::error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    if (word) {
      EXPECT_NE(std::string(e.what()).find(word), std::string::npos) << e.what();
    }
  }
}

TEST(FftBatchR2c, BadArgumentsFailOnEveryRank) {
  const int me = toru::test::rank(), P = toru::test::nranks();
  const int last = P - 1;
  using plan = toru::fft::fft3d_batch_r2c<double>;
  expect_same_error([] { plan(MPI_COMM_WORLD, {4, 4, 4}, 0); }, toru::errc::invalid_argument, "howmany");
  // One rank wrong, every rank told: that rank's error, or the mismatch of two valid values.
  expect_same_error(
      [&] {
        plan(MPI_COMM_WORLD, {4, 4, 4}, me == last ? -1 : 3);
      },
      toru::errc::invalid_argument, "howmany");
  if (P > 1)
    expect_same_error([&] { plan(MPI_COMM_WORLD, {4, 4, 4}, me == last ? 2 : 3); }, toru::errc::mismatch, "howmany");
  expect_same_error([&] { plan(MPI_COMM_WORLD, {4, me == last ? 0 : 4, 4}, 3); }, toru::errc::invalid_argument, "n[1]");
  expect_same_error(
      [&] {
        plan(MPI_COMM_WORLD, {4, 4, 4}, 2, static_cast<fields>(me == last ? 7 : 0));
      },
      toru::errc::invalid_argument, "layout");
  // A c2c batch on one rank and an r2c batch on the others (same n and howmany): no hang.
  if (P > 1)
    expect_same_error(
        [&] {
          if (me == 0)
            toru::fft::fft3d_batch<double>(MPI_COMM_WORLD, {4, 4, 4}, 2);
          else
            plan(MPI_COMM_WORLD, {4, 4, 4}, 2);
        },
        toru::errc::mismatch, "fft3d_batch");
  // A null buffer on one rank (rank 0: the only one sure to own points at every rank count).
  plan p(MPI_COMM_WORLD, {6, 5, 4}, 2);
  std::vector<double> r(2 * static_cast<std::size_t>(p.alloc_size()));
  std::vector<std::complex<double>> c(p.alloc_size());
  expect_same_error([&] { p.forward(me == 0 ? nullptr : r.data(), c.data()); }, toru::errc::invalid_argument, nullptr);
}

}  // namespace
