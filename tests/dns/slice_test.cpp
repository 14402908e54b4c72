// SPDX-License-Identifier: BSD-3-Clause
// The plane toru-dns streams (dns/slice.hpp) against the analytic Taylor-Green field
// u_x = sin x cos y cos z, so at z = 0: sin x cos y; on 1, 2 and 3 ranks and an odd grid.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <numbers>

#include "dns/initial.hpp"
#include "dns/slice.hpp"
#include "dns/solver.hpp"

TEST(StreamDnsSlice, TaylorGreenPlaneIsAnalytic) {
  for (std::int64_t n : {16, 18}) {
    toru::dns::solver sol(MPI_COMM_WORLD, {.n = n, .nu = 1.0 / 100});
    toru::dns::taylor_green(sol.grid(), sol.transformer(), sol.u());
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int root : {0, 1}) {
      int nranks = 1;
      MPI_Comm_size(MPI_COMM_WORLD, &nranks);
      if (root >= nranks) continue;
      const auto ux = toru::dns::plane_z0(sol.grid(), sol.u()[0], root);
      const auto uy = toru::dns::plane_z0(sol.grid(), sol.u()[1], root);
      if (rank != root) {
        EXPECT_TRUE(ux.empty());
        continue;
      }
      ASSERT_EQ(ux.size(), static_cast<std::size_t>(n * n));
      const double h = 2 * std::numbers::pi / static_cast<double>(n);
      for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t j = 0; j < n; ++j) {
          const double x = i * h, y = j * h;
          ASSERT_NEAR(ux[static_cast<std::size_t>(i * n + j)], std::sin(x) * std::cos(y), 1e-6) << i << "," << j;
          ASSERT_NEAR(uy[static_cast<std::size_t>(i * n + j)], -std::cos(x) * std::sin(y), 1e-6) << i << "," << j;
        }
    }
  }
}

// The non-blocking tap toru-dns streams with gives what the blocking calls give: the plane of
// plane_z0 and the spectrum of spectral_grid::spectrum, for the step it was started at, even when
// collected after the field has moved on.
TEST(StreamDnsSlice, TapEqualsTheBlockingCalls) {
  int rank = 0, nranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  for (std::int64_t n : {16, 18}) {
    toru::dns::solver sol(MPI_COMM_WORLD, {.n = n, .nu = 1.0 / 100});
    toru::dns::taylor_green(sol.grid(), sol.transformer(), sol.u());
    // A field with every shell populated: Taylor-Green plus a deterministic perturbation.
    for (auto& c : sol.u())
      for (std::size_t i = 0; i < c.size(); ++i) c[i] += std::complex<double>(1e-3 * std::sin(0.37 * i), 0);
    const int root = nranks - 1;
    const auto plane = toru::dns::plane_z0(sol.grid(), sol.u()[0], root);
    const auto ek = sol.grid().spectrum(sol.u());
    toru::dns::slice_tap tap(sol.grid(), root);
    EXPECT_FALSE(tap.collect().has_value());
    tap.start(sol.u(), 7, 0.25);
    for (auto& c : sol.u()) std::fill(c.begin(), c.end(), std::complex<double>(0, 0));  // moved on
    const auto f = tap.collect();
    ASSERT_TRUE(f.has_value());
    EXPECT_EQ(f->step, 7);
    EXPECT_EQ(f->t, 0.25);
    if (rank != root) {
      EXPECT_TRUE(f->plane.empty());
      continue;
    }
    ASSERT_EQ(f->plane.size(), plane.size());
    for (std::size_t i = 0; i < plane.size(); ++i) ASSERT_NEAR(f->plane[i], plane[i], 1e-6) << i;
    ASSERT_EQ(f->spectrum.size(), ek.size());
    for (std::size_t k = 0; k < ek.size(); ++k) EXPECT_NEAR(f->spectrum[k], ek[k], 1e-12 * (1 + ek[k])) << k;
  }
}
