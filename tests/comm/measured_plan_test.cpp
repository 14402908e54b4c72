// SPDX-License-Identifier: BSD-3-Clause
// Plans whose algorithm was measured (measure = true) or read from wisdom execute the exchange
// MPI_Alltoall does: every element, from every rank, in place and out of place, on tori of
// several shapes, at sizes where different candidates win.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mpi_test.hpp"
#include "toru/comm/alltoall_plan.hpp"
#include "toru/comm/wisdom.hpp"

namespace {

using toru::comm::alltoall_algorithm;

std::string torus_for(int p) {
  if (p == 4) return "2x2";
  if (p == 6) return "3x2";
  return std::to_string(p);
}

// Runs `plan` and MPI_Alltoall on the same input and compares every element.
void expect_same_as_mpi(const toru::comm::alltoall_plan& plan, std::size_t count) {
  const int P = toru::test::nranks(), me = toru::test::rank();
  const std::size_t n = count * static_cast<std::size_t>(P);
  std::vector<std::int64_t> in(n), out(n, -1), want(n, -2);
  for (std::size_t i = 0; i < n; ++i) in[i] = static_cast<std::int64_t>(me) * 1000003 + static_cast<std::int64_t>(i);
  MPI_Alltoall(in.data(), static_cast<int>(count), MPI_INT64_T, want.data(), static_cast<int>(count), MPI_INT64_T,
               MPI_COMM_WORLD);
  plan.execute(in.data(), out.data());
  EXPECT_EQ(out, want) << to_string(plan.algorithm()) << " chunks " << plan.chunks() << " count " << count;
  auto inplace = in;
  plan.execute(inplace.data(), inplace.data());
  EXPECT_EQ(inplace, want) << "in place: " << to_string(plan.algorithm()) << " count " << count;
}

TEST(measured_plan, executes_what_mpi_alltoall_does) {
  const int P = toru::test::nranks();
  toru::comm::forget_wisdom();
  toru::comm::communicator comm(MPI_COMM_WORLD, {.torus = torus_for(P)});
  for (std::size_t count : {1u, 37u, 4096u, 65536u}) {
    toru::comm::alltoall_plan plan(comm, count, MPI_INT64_T, {.measure = true});
    EXPECT_NE(plan.algorithm(), alltoall_algorithm::automatic);
    EXPECT_GE(plan.chunks(), 1);
    expect_same_as_mpi(plan, count);
  }
  toru::comm::forget_wisdom();
}

// Every candidate a measurement may pick, read back from wisdom (so the choice is the test's, not
// the timer's), with several chunk counts.
TEST(measured_plan, every_wisdom_choice_executes_correctly) {
  const int P = toru::test::nranks();
  toru::comm::forget_wisdom();
  toru::comm::communicator comm(MPI_COMM_WORLD, {.torus = torus_for(P)});
  const std::size_t count = 999;
  toru::comm::alltoall_plan measured(comm, count, MPI_INT64_T, {.measure = true});
  auto wisdom = nlohmann::json::parse(toru::comm::export_wisdom());
  ASSERT_EQ(wisdom["comm"]["entries"].size(), 1u);
  for (const char* algorithm : {"direct", "pairwise", "bruck", "indirect"})
    for (int chunks : {1, 3}) {
      if (chunks > 1 && std::string(algorithm) != "indirect") continue;
      auto edited = wisdom;
      edited["comm"]["entries"][0]["algorithm"] = algorithm;
      edited["comm"]["entries"][0]["chunks"] = chunks;
      toru::comm::import_wisdom(edited.dump());
      toru::comm::alltoall_plan plan(comm, count, MPI_INT64_T, {.measure = true});
      EXPECT_EQ(to_string(plan.algorithm()), algorithm);
      expect_same_as_mpi(plan, count);
    }
  toru::comm::forget_wisdom();
}

}  // namespace
