// SPDX-License-Identifier: BSD-3-Clause
// Split-phase FFT plans: start_forward, the serial FFTW reference computed while the transform is
// in flight, wait; the result matches the reference, and start_backward / wait restores the input.
#include <gtest/gtest.h>

#include <vector>

#include "fft_test_util.hpp"
#include "mpi_test.hpp"
#include "toru/core/error.hpp"
#include "toru/fft/fft1d.hpp"
#include "toru/fft/fft3d.hpp"

namespace {

using index3 = std::array<std::int64_t, 3>;

TEST(FftSplitPhase, ForwardOverlapsTheReferenceAndBackwardRestores) {
  const index3 n{9, 10, 7};
  toru::fft::fft3d<double> plan(MPI_COMM_WORLD, n);
  std::vector<std::complex<double>> all(static_cast<std::size_t>(n[0] * n[1] * n[2]));
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = toru::test::cnoise(i, 11);
  std::vector<std::complex<double>> a(plan.alloc_size()), b(plan.alloc_size()), c(plan.alloc_size());
  toru::test::for_each(plan.inbox(), [&](index3 g, std::int64_t i) { a[i] = all[toru::test::flat(n, g)]; });
  plan.start_forward(a.data(), b.data());
  const auto want = toru::test::serial_dft3(n, all, -1);  // the work done while the FFT is in flight
  plan.wait();
  toru::test::error_norm e;
  toru::test::for_each(plan.outbox(), [&](index3 g, std::int64_t i) { e.add(b[i], want[toru::test::flat(n, g)]); });
  EXPECT_LT(e.rel(), toru::test::tolerance<double>(static_cast<double>(all.size())));
  plan.start_backward(b.data(), c.data(), toru::fft::scale::full);
  EXPECT_THROW(plan.start_forward(a.data(), b.data()), toru::error);  // one in flight already
  plan.wait();
  toru::test::error_norm r;
  toru::test::for_each(plan.inbox(), [&](index3 g, std::int64_t i) { r.add(c[i], all[toru::test::flat(n, g)]); });
  EXPECT_LT(r.rel(), toru::test::tolerance<double>(static_cast<double>(all.size())));
  EXPECT_THROW(plan.wait(), toru::error);  // nothing in flight
}

TEST(FftSplitPhase, OneDimensional) {
  const std::int64_t N = 2 * 3 * 5 * 7;
  toru::fft::fft1d<double> plan(MPI_COMM_WORLD, N);
  std::vector<std::complex<double>> all(N);
  for (std::int64_t i = 0; i < N; ++i) all[i] = toru::test::cnoise(static_cast<std::uint64_t>(i), 2);
  std::vector<std::complex<double>> a(plan.alloc_size()), b(plan.alloc_size());
  for (std::int64_t i = 0; i < plan.in_count(); ++i) a[i] = all[plan.in_start() + i];
  plan.start_forward(a.data(), b.data());
  const auto want = toru::test::serial_dft1(all, -1);
  plan.wait();
  toru::test::error_norm e;
  for (std::int64_t i = 0; i < plan.out_count(); ++i) e.add(b[i], want[plan.out_start() + i]);
  EXPECT_LT(e.rel(), toru::test::tolerance<double>(static_cast<double>(N)));
}

}  // namespace
