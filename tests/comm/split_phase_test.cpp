// SPDX-License-Identifier: BSD-3-Clause
// Split-phase all-to-all plans: start(), useful work while the exchange is in flight (the
// reference result, from MPI_Alltoall(v)), wait(); the plan's result equals MPI's. A second start
// before wait, and a wait without start, are errors on every rank.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "mpi_test.hpp"
#include "toru/comm/alltoall_plan.hpp"
#include "toru/comm/communicator.hpp"
#include "toru/core/error.hpp"
#include "toru/core/request.hpp"

namespace {

TEST(SplitPhase, AlltoallEqualsMpiWithWorkInBetween) {
  const int P = toru::test::nranks(), me = toru::test::rank();
  toru::comm::communicator comm(MPI_COMM_WORLD);
  const std::size_t count = 1031;  // prime, so no block is a multiple of anything
  toru::comm::alltoall_plan plan(comm, count, MPI_DOUBLE);
  std::vector<double> in(count * P), out(count * P, -1), want(count * P);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = me * 1e6 + static_cast<double>(i);
  // The useful work: the reference, on a communicator of its own (MPI_THREAD_MULTIPLE).
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  for (int round = 0; round < 3; ++round) {  // a plan starts again after each wait
    plan.start(in.data(), out.data());
    MPI_Alltoall(in.data(), static_cast<int>(count), MPI_DOUBLE, want.data(), static_cast<int>(count), MPI_DOUBLE, dup);
    plan.wait();
    EXPECT_EQ(out, want) << "round " << round;
    for (double& v : in) v += 1;
  }
  MPI_Comm_free(&dup);
}

TEST(SplitPhase, AlltoallvEqualsMpi) {
  const int P = toru::test::nranks(), me = toru::test::rank();
  toru::comm::communicator comm(MPI_COMM_WORLD);
  // Uneven: rank i sends (i + 2 * j) % 5 + 1 elements to rank j.
  std::vector<int> sc(P), rc(P), sd(P), rd(P);
  for (int j = 0; j < P; ++j) {
    sc[j] = (me + 2 * j) % 5 + 1;
    rc[j] = (j + 2 * me) % 5 + 1;
  }
  std::exclusive_scan(sc.begin(), sc.end(), sd.begin(), 0);
  std::exclusive_scan(rc.begin(), rc.end(), rd.begin(), 0);
  std::vector<int> in(static_cast<std::size_t>(sd.back() + sc.back())), out(rd.back() + rc.back(), -1),
      want(out.size());
  std::iota(in.begin(), in.end(), me * 1000);
  toru::comm::alltoallv_plan plan(comm, sc, sd, rc, rd, MPI_INT);
  plan.start(in.data(), out.data());
  // Local work meanwhile: a checksum of the input (no MPI on this thread while in flight).
  const long sum = std::accumulate(in.begin(), in.end(), 0L);
  plan.wait();
  MPI_Alltoallv(in.data(), sc.data(), sd.data(), MPI_INT, want.data(), rc.data(), rd.data(), MPI_INT, MPI_COMM_WORLD);
  EXPECT_EQ(out, want);
  EXPECT_EQ(sum, std::accumulate(in.begin(), in.end(), 0L));  // the input is untouched
}

// Persistent requests (init once, start / wait every round) on new data in the same buffers.
TEST(SplitPhase, PersistentRequestsEqualMpiEveryRound) {
  const int P = toru::test::nranks(), me = toru::test::rank();
  toru::comm::communicator comm(MPI_COMM_WORLD);
  const std::size_t count = 13;
  toru::comm::alltoall_plan plan(comm, count, MPI_DOUBLE);
  std::vector<double> in(count * P), out(count * P), want(count * P);
  toru::request r = plan.init(in.data(), out.data());
  // Uneven counts for the v variant, as above.
  std::vector<int> sc(P), rc(P), sd(P), rd(P);
  for (int j = 0; j < P; ++j) {
    sc[j] = (me + 3 * j) % 4;  // some pairs exchange nothing
    rc[j] = (j + 3 * me) % 4;
  }
  std::exclusive_scan(sc.begin(), sc.end(), sd.begin(), 0);
  std::exclusive_scan(rc.begin(), rc.end(), rd.begin(), 0);
  std::vector<int> vin(static_cast<std::size_t>(sd.back() + sc.back()) + 1), vout(rd.back() + rc.back() + 1),
      vwant(vout.size());
  toru::comm::alltoallv_plan vplan(comm, sc, sd, rc, rd, MPI_INT);
  toru::request v = vplan.init(vin.data(), vout.data());
  for (int round = 0; round < 3; ++round) {
    for (std::size_t i = 0; i < in.size(); ++i) in[i] = me * 1e6 + static_cast<double>(i) + 0.5 * round;
    std::iota(vin.begin(), vin.end(), me * 1000 + 7 * round);
    r.start();
    EXPECT_TRUE(r.active());
    const double sum = std::accumulate(in.begin(), in.end(), 0.0);  // local work meanwhile
    r.wait();
    EXPECT_FALSE(r.active());
    v.run();
    MPI_Alltoall(in.data(), static_cast<int>(count), MPI_DOUBLE, want.data(), static_cast<int>(count), MPI_DOUBLE,
                 MPI_COMM_WORLD);
    MPI_Alltoallv(vin.data(), sc.data(), sd.data(), MPI_INT, vwant.data(), rc.data(), rd.data(), MPI_INT,
                  MPI_COMM_WORLD);
    EXPECT_EQ(out, want) << "round " << round;
    EXPECT_EQ(vout, vwant) << "round " << round;
    EXPECT_EQ(sum, std::accumulate(in.begin(), in.end(), 0.0));
  }
  r.start();
  EXPECT_THROW(r.start(), toru::error);  // one in flight already
  r.wait();
  EXPECT_THROW(r.wait(), toru::error);  // nothing in flight
}

TEST(SplitPhase, SecondStartAndLoneWaitAreErrors) {
  const int P = toru::test::nranks();
  toru::comm::communicator comm(MPI_COMM_WORLD);
  toru::comm::alltoall_plan plan(comm, 4, MPI_INT);
  std::vector<int> in(4 * P, 1), out(4 * P);
  try {
    plan.wait();
    ADD_FAILURE() << "wait() without start() did not throw";
  } catch (const toru::error& e) {
    EXPECT_EQ(e.code(), toru::errc::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("without a start()"), std::string::npos) << e.what();
  }
  plan.start(in.data(), out.data());
  try {
    plan.start(in.data(), out.data());
    ADD_FAILURE() << "a second start() did not throw";
  } catch (const toru::error& e) {
    EXPECT_EQ(e.code(), toru::errc::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("before wait()"), std::string::npos) << e.what();
  }
  plan.wait();  // the first exchange still completes
  EXPECT_EQ(out, std::vector<int>(4 * P, 1));
}

}  // namespace
