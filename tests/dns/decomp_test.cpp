// SPDX-License-Identifier: BSD-3-Clause
// The same run on any rank count and decomposition gives the same field to round-off: each is
// compared with a reference run by rank 0 alone (MPI_COMM_SELF) in the same job.
#include <gtest/gtest.h>

#include <vector>

#include "dns/initial.hpp"
#include "dns/solver.hpp"
#include "dns_test_util.hpp"

namespace toru::dns {
namespace {

struct result {
  std::vector<cpx> field;
  double energy = 0;
};

result run(MPI_Comm comm, const transform_options& opts, scheme method) {
  solver s(comm, {.n = 18, .nu = 0.005, .method = method, .fft = opts});
  random_isotropic(s.grid(), s.transformer(), 3, 2024, s.u());
  for (int i = 0; i < 5; ++i) s.advance(s.cfl_dt(s.prepare(), 0.5));
  return {test::gather_natural(s.grid(), s.u()), s.grid().stats(s.u()).energy};
}

TEST(DnsDecomposition, EveryRankCountAndDecompositionAgree) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (const auto method : {scheme::rk3, scheme::rk4}) {
    // The reference: rank 0 alone, toru's FFT, then sent to everybody.
    result ref;
    if (rank == 0) ref = run(MPI_COMM_SELF, {}, method);
    ref.field.resize(3 * 18 * 18 * 10);
    MPI_Bcast(ref.field.data(), static_cast<int>(ref.field.size()), MPI_C_DOUBLE_COMPLEX, 0, MPI_COMM_WORLD);
    MPI_Bcast(&ref.energy, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    ASSERT_GT(ref.energy, 1.0);
    for (const auto& c : test::fft_cases()) {
      SCOPED_TRACE(c.name + " " + to_string(method));
      const result r = run(MPI_COMM_WORLD, c.opts, method);
      EXPECT_LT(test::rel_diff(r.field, ref.field), 1e-12);
      EXPECT_NEAR(r.energy / ref.energy, 1.0, 1e-12);
    }
  }
}

}  // namespace
}  // namespace toru::dns
