// SPDX-License-Identifier: BSD-3-Clause
// Distributed 1D FFT against serial FFTW: natural and scrambled output, its inverse, composite,
// prime and power-of-two sizes, chosen and given n1.
#include <gtest/gtest.h>

#include "fft_test_util.hpp"
#include "mpi_test.hpp"
#include "toru/core/error.hpp"
#include "toru/fft/fft1d.hpp"

namespace {

using toru::fft::order;
using toru::test::cnoise;

template <class T>
void check_1d(std::int64_t n, std::int64_t n1, order o, bool in_place, bool overlap = true) {
  SCOPED_TRACE(::testing::Message() << "n=" << n << " n1=" << n1 << " " << toru::fft::to_string(o)
                                    << (in_place ? " in-place" : " out-of-place")
                                    << (sizeof(T) == 8 ? " double" : " float"));
  using cpx = std::complex<T>;
  const toru::fft::options1d opts{.n1 = n1, .output = o, .overlap = overlap};
  toru::fft::fft1d<T> plan(MPI_COMM_WORLD, n, opts);
  EXPECT_EQ(plan.n1() * plan.n2(), n);
  const auto lay = toru::fft::local_size_1d(toru::test::nranks(), toru::test::rank(), n, opts);
  EXPECT_EQ(lay.in_start, plan.in_start());
  EXPECT_EQ(lay.in_count, plan.in_count());
  EXPECT_EQ(lay.out_start, plan.out_start());
  EXPECT_EQ(lay.out_count, plan.out_count());
  EXPECT_EQ(lay.alloc, plan.alloc_size());
  std::vector<std::complex<double>> x(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) x[i] = cnoise(i, 5);
  const auto X = toru::test::serial_dft1(x, FFTW_FORWARD);

  std::vector<cpx> a(plan.alloc_size()), b(plan.alloc_size());
  for (std::int64_t i = 0; i < plan.in_count(); ++i) a[i] = cpx(x[plan.in_start() + i]);
  cpx* out = in_place ? a.data() : b.data();
  plan.forward(a.data(), out);
  toru::test::error_norm e;
  for (std::int64_t i = 0; i < plan.out_count(); ++i) {
    std::int64_t k = plan.out_start() + i;
    if (o == order::transposed) {  // local (k1 - k1_start) * n2 + k2 holds X[k1 + n1 * k2]
      const std::int64_t k1 = k / plan.n2(), k2 = k % plan.n2();
      k = k1 + plan.n1() * k2;
    }
    e.add(out[i], X[k]);
  }
  EXPECT_LT(e.rel(), toru::test::tolerance<T>(static_cast<double>(n)));

  std::vector<cpx> c(plan.alloc_size());
  cpx* back = in_place ? out : c.data();
  plan.backward(out, back, toru::fft::scale::full);
  toru::test::error_norm r;
  for (std::int64_t i = 0; i < plan.in_count(); ++i) r.add(back[i], x[plan.in_start() + i]);
  EXPECT_LT(r.rel(), toru::test::tolerance<T>(static_cast<double>(n)));
}

TEST(Fft1d, MatchesSerialFftw) {
  for (auto o : {order::natural, order::transposed})
    for (bool ip : {false, true}) {
      check_1d<double>(1 << 12, 0, o, ip);
      check_1d<double>(1000, 0, o, ip);
      check_1d<double>(360, 24, o, ip);
      check_1d<double>(97, 0, o, ip);  // prime: n1 = 1
      check_1d<double>(6, 0, o, ip);   // fewer rows than ranks
    }
  check_1d<double>(2310, 0, order::natural, false, false);  // overlap off
}

TEST(Fft1d, FloatMatchesSerialFftw) {
  for (auto o : {order::natural, order::transposed}) {
    check_1d<float>(1 << 12, 0, o, false);
    check_1d<float>(720, 0, o, false);
  }
}

TEST(Fft1d, BadN1IsRefusedOnEveryRank) {
  EXPECT_THROW(toru::fft::fft1d<double>(MPI_COMM_WORLD, 100, {.n1 = 7}), toru::error);
  EXPECT_THROW(toru::fft::fft1d<double>(MPI_COMM_WORLD, 0), toru::error);
}

}  // namespace
