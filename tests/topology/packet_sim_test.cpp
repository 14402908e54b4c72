// SPDX-License-Identifier: BSD-3-Clause
// The packet engine on cases small enough to compute by hand, the schedules' shapes, Open MPI's
// table, the testbed's tie rule, and errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <vector>

#include "test_util.hpp"
#include "toru/core/error.hpp"
#include "toru/topology/fitted_model.hpp"
#include "toru/topology/network_model.hpp"
#include "toru/topology/packet_schedules.hpp"
#include "toru/topology/packet_sim.hpp"

using namespace toru::topology;

namespace {

// A deterministic network: credit flow control, no headers, no software costs.
packet_params bare_credit() {
  packet_params p;
  p.mode = packet_params::transport::credit;
  p.header = 0;
  p.host_delay = 0;
  p.post_overhead = 0;
  p.mss = 1000;
  p.eager_limit = 1e12;  // no rendezvous
  p.input_bytes = 64000;
  p.output_bytes = 64000;
  p.injection_bytes = 64000;
  return p;
}

}  // namespace

TEST(packet_sim, one_link_one_message_is_latency_plus_size_over_bandwidth) {
  // A ring of 2 is one link each way; 37 packets of 1000 B at 1 MB/s, 10 us of flight.
  const auto t = torus::parse("2[bw=1MB/s,lat=10us]");
  const auto r = simulate_packets(t, one_message(0, 1, 37000), bare_credit());
  EXPECT_NEAR(r.seconds, 10e-6 + 37000 / 1e6, 1e-12);
  EXPECT_EQ(r.packets, 37u);
  EXPECT_EQ(r.drops, 0u);
  // A partial last packet, and two hops on a ring of 5: the second link starts when the first
  // packet (1000 B) has crossed the first one, then carries all 2500 B back to back.
  const auto t5 = torus::parse("5[bw=1MB/s,lat=10us]");
  const auto r5 = simulate_packets(t5, one_message(0, 2, 2500), bare_credit());
  EXPECT_NEAR(r5.seconds, 1000 / 1e6 + 10e-6 + 2500 / 1e6 + 10e-6, 1e-12);
}

TEST(packet_sim, two_flows_sharing_a_link_take_twice_as_long) {
  // Ring of 5: 0 -> 2 goes 0->1->2, 1 -> 2 goes 1->2; both use link 1->2 (1 MB/s).
  const auto t = torus::parse("5[bw=1MB/s,lat=0us]");
  packet_schedule s;
  const int a = s.add_op(0), b = s.add_op(1), c = s.add_op(2);
  s.add_message(0, 2, 50000, a, c);
  s.add_message(1, 2, 50000, b, c);
  const auto r = simulate_packets(t, s, bare_credit());
  // 100 packets cross link 1->2 back to back once the first has arrived from 0 (1 ms).
  EXPECT_GE(r.seconds, 0.1 - 1e-12);
  EXPECT_LE(r.seconds, 0.1 + 1e-3 + 1e-12);
  EXPECT_NEAR(r.max_link_utilisation, 0.1 / r.seconds, 1e-9);
}

TEST(packet_sim, credit_stall_with_a_one_packet_buffer) {
  // The receiver's input buffer holds one packet: every packet waits for the previous one's credit,
  // which comes back one latency after it arrived. Packet k starts at k (s + 2 lat), s = 1 ms.
  auto p = bare_credit();
  p.input_bytes = 1000;
  const auto t = torus::parse("2[bw=1MB/s,lat=100us]");
  const int n = 20;
  const auto r = simulate_packets(t, one_message(0, 1, n * 1000.0), p);
  EXPECT_NEAR(r.seconds, (n - 1) * (1e-3 + 2 * 100e-6) + 1e-3 + 100e-6, 1e-12);
  // With room for the whole window in flight there is no stall.
  p.input_bytes = 4000;
  EXPECT_NEAR(simulate_packets(t, one_message(0, 1, n * 1000.0), p).seconds, n * 1e-3 + 100e-6, 1e-12);
}

TEST(packet_sim, rendezvous_adds_a_control_round_trip) {
  auto p = bare_credit();
  p.eager_limit = 5000;
  p.control_bytes = 1000;
  const auto t = torus::parse("2[bw=1MB/s,lat=100us]");
  // eager part (5 ms + lat), control back (1 ms + lat), rest (5 ms + lat)
  EXPECT_NEAR(simulate_packets(t, one_message(0, 1, 10000), p).seconds, 11e-3 + 3 * 100e-6, 1e-12);
}

TEST(packet_sim, tcp_single_flow_fills_its_link_and_drops_recover) {
  const auto t = torus::parse("4[bw=10Mb/s,lat=1us]");
  packet_params p;
  p.tbf_burst = 1514;
  const double m = 1 << 20;
  const auto r = simulate_packets(t, one_message(0, 1, m), p);
  const double ideal = m * (1 + p.header / p.mss) / 1.25e6;
  EXPECT_GT(r.seconds, ideal);
  EXPECT_LT(r.seconds, 1.05 * ideal);
  // Six flows into one node through one link with a 10-packet queue: losses, all recovered.
  p.queue_bytes = 10 * 1514;
  packet_schedule s;
  const int sink = s.add_op(2);
  for (int src : {0, 1, 3}) {
    const int o = s.add_op(src);
    s.add_message(src, 2, 300000, o, sink);
  }
  const auto t8 = torus::parse("8[bw=10Mb/s]");
  const auto q = simulate_packets(t8, s, p);
  EXPECT_GT(q.drops, 0u);
  EXPECT_GE(q.retransmits, q.drops);
  EXPECT_NEAR(q.payload_bytes, 900000, 1e-6);
  // Both senders deliver every byte, no faster than the busier of node 2's two links allows (nodes
  // 0 and 1 arrive through node 1: 600 kB of payload and headers at 10 Mb/s).
  const double link_bound = 600000 * (1 + p.header / p.mss) / 1.25e6;
  for (auto cc : {packet_params::congestion_control::reno, packet_params::congestion_control::bbr}) {
    p.congestion = cc;
    const auto c = simulate_packets(t8, s, p);
    EXPECT_NEAR(c.payload_bytes, 900000, 1e-6) << static_cast<int>(cc);
    EXPECT_GE(c.retransmits, c.drops) << static_cast<int>(cc);
    EXPECT_GT(c.seconds, link_bound) << static_cast<int>(cc);
  }
}

// Linux refuses a segment at a full local qdisc; the connection retries at its next ACK or after
// an RTO-long probe timer. Waiting for room instead (local_drop = false) never counts a refusal.
TEST(packet_sim, local_drop_stalls_and_recovers) {
  const auto t = torus::parse("4[bw=10Mb/s]");
  packet_schedule s;
  const int o = s.add_op(0), sink = s.add_op(1);
  for (int k = 0; k < 4; ++k) s.add_message(0, 1, 200000, o, sink);
  packet_params p;
  p.queue_bytes = 4 * 1514;
  p.tbf_burst = 1514;
  const auto r = simulate_packets(t, s, p);
  EXPECT_GT(r.local_drops, 0u);
  EXPECT_NEAR(r.payload_bytes, 800000, 1e-6);
  p.local_drop = false;
  const auto w = simulate_packets(t, s, p);
  EXPECT_EQ(w.local_drops, 0u);
  EXPECT_NEAR(w.payload_bytes, 800000, 1e-6);
  EXPECT_LE(w.seconds, r.seconds);
}

// Ranks sharing one core: a rank acts only in its turn. Two ranks on one core with 10 ms turns,
// an eager message 0 -> 1 posted at t = 0: rank 1's second op (no messages) starts in its next turn.
TEST(packet_sim, host_cores_delay_actions_to_the_rank_turn) {
  const auto t = torus::parse("2[bw=10Mb/s,lat=1us]");
  packet_schedule s;
  const int a = s.add_op(0), b = s.add_op(1);
  s.add_message(0, 1, 1000, a, b);
  s.add_op(1, {b});
  packet_params p;
  p.host_delay = 0;
  p.post_overhead = 0;
  const double alone = simulate_packets(t, s, p).seconds;
  p.host_cores = 1;
  p.host_slice = 0.01;
  const double shared = simulate_packets(t, s, p).seconds;
  EXPECT_LT(alone, 0.01);
  // rank 1's turns are [0.01, 0.02), [0.03, 0.04), ...: the second op starts at 0.01
  EXPECT_NEAR(shared, 0.01, 1e-9);
}

// A warm repetition (connections already open, congestion state kept) is never slower to start
// than the cold first one for one long flow, and the first repetition equals a single run.
TEST(packet_sim, repetitions_report_the_last) {
  const auto t = torus::parse("4[bw=10Mb/s]");
  const auto s = one_message(0, 2, 300000);
  packet_params p;
  const auto once = simulate_packets(t, s, p);
  p.repetitions = 3;
  const auto three = simulate_packets(t, s, p);
  EXPECT_NEAR(three.first_seconds, once.seconds + p.host_delay, 1e-9);  // the barrier op starts host_delay later
  EXPECT_GT(three.seconds, 0);
  EXPECT_LE(three.seconds, 1.02 * once.seconds);
  EXPECT_NEAR(three.payload_bytes, 3 * 300000, 1e-6);
}

TEST(packet_sim, testbed_tie_rule_and_links) {
  const auto t = torus::parse("4x2");
  // Half way round the ring of 4: + from even coordinates, - from odd ones.
  EXPECT_EQ(packet_next_link(t, 0, 2), 0 * 4 + 0);  // node 0, axis 0, +
  EXPECT_EQ(packet_next_link(t, 1, 3), 1 * 4 + 1);  // node 1, axis 0, -
  EXPECT_EQ(packet_next_link(t, 0, 3), 0 * 4 + 1);  // distance 1 the short way: -
  // Ring of 2 on axis 1: + from coordinate 0, - from coordinate 1; dimension order: X first.
  EXPECT_EQ(packet_next_link(t, 0, 4), 0 * 4 + 2);
  EXPECT_EQ(packet_next_link(t, 4, 0), 4 * 4 + 3);
  EXPECT_EQ(packet_next_link(t, 4, 1), 4 * 4 + 0);
  EXPECT_EQ(packet_next_link(t, 5, 5), -1);
}

TEST(packet_schedules, ompi_41_tuned_choices) {
  EXPECT_EQ(ompi_tuned_alltoall(16, 65536), packet_schedule_kind::linear);   // linear_sync, max_requests 0
  EXPECT_EQ(ompi_tuned_alltoall(16, 262144), packet_schedule_kind::linear);  // basic linear
  EXPECT_EQ(ompi_tuned_alltoall(16, 100), packet_schedule_kind::bruck);
  EXPECT_EQ(ompi_tuned_alltoall(128, 1 << 20), packet_schedule_kind::pairwise);
  EXPECT_EQ(ompi_tuned_alltoall(2, 1 << 20), packet_schedule_kind::pairwise);
  EXPECT_EQ(ompi_tuned_alltoall(8192, 1000), packet_schedule_kind::bruck);
  EXPECT_EQ(ompi_tuned_alltoall(8192, 1 << 20), packet_schedule_kind::linear);
}

TEST(packet_schedules, shapes) {
  const auto t = torus::parse("2x3x5");  // 30 nodes, longest axis Z (5), plane of 6
  const int P = 30;
  const auto lin = alltoall_schedule(t, packet_schedule_kind::linear, 100);
  EXPECT_EQ(lin.ops.size(), 30u);
  EXPECT_EQ(lin.messages.size(), static_cast<std::size_t>(P * (P - 1)));
  const auto pw = alltoall_schedule(t, packet_schedule_kind::pairwise, 100);
  EXPECT_EQ(pw.ops.size(), static_cast<std::size_t>(P * (P - 1)));
  const auto br = alltoall_schedule(t, packet_schedule_kind::bruck, 100);
  EXPECT_EQ(br.ops.size(), static_cast<std::size_t>(P * 5));  // ceil(log2 30) steps
  double moved = 0;
  for (const auto& m : br.messages) moved += m.bytes;
  EXPECT_DOUBLE_EQ(moved, 100.0 * P * (15 + 14 + 14 + 14 + 14));  // blocks with bit k set, k = 1..16
  const auto ind = alltoall_schedule(t, packet_schedule_kind::indirect, 120, {.chunks = 4});
  EXPECT_EQ(ind.ops.size(), static_cast<std::size_t>(2 * 4 * P));
  double a = 0, b = 0;
  for (const auto& m : ind.messages) (ind.ops[static_cast<std::size_t>(m.send_op)].label[0] == 'A' ? a : b) += m.bytes;
  EXPECT_DOUBLE_EQ(a, 120.0 * P * P);  // every block once through its plane (self included)
  EXPECT_DOUBLE_EQ(b, 120.0 * P * P);  // and once along its line
  // Every schedule runs to completion and moves what it should.
  packet_params p;
  p.tbf_burst = 1514;
  for (auto k : {packet_schedule_kind::linear, packet_schedule_kind::pairwise, packet_schedule_kind::bruck,
                 packet_schedule_kind::indirect}) {
    const auto s = alltoall_schedule(torus::parse("3x4"), k, 3000, {.chunks = 3});
    const auto r = simulate_packets(torus::parse("3x4"), s, p);
    EXPECT_GT(r.seconds, alltoall_bound(torus::parse("3x4"), 3000)) << to_string(k);
  }
}

TEST(packet_sim, errors) {
  EXPECT_THROW(simulate_packets(torus::parse("4[switch]x2"), one_message(0, 1, 10)), toru::error);
  packet_schedule bad;
  bad.add_op(0, {1});
  bad.add_op(1);
  EXPECT_THROW(simulate_packets(torus::parse("2"), bad), toru::error);
  packet_schedule wrong_node;
  const int a = wrong_node.add_op(0), b = wrong_node.add_op(0);
  wrong_node.add_message(0, 1, 10, a, b);
  EXPECT_THROW(simulate_packets(torus::parse("2"), wrong_node), toru::error);
  EXPECT_THROW(alltoall_schedule(torus::parse("2"), packet_schedule_kind::indirect, 10, {.chunks = 0}), toru::error);
  EXPECT_THROW(packet_schedule_kind_from_string("ring"), toru::error);
}

TEST(fitted_model, pairwise_step_bound_and_fast_tier) {
  // 2x2x4 at the testbed's rates: hand sum over the 15 shifts = 1.875 T_min (docs/topology.md).
  const auto t = torus::parse("2[bw=20Mb/s]x2[bw=20Mb/s]x4[bw=10Mb/s]");
  EXPECT_NEAR(pairwise_step_bound(t, 262144) / alltoall_bound(t, 262144), 1.875, 1e-12);
  // On a ring of 4 every shift loads one link with one block at most twice: s=1,3: 1, s=2: 1 (ties split)
  const auto r4 = torus::parse("4[bw=1MB/s]");
  EXPECT_NEAR(pairwise_step_bound(r4, 1e6), 3.0, 1e-12);
  for (double m : {4096.0, 65536.0, 1048576.0}) {
    const double e = fitted_efficiency(packet_schedule_kind::indirect, m, 1024);
    EXPECT_GT(e, 0);
    EXPECT_LE(e, 1);
    EXPECT_NEAR(fitted_bandwidth_seconds(torus::parse("32x32x64"), packet_schedule_kind::indirect, m),
                alltoall_bound(torus::parse("32x32x64"), m) / e, 1e-9);
  }
  // At 10 MB/s links 1 MiB blocks are bandwidth-bound; 8-byte blocks sit on the latency floor
  // (64 chunks x (2 host delays of 100 us + 1086 posts of 10 us) + 16+16+32 hops of 1 us).
  const auto slow = torus::parse("32x32x64,bw=10MB/s");
  EXPECT_DOUBLE_EQ(fitted_alltoall_seconds(slow, packet_schedule_kind::indirect, 1 << 20),
                   fitted_bandwidth_seconds(slow, packet_schedule_kind::indirect, 1 << 20));
  EXPECT_NEAR(fitted_alltoall_seconds(slow, packet_schedule_kind::indirect, 8), 64 * (200e-6 + 1086 * 10e-6) + 64e-6,
              1e-9);
  EXPECT_THROW(pairwise_step_bound(torus::parse("32x32x64"), 1), toru::error);
}

// Open MPI's tcp BTL: one connection per interface, ob1 splitting a rendezvous message's rest over
// them (mca_pml_ob1_calc_weighted_length). On one lossless link the split shows in the segment
// count: 1 MiB = a 65522-byte first part (46 segments of 1448 B), then 983054 bytes as 679
// segments on one connection or as 3 x 245763 + 245765 bytes (4 x 170 segments) on four; plus
// the 64-byte control message back.
TEST(packet_sim, ob1_splits_the_rendezvous_rest_over_the_btl_connections) {
  const auto t = torus::parse("2[bw=10Mb/s]");
  packet_params p;
  p.tbf_burst = 1514;
  p.queue_bytes = 1e8;  // no drops: only the split changes the count
  const auto s = one_message(0, 1, 1048576);
  const auto one = simulate_packets(t, s, p);
  EXPECT_EQ(one.packets, 46u + 679u + 1u);
  p.connections_per_peer = 4;
  const auto four = simulate_packets(t, s, p);
  EXPECT_EQ(four.packets, 46u + 680u + 1u);
  EXPECT_NEAR(four.payload_bytes, 1048576, 1e-6);
  EXPECT_NEAR(four.seconds, one.seconds, 0.05 * one.seconds);  // the same link carries the same bytes
  // At most stripe_connections parts, and a rest within the eager limit stays in one part.
  p.stripe_connections = 1;
  EXPECT_EQ(simulate_packets(t, s, p).packets, 46u + 679u + 1u);
  p.stripe_connections = 4;
  EXPECT_EQ(simulate_packets(t, one_message(0, 1, 65536 + 100), p).packets, 46u + 1u + 1u);
  // 0: one connection per torus link of the node, which on a ring of 2 is one.
  p.connections_per_peer = 0;
  EXPECT_EQ(simulate_packets(t, s, p).seconds, one.seconds);
  p.connections_per_peer = -1;
  EXPECT_THROW(simulate_packets(t, s, p), toru::error);
  p.connections_per_peer = 1;
  p.stripe_connections = 0;
  EXPECT_THROW(simulate_packets(t, s, p), toru::error);
}

// The Linux mechanisms that are switches (docs/topology.md): each still runs a lossy all-to-all to
// completion with every byte delivered, and changes the result only where it acts.
TEST(packet_sim, linux_switches_run_lossy_alltoalls_to_completion) {
  const auto t = torus::parse("2[bw=20Mb/s]x2[bw=20Mb/s]x4[bw=10Mb/s]");
  const auto s = alltoall_schedule(t, packet_schedule_kind::linear, 262144);
  packet_params base;
  const auto r0 = simulate_packets(t, s, base);
  for (int variant = 0; variant < 6; ++variant) {
    packet_params p;
    p.connections_per_peer = variant == 0 ? 0 : 1;
    p.gso = variant == 1;
    p.tail_loss_probe = variant == 2;
    p.bbr_write_state = variant == 3;
    p.delayed_ack = variant == 4;
    p.small_queues = variant == 5;
    const auto r = simulate_packets(t, s, p);
    EXPECT_NEAR(r.payload_bytes, 16.0 * 15 * 262144, 1e-3) << variant;
    EXPECT_GT(r.seconds, alltoall_bound(t, 262144)) << variant;
    EXPECT_NE(r.seconds, r0.seconds) << variant;  // the switch is wired to something that acts here
  }
}

// Linux's delayed ACK: one ACK per two full segments once the connection leaves quick-ACK mode,
// so a link that carries data one way and the ACKs of the other way's data spends half as much on
// ACKs. Two 1 MiB messages crossing one link pair at 10 Mbit/s, no loss (a large tbf bucket).
TEST(packet_sim, delayed_ack_halves_the_acks_on_a_shared_link) {
  const auto t = torus::parse("2[bw=10Mb/s,lat=1us]");
  packet_schedule s;
  const int a = s.add_op(0), b = s.add_op(1);
  const double m = 1 << 20;
  s.add_message(0, 1, m, a, b);
  s.add_message(1, 0, m, b, a);
  packet_params p;
  p.eager_limit = 1e12;  // one stream per direction, no rendezvous
  p.queue_bytes = 4 << 20;
  const auto every = simulate_packets(t, s, p);
  p.delayed_ack = true;
  const auto delayed = simulate_packets(t, s, p);
  ASSERT_EQ(every.drops + delayed.drops, 0u);
  const auto segments = static_cast<std::uint64_t>(2 * std::ceil(m / p.mss));  // 725 per direction
  EXPECT_EQ(every.packets, segments);
  EXPECT_EQ(every.acks, segments);
  EXPECT_EQ(delayed.packets, segments);
  // 16 quick ACKs per connection, then one per two segments (+1 for an odd tail)
  EXPECT_GE(delayed.acks, segments / 2);
  EXPECT_LE(delayed.acks, segments / 2 + 2 * (p.quickacks / 2 + 1));
  // Each direction's wire time: data plus the other direction's ACKs.
  const double per_seg = (p.mss + p.header) * 8 / 10e6, ack = p.ack_bytes * 8 / 10e6;
  const double n = std::ceil(m / p.mss);
  EXPECT_NEAR(every.seconds, n * (per_seg + ack), 0.005 * every.seconds);
  EXPECT_NEAR(delayed.seconds, n * (per_seg + ack / 2), 0.005 * delayed.seconds);
  EXPECT_LT(delayed.seconds, every.seconds);
  // Without quick ACKs: three full segments get one ACK at the second and one from the 40 ms timer
  // for the third, before the sender's 200 ms RTO would resend it (a missing timer shows as a
  // fourth, retransmitted segment); two full segments and a sub-MSS tail get the second ACK as soon
  // as the tail is read (at once with a CPU per node).
  p.quickacks = 0;
  const auto timer = simulate_packets(t, one_message(0, 1, 3 * p.mss), p);
  EXPECT_EQ(timer.packets, 3u);
  EXPECT_EQ(timer.acks, 2u);
  const auto pushed = simulate_packets(t, one_message(0, 1, 2 * p.mss + 100), p);
  EXPECT_EQ(pushed.packets, 3u);
  EXPECT_EQ(pushed.acks, 2u);
  // A timer longer than the RTO: the sender resends the third segment, whose duplicate is
  // acknowledged at once (Linux's behaviour too).
  p.delack_timeout = 0.5;
  const auto late = simulate_packets(t, one_message(0, 1, 3 * p.mss), p);
  EXPECT_EQ(late.packets, 4u);
  EXPECT_EQ(late.acks, 2u);
}

// Seeded host timing noise: a seed reproduces its run, seeds differ where host turns and reaction
// times decide the outcome (16 ranks on 2 cores, MPI_Alltoall's 15 concurrent flows), and the
// median of seeded runs is the middle one. Without a shared host and with instant reactions the
// noise has nothing to act on.
TEST(packet_sim, seeded_host_noise_and_the_median_of_runs) {
  const auto t = torus::parse("2[bw=20Mb/s]x2[bw=20Mb/s]x4[bw=10Mb/s]");
  const auto s = alltoall_schedule(t, packet_schedule_kind::ompi_tuned, 65536);
  packet_params p;
  p.host_cores = 2;
  p.repetitions = 2;
  const auto plain = simulate_packets(t, s, p);
  EXPECT_EQ(simulate_packets_median(t, s, p, 1).seconds, plain.seconds);  // seed 0, one run: the same
  p.seed = 7;
  const auto a = simulate_packets(t, s, p), b = simulate_packets(t, s, p);
  EXPECT_EQ(a.seconds, b.seconds);
  EXPECT_EQ(a.packets, b.packets);
  p.seed = 0;
  std::vector<packet_result> runs;
  const auto med = simulate_packets_median(t, s, p, 5, &runs);
  ASSERT_EQ(runs.size(), 5u);
  std::vector<double> secs;
  for (const auto& r : runs) secs.push_back(r.seconds);
  std::sort(secs.begin(), secs.end());
  EXPECT_EQ(med.seconds, secs[2]);
  EXPECT_LT(secs.front(), secs.back());  // the noise acts here
  // Even count: the mean of the middle two.
  const auto med4 = simulate_packets_median(t, s, p, 4, &runs);
  std::vector<double> s4;
  for (const auto& r : runs) s4.push_back(r.seconds);
  std::sort(s4.begin(), s4.end());
  EXPECT_DOUBLE_EQ(med4.seconds, (s4[1] + s4[2]) / 2);
  // No shared cores, no reaction time: every seed runs the deterministic schedule.
  p.host_cores = 0;
  p.host_delay = 0;
  const auto fixed = simulate_packets(t, s, p);
  simulate_packets_median(t, s, p, 3, &runs);
  for (const auto& r : runs) EXPECT_EQ(r.seconds, fixed.seconds);
  EXPECT_THROW(simulate_packets_median(t, s, p, 0), toru::error);
  p.jitter = 1;
  EXPECT_THROW(simulate_packets(t, s, p), toru::error);
}

// TCP small queues: a connection keeps about two skbs in its first-hop qdisc and refills it as they
// leave, so a window larger than the qdisc no longer overflows it (Reno's slow start here, which
// without TSQ runs into the 10-packet queue and has segments refused, retried at the next ACK) and
// the link stays full.
TEST(packet_sim, small_queues_keep_a_sender_out_of_its_full_qdisc) {
  const auto t = torus::parse("4[bw=10Mb/s,lat=1us]");
  packet_params p;
  p.congestion = packet_params::congestion_control::reno;
  p.queue_bytes = 10 * 1514;
  p.tbf_burst = 1514;
  const double m = 1 << 20;
  const auto plain = simulate_packets(t, one_message(0, 1, m), p);
  p.small_queues = true;
  const auto tsq = simulate_packets(t, one_message(0, 1, m), p);
  EXPECT_GT(plain.local_drops, 0u);
  EXPECT_EQ(tsq.local_drops, 0u);
  EXPECT_EQ(tsq.drops, 0u);
  const double ideal = m * (1 + p.header / p.mss) / 1.25e6;
  EXPECT_GT(tsq.seconds, ideal);
  EXPECT_LT(tsq.seconds, 1.02 * ideal);
  EXPECT_LE(tsq.seconds, plain.seconds);
}

// A benchmark's figure from runs (timed_median_seconds): each run's median over its last `timed`
// calls, then the median over runs; checked on hand-made runs and on a real 4-call simulation.
TEST(packet_sim, timed_median_is_the_median_of_the_runs_timed_calls) {
  auto run = [](std::vector<double> reps) {
    packet_result r;
    r.repetition_seconds = std::move(reps);
    r.seconds = r.repetition_seconds.back();
    return r;
  };
  const std::vector<packet_result> runs{run({9, 1, 5, 3}), run({9, 4, 2, 8}), run({0, 7, 7, 6})};
  // last 3 calls: medians 3, 4, 7 -> 4; the last call alone: 3, 8, 6 -> 6
  EXPECT_DOUBLE_EQ(timed_median_seconds(runs, 3), 4);
  EXPECT_DOUBLE_EQ(timed_median_seconds(runs, 1), 6);
  // an even count of calls and of runs: the mean of the middle two
  EXPECT_DOUBLE_EQ(timed_median_seconds({runs[0], runs[1]}, 2), (4.0 + 5.0) / 2);  // 4 and 5
  EXPECT_THROW(timed_median_seconds({}, 1), toru::error);
  EXPECT_THROW(timed_median_seconds(runs, 5), toru::error);
  EXPECT_THROW(timed_median_seconds(runs, 0), toru::error);

  const auto t = torus::parse("2[bw=20Mb/s]x2[bw=20Mb/s]");
  packet_params p;
  p.repetitions = 4;
  const auto r = simulate_packets(t, alltoall_schedule(t, packet_schedule_kind::linear, 65536), p);
  ASSERT_EQ(r.repetition_seconds.size(), 4u);
  auto last3 = std::vector<double>(r.repetition_seconds.end() - 3, r.repetition_seconds.end());
  std::sort(last3.begin(), last3.end());
  EXPECT_DOUBLE_EQ(timed_median_seconds({r}, 3), last3[1]);
}

// simulate_packet_calls: different schedules back to back on the same connections. The first call
// runs on fresh state as a lone run does, repetitions are the same sequence of one schedule, and a
// call inherits what the calls before it left: under BBR MPI_Alltoall's calls in a benchmark-like
// interleaving spread by half their time, under Reno they stay within a few percent, as on the
// testbed (docs/history/benchmarks-2026-12.md, "Calibration, sixth session": BBR 32-70 % of T_min by what ran
// before, Reno 78-83 %).
TEST(packet_sim, calls_in_sequence_inherit_the_connections_state) {
  const auto t = torus::parse("2[bw=20Mb/s]x2[bw=20Mb/s]x4[bw=10Mb/s]");
  const double m = 262144;
  const auto mpi = alltoall_schedule(t, packet_schedule_kind::ompi_tuned, m);
  const auto pw = alltoall_schedule(t, packet_schedule_kind::pairwise, m);
  const auto ind = alltoall_schedule(t, packet_schedule_kind::indirect, m, {.chunks = 64});

  packet_params own_cpus;  // a CPU per node: the barrier costs no turn on a shared core
  const auto lone = simulate_packets(t, ind, own_cpus);
  const auto seq = simulate_packet_calls(t, {ind, mpi}, own_cpus);
  ASSERT_EQ(seq.repetition_seconds.size(), 2u);
  // the barrier is an operation too: it ends one host reaction after the call's last operation
  EXPECT_NEAR(seq.first_seconds, lone.seconds + own_cpus.host_delay, 1e-9);
  EXPECT_DOUBLE_EQ(seq.seconds, seq.repetition_seconds[1]);

  packet_params p;
  p.host_cores = 2;
  packet_params three = p;
  three.repetitions = 3;
  const auto reps = simulate_packets(t, mpi, three);
  const auto same = simulate_packet_calls(t, {mpi, mpi, mpi}, p);
  EXPECT_EQ(reps.repetition_seconds, same.repetition_seconds);

  EXPECT_THROW(simulate_packet_calls(t, {}, p), toru::error);
  EXPECT_THROW(simulate_packet_calls(t, {mpi}, three), toru::error);

  // MPI_Alltoall at calls 3, 5, 6 and 9 of an interleaved run: slowest over fastest
  auto spread = [&](packet_params q) {
    const auto r = simulate_packet_calls(t, {ind, pw, mpi, ind, mpi, mpi, pw, ind, mpi}, q);
    std::vector<double> calls;
    for (std::size_t i : {2u, 4u, 5u, 8u}) calls.push_back(r.repetition_seconds[i]);
    return *std::max_element(calls.begin(), calls.end()) / *std::min_element(calls.begin(), calls.end());
  };
  const double bbr = spread(p);
  packet_params reno = p;
  reno.congestion = packet_params::congestion_control::reno;
  const double loss_based = spread(reno);
  std::cout << "MPI_Alltoall's calls in an interleaved run, slowest / fastest: BBR " << bbr << ", Reno " << loss_based
            << "\n";
  EXPECT_GT(bbr, 1.3);
  EXPECT_LT(loss_based, 1.15);
}
