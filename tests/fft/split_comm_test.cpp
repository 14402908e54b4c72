// SPDX-License-Identifier: BSD-3-Clause
// Plans on sub-communicators: MPI_Comm_split into two halves, each half runs its own transform of
// its own data at the same time, and each is compared with serial FFTW. A plan that used
// MPI_COMM_WORLD anywhere inside would deadlock or mix the halves' data here.
#include <gtest/gtest.h>
#include <mpi.h>

#include "fft_test_util.hpp"
#include "mpi_test.hpp"
#include "toru/fft/fft1d.hpp"
#include "toru/fft/fft3d.hpp"

namespace {

struct split_comm {
  MPI_Comm comm = MPI_COMM_NULL;
  int color = 0;
  split_comm() {
    color = toru::test::rank() % 2;
    MPI_Comm_split(MPI_COMM_WORLD, color, toru::test::rank(), &comm);
  }
  ~split_comm() { MPI_Comm_free(&comm); }
};

TEST(FftSplitComm, EachHalfComputesItsOwn3dTransform) {
  split_comm half;
  // Different sizes and inputs per half, so one half's data can never pass for the other's.
  const std::array<std::int64_t, 3> n =
      half.color == 0 ? std::array<std::int64_t, 3>{8, 6, 5} : std::array<std::int64_t, 3>{6, 4, 9};
  toru::fft::fft3d<double> plan(half.comm, n);
  const double err = toru::test::forward_error_against_serial(plan, n, half.comm, 11 + half.color);
  EXPECT_LT(err, toru::test::tolerance<double>(static_cast<double>(n[0] * n[1] * n[2]))) << "half " << half.color;
}

TEST(FftSplitComm, EachHalfComputesItsOwn1dTransform) {
  split_comm half;
  const std::int64_t n = half.color == 0 ? 48 : 60;
  toru::fft::fft1d<double> plan(half.comm, n);
  std::vector<std::complex<double>> x(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = toru::test::cnoise(i, 21 + half.color);
  const auto want = toru::test::serial_dft1(x, FFTW_FORWARD);
  std::vector<std::complex<double>> a(plan.alloc_size()), b(plan.alloc_size());
  for (std::int64_t i = 0; i < plan.in_count(); ++i) a[static_cast<std::size_t>(i)] = x[plan.in_start() + i];
  plan.forward(a.data(), b.data());
  toru::test::error_norm e;
  for (std::int64_t i = 0; i < plan.out_count(); ++i) e.add(b[static_cast<std::size_t>(i)], want[plan.out_start() + i]);
  EXPECT_LT(e.rel(half.comm), toru::test::tolerance<double>(static_cast<double>(n))) << "half " << half.color;
}

}  // namespace
