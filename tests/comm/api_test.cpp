// SPDX-License-Identifier: BSD-3-Clause
// The C interface, the drop-in C calls, measure mode and wisdom, the decision on a described torus.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mpi_test.hpp"
#include "toru/comm.h"
#include "toru/comm/alltoall_plan.hpp"
#include "toru/comm/wisdom.hpp"
#include "toru/config.hpp"
#include "toru/core/error.hpp"

extern "C" int c_api_plan_roundtrip(MPI_Comm comm, int count, toru_alltoall_algorithm algorithm);

namespace {

using toru::comm::alltoall_algorithm;

TEST(c_api, plan_roundtrip_for_every_algorithm) {
  for (auto a : {TORU_ALLTOALL_DIRECT, TORU_ALLTOALL_PAIRWISE, TORU_ALLTOALL_BRUCK, TORU_ALLTOALL_INDIRECT})
    for (int count : {0, 1, 6}) EXPECT_EQ(c_api_plan_roundtrip(MPI_COMM_WORLD, count, a), 0) << a << " " << count;
}

TEST(c_api, errors_are_codes_with_messages_on_every_rank) {
  const int P = toru::test::nranks();
  toru_alltoall_plan plan = reinterpret_cast<toru_alltoall_plan>(0x1);
  toru_alltoall_options opts = toru_alltoall_options_default();
  opts.torus = "3x3x3x3";  // 81 nodes: never the rank count here
  EXPECT_EQ(toru_alltoall_plan_create(MPI_COMM_WORLD, 4, MPI_INT, &opts, &plan), TORU_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(plan, nullptr);
  EXPECT_NE(std::strstr(toru_last_error(), "81"), nullptr) << toru_last_error();
  EXPECT_EQ(toru_alltoall_plan_execute(nullptr, nullptr, nullptr), TORU_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(toru_error_string(TORU_SUCCESS), "success");
  EXPECT_STRNE(toru_error_string(TORU_ERROR_MISMATCH), "");
  EXPECT_STREQ(toru_error_string(static_cast<toru_result>(99)), "unknown result code");
  // drop-in C call with a null send buffer on one rank: every rank gets the error code
  std::vector<int> buf(2 * static_cast<std::size_t>(P));
  const toru_result r =
      toru_alltoall(toru::test::rank() == 0 ? nullptr : buf.data(), 2, MPI_INT, buf.data(), 2, MPI_INT, MPI_COMM_WORLD);
  EXPECT_EQ(r, TORU_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(toru_alltoall_plan_destroy(nullptr), TORU_SUCCESS);
}

// A caller built against an older toru/comm.h passes a shorter struct: the library reads only its
// prefix. The same bad torus is refused when inside the size and unread when beyond it.
TEST(c_api, options_size_limits_what_is_read) {
  toru_alltoall_options o = TORU_ALLTOALL_OPTIONS_INIT, init{};
  ASSERT_EQ(toru_alltoall_options_init(&init), TORU_SUCCESS);
  EXPECT_EQ(init.size, sizeof(toru_alltoall_options));
  EXPECT_TRUE(init.algorithm == o.algorithm && init.chunks == o.chunks && init.measure == o.measure &&
              init.torus == nullptr && init.order == nullptr && o.size == init.size);
  o.torus = "3x3x3x3";
  toru_alltoall_plan plan = nullptr;
  EXPECT_EQ(toru_alltoall_plan_create(MPI_COMM_WORLD, 4, MPI_INT, &o, &plan), TORU_ERROR_INVALID_ARGUMENT);
  o.size = offsetof(toru_alltoall_options, torus);
  ASSERT_EQ(toru_alltoall_plan_create(MPI_COMM_WORLD, 4, MPI_INT, &o, &plan), TORU_SUCCESS) << toru_last_error();
  EXPECT_NE(plan, nullptr);
  EXPECT_EQ(toru_alltoall_plan_destroy(plan), TORU_SUCCESS);
  o.size = 0;
  EXPECT_EQ(toru_alltoall_plan_create(MPI_COMM_WORLD, 4, MPI_INT, &o, &plan), TORU_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(toru_last_error(), "options->size"), nullptr) << toru_last_error();
  EXPECT_EQ(plan, nullptr);
}

TEST(c_api, drop_in_calls_match_mpi) {
  const int P = toru::test::nranks(), me = toru::test::rank();
  std::vector<double> in(3 * static_cast<std::size_t>(P)), out(in.size()), want(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = me + 0.001 * static_cast<double>(i);
  MPI_Alltoall(in.data(), 3, MPI_DOUBLE, want.data(), 3, MPI_DOUBLE, MPI_COMM_WORLD);
  ASSERT_EQ(toru_alltoall(in.data(), 3, MPI_DOUBLE, out.data(), 3, MPI_DOUBLE, MPI_COMM_WORLD), TORU_SUCCESS);
  EXPECT_EQ(out, want);
  std::vector<int> c(P, 3), d(P);
  for (int j = 0; j < P; ++j) d[j] = 3 * j;
  std::fill(out.begin(), out.end(), 0);
  ASSERT_EQ(toru_alltoallv(in.data(), c.data(), d.data(), MPI_DOUBLE, out.data(), c.data(), d.data(), MPI_DOUBLE,
                           MPI_COMM_WORLD),
            TORU_SUCCESS);
  EXPECT_EQ(out, want);
}

TEST(measure, all_ranks_agree_and_wisdom_round_trips) {
  const int P = toru::test::nranks();
  toru::comm::forget_wisdom();
  toru::comm::communicator comm(MPI_COMM_WORLD, {.torus = P == 4 ? "2x2" : std::to_string(P)});
  toru::comm::alltoall_plan plan(comm, 64, MPI_INT, {.measure = true});
  int mine[2] = {static_cast<int>(plan.algorithm()), plan.chunks()}, lo[2], hi[2];
  MPI_Allreduce(mine, lo, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(mine, hi, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_EQ(lo[0], hi[0]);
  EXPECT_EQ(lo[1], hi[1]);
  const auto json = nlohmann::json::parse(toru::comm::export_wisdom());
  ASSERT_EQ(json["comm"]["entries"].size(), 1u);
  EXPECT_EQ(json["comm"]["entries"][0]["algorithm"], std::string(toru::comm::to_string(plan.algorithm())));

  const std::string path = "/tmp/toru_comm_wisdom_test_" + std::to_string(P) + ".json";
  if (toru::test::rank() == 0) std::remove(path.c_str());  // save_wisdom keeps an old file's other sections
  toru::comm::save_wisdom(MPI_COMM_WORLD, path);
  toru::comm::forget_wisdom();
  EXPECT_NO_THROW(toru::comm::load_wisdom(MPI_COMM_WORLD, path));
  EXPECT_EQ(nlohmann::json::parse(toru::comm::export_wisdom()), json);
  // With wisdom loaded, the choice is reused (an edited entry proves it is read, not re-measured).
  auto edited = json;
  edited["comm"]["entries"][0]["algorithm"] = "pairwise";
  edited["comm"]["entries"][0]["chunks"] = 1;
  toru::comm::import_wisdom(edited.dump());
  toru::comm::alltoall_plan again(comm, 64, MPI_INT, {.measure = true});
  EXPECT_EQ(again.algorithm(), alltoall_algorithm::pairwise);
  try {
    toru::comm::load_wisdom(MPI_COMM_WORLD, "/nonexistent/toru-wisdom.json");
    ADD_FAILURE() << "a missing wisdom file was accepted";
  } catch (const toru::error& e) {
    EXPECT_EQ(e.code(), toru::errc::io) << e.what();
    EXPECT_NE(std::string(e.what()).find("/nonexistent/toru-wisdom.json"), std::string::npos) << e.what();
  }
  EXPECT_EQ(toru_alltoall_wisdom_load(MPI_COMM_WORLD, "/nonexistent/toru-wisdom.json"), TORU_ERROR_IO);
  EXPECT_THROW(toru::comm::import_wisdom("{\"toru_alltoall_wisdom\": 1, \"entries\": [{\"nranks\": 2}]}"), toru::error);
  EXPECT_THROW(toru::comm::import_wisdom("not json"), toru::error);
  toru::comm::forget_wisdom();
  if (toru::test::rank() == 0) std::remove(path.c_str());
}

TEST(decision, described_asymmetric_torus_picks_indirect_for_large_blocks) {
  if (toru::test::nranks() != 4) GTEST_SKIP() << "uses a 2x2 torus with a slow second axis: 4 ranks";
  toru::comm::communicator comm(MPI_COMM_WORLD, {.torus = "2[bw=1GB/s]x2[bw=100MB/s]"});
  toru::comm::alltoall_plan big(comm, 1 << 16, MPI_DOUBLE);
  EXPECT_EQ(big.algorithm(), alltoall_algorithm::indirect);
  EXPECT_GE(big.chunks(), 1);
  toru::comm::communicator plain(MPI_COMM_WORLD);
  toru::comm::alltoall_plan derived(plain, 1 << 16, MPI_DOUBLE);
  EXPECT_EQ(derived.algorithm(), alltoall_algorithm::direct);
}

}  // namespace
