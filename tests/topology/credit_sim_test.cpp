// SPDX-License-Identifier: BSD-3-Clause
// The credit (HPC) packet tier against cases computed by hand: one flow (size/rate + hops x
// latency), two flows sharing a link (half the rate each), a uniform all-to-all on a ring (the
// bisection bound), and its errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "test_util.hpp"
#include "toru/core/error.hpp"
#include "toru/topology/credit_sim.hpp"
#include "toru/topology/packet_schedules.hpp"

using namespace toru::topology;

namespace {

// Buffers deep enough that credits never throttle a single stream (round trip < 1 packet time).
credit_params roomy(credit_params::routing r = credit_params::routing::dimension_order) {
  credit_params p;
  p.route = r;
  p.packet_bytes = 256;
  p.input_bytes = 8192;
  p.injection_bytes = 8192;
  return p;
}

}  // namespace

TEST(credit_sim, one_flow_takes_size_over_rate_plus_hops_times_latency) {
  // 3 hops on a ring of 7 (axis 0), then 2 more on axis 1: cut-through pipelines the packets, so
  // the hop count adds latency only. 10007 B is 40 packets, the last one partial.
  const auto t = torus::parse("7x5,bw=175MB/s,lat=100ns");
  const auto res = simulate_credit(t, one_message(0, 3 + 7 * 2, 10007), roomy());
  EXPECT_NEAR(res.seconds, 10007 / 175e6 + 5 * 100e-9, 1e-12);
  EXPECT_EQ(res.packets, 40u);
  EXPECT_DOUBLE_EQ(res.payload_bytes, 10007);
  // Adaptive routing on a single axis has one minimal path: the same time.
  const auto line = simulate_credit(t, one_message(0, 3, 10007), roomy(credit_params::routing::adaptive));
  EXPECT_NEAR(line.seconds, 10007 / 175e6 + 3 * 100e-9, 1e-12);
  // Across two axes it spreads the packets over both first hops: faster than one path can go, but
  // not faster than the two links leaving the source together.
  const auto spread = simulate_credit(t, one_message(0, 3 + 7 * 2, 10007), roomy(credit_params::routing::adaptive));
  EXPECT_LT(spread.seconds, 0.9 * res.seconds);
  EXPECT_GE(spread.seconds, 10007 / (2 * 175e6));
  // A slower second axis sets the rate; latency still adds per hop.
  const auto slow = torus::parse("7[bw=200MB/s,lat=50ns]x5[bw=100MB/s,lat=300ns]");
  const auto res2 = simulate_credit(slow, one_message(0, 1 + 7 * 1, 25600), roomy());
  // cut-through: the slow link starts streaming when the first head arrives (50 ns), and the fast
  // link keeps its buffer full from then on
  EXPECT_NEAR(res2.seconds, 50e-9 + 25600 / 100e6 + 300e-9, 1e-12);
}

TEST(credit_sim, two_flows_sharing_a_link_get_half_the_rate_each) {
  // Ring of 5: 0 -> 2 goes 0->1->2 and 1 -> 2 goes 1->2; both cross link 1->2. Alone each takes
  // S/B; together the shared link carries 2S, and round-robin arbitration keeps both flowing at
  // B/2 so they finish together, within a packet.
  const auto t = torus::parse("5,bw=100MB/s,lat=100ns");
  const double S = 256 * 200;
  packet_schedule s;
  const int sink = s.add_op(2);
  const int a = s.add_op(0), b = s.add_op(1);
  s.add_message(0, 2, S, a, sink);
  s.add_message(1, 2, S, b, sink);
  const auto r = simulate_credit(t, s, roomy());
  const double packet = 256 / 100e6;
  EXPECT_NEAR(r.seconds, 2 * S / 100e6, 2 * packet);
  EXPECT_NEAR(r.op_finish[static_cast<std::size_t>(a)], 2 * S / 100e6, 2 * packet);
  EXPECT_NEAR(r.op_finish[static_cast<std::size_t>(b)], 2 * S / 100e6, 2 * packet);
  EXPECT_NEAR(r.max_link_utilisation, 1.0, 0.01);
}

TEST(credit_sim, uniform_alltoall_on_a_ring_meets_the_bisection_bound) {
  // Ring of 8, m bytes per pair, shortest routes (the 4-hop ties split by the parity rule): a node
  // sends 1+2+3 hops each way plus 4, 16 m byte-hops; 8 nodes over 16 directed links is 8 m per
  // link: T = 8 m / B. Ring of 7: 2(1+2+3) = 12 m byte-hops per node, 14 links: 6 m / B. Round
  // robin and longest-queue-first keep it saturated. Age-based arbitration ends 5.8% (ring of 8)
  // and 4.2% (ring of 7) above the bound, past this allowance, so it is not asserted here.
  using arb = credit_params::arbitration;
  for (const arb a : {arb::round_robin, arb::longest_queue})
    for (const auto& [spec, per_link] :
         {std::pair{"8,bw=175MB/s,lat=100ns", 8.0}, std::pair{"7,bw=175MB/s,lat=100ns", 6.0}}) {
      const auto t = torus::parse(spec);
      const double m = 256 * 24;
      credit_params p = roomy();
      p.arbitrate = a;
      const auto r = simulate_credit(t, alltoall_schedule(t, packet_schedule_kind::linear, m), p);
      const double bound = per_link * m / 175e6;
      EXPECT_GE(r.seconds, bound) << spec << " arbitration " << static_cast<int>(a);
      const auto n = static_cast<double>(t.size());
      EXPECT_DOUBLE_EQ(r.payload_bytes, m * n * (n - 1)) << spec;  // every byte delivered
      // a packet's time plus the longest route's latency to drain; the links stay saturated
      EXPECT_LE(r.seconds, bound * 1.03 + 4 * 100e-9) << spec << " arbitration " << static_cast<int>(a);
    }
}

TEST(credit_sim, small_buffers_throttle_a_stream_to_the_credit_loop) {
  // Two packets of buffer and a long link: a packet every credit round trip (two latencies plus
  // the packet time), not the link rate.
  const auto t = torus::parse("3,bw=100MB/s,lat=10us");
  credit_params p = roomy();
  p.input_bytes = 512;
  p.vcs = 1;
  const double S = 256 * 100;
  const auto r = simulate_credit(t, one_message(0, 1, S), p);
  EXPECT_GT(r.seconds, 3 * S / 100e6);  // 100 packets at 2.56 us each would be 256 us
}

TEST(credit_sim, errors_name_the_parameter) {
  const auto t = torus::parse("4x4");
  credit_params p;
  p.input_bytes = 300;  // under two packets
  try {
    simulate_credit(t, one_message(0, 5, 1000), p);
    FAIL();
  } catch (const toru::error& e) {
    EXPECT_NE(std::string(e.what()).find("input_bytes"), std::string::npos) << e.what();
  }
  packet_schedule bad;
  bad.add_op(0, {1});
  bad.add_op(0);
  EXPECT_THROW(simulate_credit(t, bad, {}), toru::error);
  EXPECT_THROW(simulate_credit(torus::parse("4[switch]x4"), one_message(0, 5, 1000), {}), toru::error);
}
