// SPDX-License-Identifier: BSD-3-Clause
// fft reads comm's environment only through comm: whether the exchanges are held to one all-to-all
// algorithm (comm::resolved_algorithm, which reads TORU_ALLTOALL_ALGORITHM) and whether a torus is
// described (communicator::torus_given). Either takes the node-local window out of the strategy
// table, since the exchange then belongs to comm's algorithm or to the torus's links; "auto" forces
// nothing, as comm reads it. On one node, where the window otherwise applies.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "mpi_test.hpp"
#include "toru/comm/alltoall_plan.hpp"
#include "toru/fft/fft1d.hpp"
#include "toru/fft/fft3d.hpp"

namespace {

using toru::comm::alltoall_algorithm;

// TORU_ALLTOALL_ALGORITHM for the scope, on every rank.
class scoped_algorithm {
 public:
  explicit scoped_algorithm(const char* v) { ::setenv("TORU_ALLTOALL_ALGORITHM", v, 1); }
  ~scoped_algorithm() { ::unsetenv("TORU_ALLTOALL_ALGORITHM"); }
  scoped_algorithm(const scoped_algorithm&) = delete;
  scoped_algorithm& operator=(const scoped_algorithm&) = delete;
};

bool has_window(const std::vector<std::string>& names) {
  return std::any_of(names.begin(), names.end(), [](const std::string& s) { return s.find("window") != s.npos; });
}

bool window_disabled() {
  const char* e = std::getenv("TORU_FFT_WINDOW");
  return e != nullptr && std::string(e) == "0";
}

}  // namespace

TEST(FftCommEnvironment, ResolvedAlgorithmFollowsTheVariable) {
  ::unsetenv("TORU_ALLTOALL_ALGORITHM");
  EXPECT_EQ(toru::comm::resolved_algorithm(alltoall_algorithm::automatic), alltoall_algorithm::automatic);
  EXPECT_EQ(toru::comm::resolved_algorithm(alltoall_algorithm::bruck), alltoall_algorithm::bruck);
  {
    const scoped_algorithm env("pairwise");  // overrides the options, as in comm's plans
    EXPECT_EQ(toru::comm::resolved_algorithm(alltoall_algorithm::automatic), alltoall_algorithm::pairwise);
    EXPECT_EQ(toru::comm::resolved_algorithm(alltoall_algorithm::bruck), alltoall_algorithm::pairwise);
  }
  {
    const scoped_algorithm env("auto");
    EXPECT_EQ(toru::comm::resolved_algorithm(alltoall_algorithm::automatic), alltoall_algorithm::automatic);
    EXPECT_EQ(toru::comm::resolved_algorithm(alltoall_algorithm::direct), alltoall_algorithm::direct);
  }
  {
    const scoped_algorithm env("no-such-algorithm");  // the plan constructors refuse it, collectively
    EXPECT_EQ(toru::comm::resolved_algorithm(alltoall_algorithm::indirect), alltoall_algorithm::indirect);
  }
}

TEST(FftCommEnvironment, ForcedAlgorithmOrDescribedTorusTakesTheWindowOut) {
  if (window_disabled()) GTEST_SKIP() << "TORU_FFT_WINDOW=0";
  if (toru::test::nranks() < 2) GTEST_SKIP() << "one rank exchanges nothing";
  ::unsetenv("TORU_ALLTOALL_ALGORITHM");
  const std::int64_t n1 = 1000;
  const std::int64_t n3 = 8 * toru::test::nranks();
  EXPECT_TRUE(has_window(toru::fft::fft1d<double>(MPI_COMM_WORLD, n1).candidates()));
  EXPECT_TRUE(has_window(toru::fft::fft3d<double>(MPI_COMM_WORLD, {n3, n3, 8}).candidates()));
  {
    const scoped_algorithm env("auto");
    EXPECT_TRUE(has_window(toru::fft::fft1d<double>(MPI_COMM_WORLD, n1).candidates()));
  }
  {
    const scoped_algorithm env("pairwise");
    EXPECT_FALSE(has_window(toru::fft::fft1d<double>(MPI_COMM_WORLD, n1).candidates()));
    EXPECT_FALSE(has_window(toru::fft::fft3d<double>(MPI_COMM_WORLD, {n3, n3, 8}).candidates()));
  }
  // A torus given through the options: the communicator says it was described.
  toru::fft::options1d o1;
  o1.comm.torus = std::to_string(toru::test::nranks());
  EXPECT_FALSE(has_window(toru::fft::fft1d<double>(MPI_COMM_WORLD, n1, o1).candidates()));
  toru::fft::options3d o3;
  o3.comm.torus = std::to_string(toru::test::nranks());
  EXPECT_FALSE(has_window(toru::fft::fft3d<double>(MPI_COMM_WORLD, {n3, n3, 8}, o3).candidates()));
}
