// SPDX-License-Identifier: BSD-3-Clause
// The delay analysis on hand-made traces whose causes are known: who computed too long, where, and
// how much of the waiting (direct and propagated along a chain) it caused; the critical path.
#include <gtest/gtest.h>

#include <map>
#include <tuple>

#include "rootcause.hpp"

namespace toru::tune::shim {
namespace {

// Sites: the same code on two ranks has the same id, as after analysis.cpp's merge.
constexpr int barrier_site = 0;

// One rank's trace: compute runs up to each call's entry (it stamps the cumulative compute).
struct rank_trace {
  int rank = 0;
  double compute = 0, last_exit = 0;
  std::vector<event> ev;
  std::map<std::tuple<int, int, int>, std::uint32_t> seqs;  // (kind, peer, tag)

  event& call(ev_type type, fn func, int site, double t0, double t1) {
    compute += t0 - last_exit;
    last_exit = t1;
    ev.push_back(event{.t0 = t0, .t1 = t1, .tpost = t0, .compute = compute, .site = site, .type = type, .func = func});
    return ev.back();
  }
  void send(int site, int dst, double t0, double t1, fn func = f_send) {
    event& e = call(ev_type::send, func, site, t0, t1);
    e.peer = dst;
    e.seq = seqs[{0, dst, 0}]++;
  }
  void recv(int site, int src, double t0, double t1, double tpost = -1) {
    event& e = call(ev_type::recv, f_recv, site, t0, t1);
    e.peer = src;
    e.tpost = tpost < 0 ? t0 : tpost;
    e.seq = seqs[{1, src, 0}]++;
  }
  void irecv(int site, double t) { call(ev_type::other_mpi, f_irecv, site, t, t); }
  void poll(int site, double t) { call(ev_type::other_mpi, f_iprobe, site, t, t); }
  void coll(int site, int nranks, double t0, double t1) {
    event& e = call(ev_type::coll, f_allreduce, site, t0, t1);
    e.peer = nranks;
    e.seq = seqs[{2, 0, 0}]++;
  }
};

std::vector<rank_trace> start(int n) {
  std::vector<rank_trace> r(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    r[static_cast<std::size_t>(i)].rank = i;
    r[static_cast<std::size_t>(i)].coll(barrier_site, n, 0, 0);  // everyone synchronised at t = 0
  }
  return r;
}

rootcause_result analyse(const std::vector<rank_trace>& ranks) {
  std::vector<std::vector<event>> ev;
  for (const auto& r : ranks) ev.push_back(r.ev);
  return root_causes(ev);
}

const wait_cause* find(const rootcause_result& rc, region_key k) {
  for (const auto& c : rc.causes)
    if (c.region == k) return &c;
  return nullptr;
}

TEST(rootcause, late_sender_is_caused_by_the_senders_compute) {
  auto r = start(2);
  r[0].send(1, 1, 1.0, 1.0);    // rank 0 computes 1 s between the barrier and its send
  r[1].recv(2, 0, 0.2, 1.001);  // rank 1 computes 0.2 s, then waits 0.8 s
  const auto rc = analyse(r);
  EXPECT_NEAR(rc.total_wait, 0.8, 1e-9);
  ASSERT_FALSE(rc.causes.empty());
  const wait_cause& top = rc.causes.front();
  EXPECT_EQ(top.region, (region_key{0, barrier_site, 1}));
  EXPECT_NEAR(top.caused, 0.8, 1e-9);
  EXPECT_NEAR(top.direct, 0.8, 1e-9);
  EXPECT_NEAR(top.compute, 1.0, 1e-9);
  EXPECT_NEAR(top.excess, 1.0, 1e-9);  // rank 1 never runs that region
  // The run ends on rank 1, which waited for rank 0: rank 0's second of compute is the critical path.
  EXPECT_NEAR(rc.critical_rank[0], 1.0, 1e-9);
  EXPECT_NEAR(top.critical, 1.0, 1e-9);
}

TEST(rootcause, late_receiver_is_caused_by_the_receivers_compute_before_its_post) {
  auto r = start(2);
  r[0].send(1, 1, 0.1, 1.0, f_ssend);  // synchronous send waits from 0.1 s until the receive is posted
  r[1].irecv(3, 1.0);                  // rank 1 computes 1 s, then posts
  r[1].recv(4, 0, 1.0, 1.0, 1.0);
  const auto rc = analyse(r);
  EXPECT_NEAR(rc.total_wait, 0.9, 1e-9);
  ASSERT_FALSE(rc.causes.empty());
  EXPECT_EQ(rc.causes.front().region, (region_key{1, barrier_site, 3}));
  EXPECT_NEAR(rc.causes.front().caused, 0.9, 1e-9);
}

TEST(rootcause, wait_at_collective_is_caused_by_the_last_rank) {
  auto r = start(3);
  const int allreduce = 5;
  r[0].coll(allreduce, 3, 0.1, 1.0);
  r[1].coll(allreduce, 3, 0.1, 1.0);
  r[2].coll(allreduce, 3, 1.0, 1.0);
  const auto rc = analyse(r);
  EXPECT_NEAR(rc.total_wait, 1.8, 1e-9);
  ASSERT_EQ(rc.causes.size(), 1u);
  EXPECT_EQ(rc.causes.front().region, (region_key{2, barrier_site, allreduce}));
  EXPECT_NEAR(rc.causes.front().caused, 1.8, 1e-9);
  EXPECT_NEAR(rc.causes.front().excess, 0.9, 1e-9);
}

// HPL's broadcasts: MPI_Iprobe until the message is there, then MPI_Recv. The recorder keeps the
// streak's first poll; the wait runs from it, less the compute between polls.
TEST(rootcause, wait_reached_by_polling_starts_at_the_first_poll) {
  auto r = start(2);
  r[0].send(1, 1, 1.0, 1.0);
  r[1].poll(6, 0.1);
  r[1].last_exit = 0.8;  // polled until 0.8 s (MPI time), then computed 0.2 s before the receive
  r[1].recv(2, 0, 1.0, 1.0);
  const auto rc = analyse(r);
  EXPECT_NEAR(rc.total_wait, 0.7, 1e-9);
  ASSERT_FALSE(rc.causes.empty());
  EXPECT_EQ(rc.causes.front().region, (region_key{0, barrier_site, 1}));
}

// 0 -> 1 -> 2: rank 0 computes 1 s and sends to rank 1, which waits 0.9 s, computes briefly and
// sends to rank 2, which waits 0.8 s. Rank 2's wait is rank 1's wait passed on: both belong to
// rank 0's compute.
TEST(rootcause, propagated_wait_through_a_chain_of_three_ranks) {
  auto r = start(3);
  r[0].send(1, 1, 1.0, 1.0);
  r[1].recv(2, 0, 0.1, 1.0);
  r[1].send(3, 2, 1.01, 1.01);
  r[2].recv(4, 1, 0.21, 1.02);
  const auto rc = analyse(r);
  EXPECT_NEAR(rc.total_wait, 0.9 + 0.8, 1e-9);
  ASSERT_FALSE(rc.causes.empty());
  const wait_cause& top = rc.causes.front();
  EXPECT_EQ(top.region, (region_key{0, barrier_site, 1}));
  EXPECT_NEAR(top.direct, 0.9, 1e-9);
  // Rank 1's delay towards rank 2 is 0.9 s of waiting and 0.11 s of compute (against rank 2's 0.21 s
  // in code rank 1 does not run): 0.9 / 1.01 of rank 2's 0.8 s goes back to rank 0.
  EXPECT_NEAR(top.caused - top.direct, 0.8 * 0.9 / 1.01, 1e-9);
  EXPECT_GT(top.caused, 0.9 * rc.total_wait);
  EXPECT_NEAR(rc.attributed, rc.total_wait, 1e-9);
  EXPECT_EQ(find(rc, {2, barrier_site, 4}), nullptr);  // the last rank caused nothing
  // Critical path: rank 2 waited for rank 1, which waited for rank 0.
  EXPECT_NEAR(rc.critical_rank[0], 1.0, 1e-9);
  EXPECT_NEAR(rc.critical_rank[1], 0.01, 1e-9);
  EXPECT_NEAR(rc.critical_rank[2], 0.0, 1e-9);
}

// Two ranks exchanging every step with the same work, a little noise either way: nothing to blame.
TEST(rootcause, balanced_trace_has_no_cause) {
  auto r = start(2);
  double t = 0;
  for (int step = 0; step < 20; ++step) {
    const double jitter = (step % 2 ? 1 : -1) * 1e-4;
    t += 0.05;
    const double t0 = t + jitter, t1 = t - jitter;
    r[0].send(10, 1, t0, t0);
    r[1].send(10, 0, t1, t1);
    const double end = std::max(t0, t1) + 1e-5;
    r[0].recv(11, 1, t0, end);
    r[1].recv(11, 0, t1, end);
    t = end;
  }
  const auto rc = analyse(r);
  const double run = 2 * t;
  EXPECT_LT(rc.total_wait, 0.01 * run);
  for (const auto& c : rc.causes) {
    EXPECT_LT(c.caused, 0.01 * run);
    EXPECT_LT(c.excess, 0.01);
  }
}

TEST(rootcause, empty_trace) {
  const auto rc = root_causes({{}, {}});
  EXPECT_EQ(rc.total_wait, 0);
  EXPECT_TRUE(rc.causes.empty());
  EXPECT_TRUE(rc.critical.empty());
}

}  // namespace
}  // namespace toru::tune::shim
