// SPDX-License-Identifier: BSD-3-Clause
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include <fmt/format.h>

#include "test_util.hpp"
#include "toru/topology/network_model.hpp"

using namespace toru::topology;

namespace {
constexpr double m = 1000;  // bytes per pair in the hand-computed cases
constexpr double B = 1e9;

// Every directed link of `axis` that carries anything carries `expected`; returns how many do.
int expect_uniform(const torus& t, const load_map& l, int axis, double expected) {
  int used = 0;
  for (std::int64_t n = 0; n < t.size(); ++n)
    for (int dir : {+1, -1}) {
      const double b = l.bytes[static_cast<std::size_t>(link_index(t, n, axis, dir))];
      if (b == 0) continue;
      ++used;
      EXPECT_NEAR(b, expected, 1e-9 * expected) << "node " << n << " axis " << axis << " dir " << dir;
    }
  return used;
}
}  // namespace

TEST(routes, ring_and_hops) {
  const auto t = torus::parse("8");
  EXPECT_EQ(hop_count(t, 0, 3), 3);
  EXPECT_EQ(hop_count(t, 0, 5), 3);  // the short way round
  EXPECT_EQ(hop_count(t, 6, 1), 3);
  EXPECT_EQ(hop_count(t, 0, 4), 4);
  EXPECT_EQ(diameter(t), 4);
  const auto tie = routes(t, 1, 5);
  ASSERT_EQ(tie.size(), 2u);
  EXPECT_EQ(tie[0].share, 0.5);
  EXPECT_EQ(tie[0].steps.front().dir, 1);
  EXPECT_EQ(tie[1].steps.front().dir, -1);
  const auto p = route(t, 6, 1);  // 6 -> 7 -> 0 -> 1
  ASSERT_EQ(p.steps.size(), 3u);
  EXPECT_EQ(p.steps[0].from, 6);
  EXPECT_EQ(p.steps[1].from, 7);
  EXPECT_EQ(p.steps[2].to, 1);
  EXPECT_EQ(diameter(torus::parse("5x4[mesh]x3[switch]x2")), 2 + 3 + 1 + 1);
  EXPECT_EQ(hop_count(torus::parse("6[mesh]"), 5, 0), 5);
  TORU_EXPECT_ERROR(hop_count(t, 0, 8), "hop_count dst", "got 8");
}

TEST(routes, dimension_order_paths_are_connected_and_minimal) {
  std::mt19937 rng(3);
  for (const char* spec : {"4x6x5", "2x3[mesh]x4", "3[switch]x4x2[mesh]", "8x8", "1x7x1"}) {
    const auto t = torus::parse(spec);
    for (int trial = 0; trial < 200; ++trial) {
      const std::int64_t a = static_cast<std::int64_t>(rng() % static_cast<unsigned>(t.size()));
      const std::int64_t b = static_cast<std::int64_t>(rng() % static_cast<unsigned>(t.size()));
      double share = 0;
      for (const auto& p : routes(t, a, b)) {
        share += p.share;
        EXPECT_EQ(static_cast<int>(p.steps.size()), hop_count(t, a, b));
        std::int64_t at = a;
        int last_axis = 0;
        for (const auto& s : p.steps) {
          EXPECT_EQ(s.from, at);
          EXPECT_GE(s.axis, last_axis);  // dimension order
          last_axis = s.axis;
          at = s.to;
        }
        EXPECT_EQ(at, b);
      }
      EXPECT_DOUBLE_EQ(share, 1.0);
    }
  }
}

TEST(link_loads, ring_of_4) {
  const auto t = torus::parse("4");
  const auto pat = alltoall_pattern(t, m);
  EXPECT_EQ(pat.size(), 12u);
  const auto l = link_loads(t, pat);
  // Link x->x+1 carries x->x+1 (m), half of x->x+2 and half of x-1->x+1: 2m; same the other way.
  EXPECT_EQ(expect_uniform(t, l, 0, 2 * m), 8);
  EXPECT_DOUBLE_EQ(alltoall_bound(t, m), 2 * m / B);
  EXPECT_DOUBLE_EQ(l.seconds, 2 * m / B);
}

TEST(link_loads, ring_of_5) {
  const auto t = torus::parse("5");
  const auto l = link_loads(t, alltoall_pattern(t, m));
  // Link x->x+1 carries x->x+1, x->x+2 and x-1->x+1: 3m.
  EXPECT_EQ(expect_uniform(t, l, 0, 3 * m), 10);
  EXPECT_DOUBLE_EQ(alltoall_bound(t, m), 3 * m / B);
  EXPECT_DOUBLE_EQ(effective_extent(t[0]), 24.0 / 5);
}

TEST(link_loads, torus_2x2x2_has_one_link_per_pair) {
  const auto t = torus::parse("2x2x2");
  const auto l = link_loads(t, alltoall_pattern(t, m));
  // Each axis: every node's one outgoing link carries the 4 messages that cross that axis there.
  for (int a = 0; a < 3; ++a) EXPECT_EQ(expect_uniform(t, l, a, 4 * m), 8) << "axis " << a;
  EXPECT_DOUBLE_EQ(alltoall_bound(t, m), 4 * m / B);  // twice P*m*L/(8B) = 2m/B: one link, not two
  EXPECT_DOUBLE_EQ(alltoall_bound(torus::parse("2x2x2[mesh]"), m), 4 * m / B);
}

TEST(link_loads, mesh_2x3x4) {
  const auto t = torus::parse("2x3x4,mesh");
  const auto l = link_loads(t, alltoall_pattern(t, m));
  // Axis 0 (2 nodes): 12 pairs cross each way per link... the busiest link of each axis, by hand:
  // axis 0: 24 nodes * m / 2 = 12m; axis 1 (3): the middle cuts carry 1*2 line pairs x 8 = 16m;
  // axis 2 (4): the middle cut carries 2*2 line pairs x 6 = 24m.
  EXPECT_DOUBLE_EQ(l.axis_max[0], 12 * m);
  EXPECT_DOUBLE_EQ(l.axis_max[1], 16 * m);
  EXPECT_DOUBLE_EQ(l.axis_max[2], 24 * m);
  EXPECT_EQ(l.bottleneck_axis, 2);
  const auto closed = alltoall_loads(t, m);
  for (int a = 0; a < 3; ++a)
    EXPECT_DOUBLE_EQ(closed.link_bytes[static_cast<std::size_t>(a)], l.axis_max[static_cast<std::size_t>(a)]);
  EXPECT_DOUBLE_EQ(alltoall_bound(t, m), 24 * m / B);
  // An end link of axis 2 carries only the pairs with one end at the edge: 1*3 line pairs x 6.
  EXPECT_DOUBLE_EQ(l.bytes[static_cast<std::size_t>(link_index(t, 0, 2, +1))], 18 * m);
}

TEST(link_loads, switch_axis) {
  const auto t = torus::parse("4[switch]");
  const auto l = link_loads(t, alltoall_pattern(t, m));
  EXPECT_EQ(expect_uniform(t, l, 0, 3 * m), 8);  // 4 up ports and 4 down ports, 3 messages each
  EXPECT_DOUBLE_EQ(alltoall_bound(t, m), 3 * m / B);
}

TEST(link_loads, closed_form_matches_explicit_on_random_tori) {
  std::mt19937 rng(5);
  const char* kinds[] = {"torus", "mesh", "switch"};
  for (int trial = 0; trial < 60; ++trial) {
    std::string spec;
    const int nd = 1 + static_cast<int>(rng() % 3);
    for (int i = 0; i < nd; ++i) {
      spec += (i ? "x" : "") + std::to_string(1 + rng() % 6);
      spec += fmt::format("[{},bw={}GB/s]", kinds[rng() % 3], 1 + rng() % 4);
    }
    const auto t = torus::parse(spec);
    std::vector<int> sub;
    for (int i = 0; i < nd; ++i)
      if (rng() % 2) sub.push_back(i);
    const double bytes = 1 + rng() % 5000;
    const auto l = link_loads(t, alltoall_pattern(t, bytes, sub));
    const auto c = alltoall_loads(t, bytes, sub);
    for (int a = 0; a < nd; ++a)
      EXPECT_NEAR(c.link_bytes[static_cast<std::size_t>(a)], l.axis_max[static_cast<std::size_t>(a)],
                  1e-9 * l.axis_max[static_cast<std::size_t>(a)])
          << spec << " axis " << a << " sub " << sub.size();
    EXPECT_NEAR(c.bound_seconds, l.seconds, 1e-9 * l.seconds) << spec;
    if (c.bound_seconds > 0) {
      EXPECT_EQ(c.bottleneck_axis, l.bottleneck_axis) << spec;
    }
  }
}

TEST(alltoall_bound, per_axis_bandwidth_and_reference_values) {
  // T_min = P*m*L/(8B): 16x16x32, 64 KiB per pair, 1 GB/s.
  const auto t = torus::parse("16x16x32");
  EXPECT_DOUBLE_EQ(alltoall_bound(t, 65536), 8192.0 * 65536 * 32 / (8 * 1e9));
  const auto a = alltoall_loads(t, 65536);
  EXPECT_EQ(a.bottleneck_axis, 2);
  EXPECT_DOUBLE_EQ(a.seconds[0], a.seconds[2] / 2);  // the short axes are busy half the time
  // Per-axis bandwidths: a short slow axis can be the bottleneck.
  const auto s = torus::parse("4[bw=1GB/s]x8[bw=4GB/s]");
  const auto sa = alltoall_loads(s, m);
  EXPECT_DOUBLE_EQ(sa.seconds[0], 32 * m * 4 / 8 / 1e9);
  EXPECT_DOUBLE_EQ(sa.seconds[1], 32 * m * 8 / 8 / 4e9);
  EXPECT_EQ(sa.bottleneck_axis, 0);
  // Sub-torus: the plane orthogonal to Z: 256 nodes, X and Y only.
  const auto plane = alltoall_loads(t, m, std::vector<int>{0, 1});
  EXPECT_EQ(plane.group_size, 256);
  EXPECT_DOUBLE_EQ(plane.bound_seconds, 256 * m * 16 / 8 / 1e9);
  EXPECT_EQ(plane.seconds[2], 0);
  // Odd extents and extent 1.
  EXPECT_DOUBLE_EQ(alltoall_bound(torus::parse("7"), m), 7 * m * (48.0 / 7) / 8 / 1e9);
  EXPECT_EQ(alltoall_bound(torus::parse("1"), m), 0);
  TORU_EXPECT_ERROR(alltoall_bound(t, -1), "got -1");
  TORU_EXPECT_ERROR(alltoall_bound(t, m, std::vector<int>{3}), "got [3]");
}

TEST(alltoall_bound, big_torus_closed_form) {
  // 65 536 nodes: explicit routing would need 4e9 flows; the closed form is O(ndims).
  const auto t = torus::parse("32x32x64");
  EXPECT_DOUBLE_EQ(alltoall_bound(t, 65536), 65536.0 * 65536 * 64 / 8 / 1e9);
  EXPECT_DOUBLE_EQ(alltoall_bound(t, 65536, std::vector<int>{0, 1}), 1024.0 * 65536 * 32 / 8 / 1e9);
}

TEST(alltoall_bound, latency_floors) {
  const auto t = torus::parse("4x8,lat=1us");
  EXPECT_DOUBLE_EQ(alltoall_latency_direct(t, 2e-6), 31 * 2e-6 + (2 + 4) * 1e-6);
  EXPECT_DOUBLE_EQ(alltoall_latency_indirect(t, 2e-6), (3 + 7) * 2e-6 + (2 + 4) * 1e-6);
}
