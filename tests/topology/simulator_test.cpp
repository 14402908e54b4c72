// SPDX-License-Identifier: BSD-3-Clause
#include <gtest/gtest.h>

#include "test_util.hpp"
#include "toru/topology/simulator.hpp"

using namespace toru::topology;

namespace {
constexpr double m = 1e6;
constexpr double B = 1e9;
const simulator_options no_latency{.message_startup = 0, .hop_latency = false};

double rel(double a, double b) { return std::abs(a - b) / std::max(std::abs(b), 1e-300); }
}  // namespace

TEST(simulator, phase_alone_is_its_closed_form) {
  const auto t = torus::parse("16x16x32,lat=1us");
  simulator sim(t, no_latency);
  sim.add_alltoall({0, 1, 2}, 65536);
  EXPECT_LT(rel(sim.run().makespan, alltoall_bound(t, 65536)), 1e-12);
  // With hop latency (diameter 8+8+16 hops of 1 us) and start-ups (P-1 messages).
  simulator lat(t, {.message_startup = 1e-6, .hop_latency = true});
  lat.add_alltoall({0, 1, 2}, 65536);
  EXPECT_LT(rel(lat.run().makespan, alltoall_bound(t, 65536) + 32e-6 + 8191e-6), 1e-12);
}

TEST(simulator, phases_on_disjoint_axes_overlap_and_on_shared_axes_share) {
  const auto t = torus::parse("16x16x32");
  const double ta = alltoall_bound(t, m, std::vector<int>{0, 1}), tb = alltoall_bound(t, m, std::vector<int>{2});
  simulator disjoint(t, no_latency);
  disjoint.add_alltoall({0, 1}, m, {}, "A");
  disjoint.add_alltoall({2}, m, {}, "B");
  const auto r = disjoint.run();
  EXPECT_LT(rel(r.tasks[0].finish, ta), 1e-12);
  EXPECT_LT(rel(r.tasks[1].finish, tb), 1e-12);
  simulator shared(t, no_latency);
  shared.add_alltoall({2}, m);
  shared.add_alltoall({2}, 3 * m);
  const auto s = shared.run();
  // Equal shares until the small one ends at 2*tb, then the big one alone: 4*tb in all.
  EXPECT_LT(rel(s.tasks[0].finish, 2 * tb), 1e-12);
  EXPECT_LT(rel(s.makespan, 4 * tb), 1e-12);
  simulator partial(t, no_latency);  // {1,2} and {2}: they share Z only
  partial.add_alltoall({1, 2}, m);
  partial.add_alltoall({2}, m);
  const auto p = partial.run();
  const double t12 = alltoall_bound(t, m, std::vector<int>{1, 2});  // Z-bound: 512*m*32/8/B
  EXPECT_LT(rel(p.makespan, t12 + tb), 1e-12);                      // work on Z is conserved
}

TEST(simulator, pipelined_indirect_alltoall_matches_closed_form) {
  // C chunks: A(c) in the XY planes, B(c) along Z lines; A(c+1) overlaps B(c).
  for (const char* spec : {"8x8x16", "16x16x32", "32x32x64"}) {
    const auto t = torus::parse(spec);
    const int chunks = 16;
    const double pair = 4096.0 / chunks;
    const double xy = static_cast<double>(t[0].extent) * t[1].extent, z = t[2].extent;
    const double a = alltoall_bound(t, pair * z, std::vector<int>{0, 1});  // one message per Z line
    const double b = alltoall_bound(t, pair * xy, std::vector<int>{2});
    simulator sim(t, no_latency);
    std::vector<int> prev_a, prev_b;
    for (int c = 0; c < chunks; ++c) {
      const int ta = sim.add_alltoall({0, 1}, pair * z, prev_a, "A" + std::to_string(c));
      std::vector<int> deps{ta};
      deps.insert(deps.end(), prev_b.begin(), prev_b.end());
      const int tb = sim.add_alltoall({2}, pair * xy, deps, "B" + std::to_string(c));
      prev_a = {ta};
      prev_b = {tb};
    }
    const auto r = sim.run();
    EXPECT_LT(rel(r.makespan, a + chunks * b), 1e-9) << spec;
    // Phase B alone over all chunks meets the whole all-to-all's bound.
    EXPECT_LT(rel(chunks * b, alltoall_bound(t, 4096)), 1e-12) << spec;
  }
}

TEST(simulator, latencies_far_below_the_clock_resolution_still_end) {
  // Hop latencies make phases end at times whose differences are below the spacing of doubles
  // near the current time; the run must still finish (it once spun forever here).
  const auto t = torus::parse("16x16x32,lat=1us");
  simulator sim(t, {.message_startup = 0, .hop_latency = true});
  int prev_a = -1, prev_b = -1;
  const int chunks = 16;
  for (int c = 0; c < chunks; ++c) {
    std::vector<int> after_a, after_b;
    if (prev_a >= 0) after_a.push_back(prev_a);
    prev_a = sim.add_alltoall({0, 1}, 65536.0 / chunks * 32, after_a);
    after_b.push_back(prev_a);
    if (prev_b >= 0) after_b.push_back(prev_b);
    prev_b = sim.add_alltoall({2}, 65536.0 / chunks * 256, after_b);
  }
  const double makespan = sim.run().makespan, bound = alltoall_bound(t, 65536);
  // B phases back to back (each waits for the previous one's 16-hop tail) after the first A.
  const double a = alltoall_bound(t, 65536.0 / chunks * 32, std::vector<int>{0, 1}) + 16e-6;
  EXPECT_LT(rel(makespan, a + bound + chunks * 16e-6), 1e-9);
}

TEST(simulator, explicit_alltoall_on_rings_and_2x2x2_meets_the_bound) {
  for (const char* spec : {"4", "5", "2x2x2", "6", "3x3"}) {
    const auto t = torus::parse(spec);
    simulator sim(t, no_latency);
    sim.add_messages(alltoall_pattern(t, m));
    EXPECT_LT(rel(sim.run().makespan, alltoall_bound(t, m)), 1e-9) << spec;
  }
}

TEST(simulator, explicit_alltoall_on_mesh_and_mixed_tori_meets_the_bound) {
  // Fair sharing is no optimal scheduler, but on these symmetric patterns no link ever idles
  // while it still has bytes to carry, so the makespan is the busiest link's load.
  for (const char* spec : {"2x3x4,mesh", "4[mesh]x5x3[switch]", "3[switch]x2x5[mesh,bw=3GB/s]"}) {
    const auto t = torus::parse(spec);
    simulator sim(t, no_latency);
    sim.add_messages(alltoall_pattern(t, m));
    const double makespan = sim.run().makespan, bound = alltoall_bound(t, m);
    EXPECT_LT(rel(makespan, bound), 1e-9) << spec;
  }
}

TEST(simulator, messages_latency_and_sharing) {
  const auto t = torus::parse("8,lat=1us");
  simulator one(t, {.message_startup = 2e-6, .hop_latency = true});
  one.add_messages({{0, 3, m}});
  EXPECT_LT(rel(one.run().makespan, 2e-6 + m / B + 3e-6), 1e-12);
  // Two messages on the same link: m and 3m. Equal rates until the small one ends at 2m/B.
  simulator two(t, no_latency);
  two.add_messages({{0, 1, m}}, {}, "small");
  two.add_messages({{0, 1, 3 * m}}, {}, "big");
  const auto r = two.run();
  EXPECT_LT(rel(r.tasks[0].finish, 2 * m / B), 1e-12);
  EXPECT_LT(rel(r.tasks[1].finish, 4 * m / B), 1e-12);
  // Start-ups serialize per sending node: three messages from node 0 start at 1, 2 and 3 alpha.
  simulator posts(t, {.message_startup = 1e-3, .hop_latency = false});
  posts.add_messages({{0, 1, 0}, {0, 2, 0}, {0, 7, 0}, {4, 5, 0}});
  EXPECT_LT(rel(posts.run().makespan, 3e-3), 1e-12);
}

TEST(simulator, phase_and_messages_share_links) {
  // Ring of 4: the phase loads every link with 2m; one extra message of m on link 0->1.
  // Half rates until the message ends at 2m/B, then the phase alone: 3m/B of work on that link.
  const auto t = torus::parse("4");
  simulator sim(t, no_latency);
  sim.add_alltoall({0}, m, {}, "phase");
  sim.add_messages({{0, 1, m}}, {}, "msg");
  const auto r = sim.run();
  EXPECT_LT(rel(r.tasks[1].finish, 2 * m / B), 1e-12);
  EXPECT_LT(rel(r.tasks[0].finish, 3 * m / B), 1e-12);
}

TEST(simulator, compute_resources_and_dependencies) {
  const auto t = torus::parse("4");
  simulator one_core(t, no_latency);
  one_core.add_compute("cpu", 1.0);
  one_core.add_compute("cpu", 1.0);
  EXPECT_DOUBLE_EQ(one_core.run().makespan, 2.0);
  simulator two_cores(t, no_latency);
  two_cores.set_capacity("cpu", 2);
  two_cores.add_compute("cpu", 1.0);
  two_cores.add_compute("cpu", 3.0);
  const auto r = two_cores.run();
  EXPECT_DOUBLE_EQ(r.tasks[0].finish, 1.0);  // one task uses at most one unit
  EXPECT_DOUBLE_EQ(r.tasks[1].finish, 3.0);
  simulator chain(t, no_latency);
  const int a = chain.add_compute("cpu", 1.0);
  const int b = chain.add_alltoall({0}, m, {a});
  const int c = chain.add_compute("gpu", 0.5, {b});
  const auto s = chain.run();
  EXPECT_DOUBLE_EQ(s.tasks[static_cast<std::size_t>(b)].start, 1.0);
  EXPECT_LT(rel(s.tasks[static_cast<std::size_t>(c)].finish, 1.5 + 2 * m / B), 1e-12);
  // Compute overlaps communication: different resources.
  simulator overlap(t, no_latency);
  overlap.add_compute("cpu", 1e-3);
  overlap.add_alltoall({0}, m);
  EXPECT_DOUBLE_EQ(overlap.run().makespan, std::max(1e-3, 2 * m / B));
}

TEST(simulator, invalid_input) {
  simulator sim(torus::parse("4x4"), no_latency);
  TORU_EXPECT_ERROR(sim.add_compute("cpu", 1, {0}), "after", "got 0");
  TORU_EXPECT_ERROR(sim.add_alltoall({2}, m), "got [2]");
  TORU_EXPECT_ERROR(sim.add_alltoall({}, m), "at least one axis");
  TORU_EXPECT_ERROR(sim.add_messages({{0, 16, m}}), "0..15");
  TORU_EXPECT_ERROR(sim.add_compute("", 1), "empty");
  TORU_EXPECT_ERROR(sim.add_compute("cpu", -1), "-1");
  TORU_EXPECT_ERROR(sim.set_capacity("cpu", 0), "'cpu'");
  EXPECT_EQ(sim.task_count(), 0);
  EXPECT_EQ(sim.run().makespan, 0);
}
