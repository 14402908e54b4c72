// SPDX-License-Identifier: BSD-3-Clause
// Packet-level model of an HPC torus network (Blue Gene, Tofu, TPU-pod ICI): lossless links with
// credit-based flow control and virtual cut-through, the packet tier of the "credit" transport.
//
// Routers. Each incoming link ends in `vcs` virtual-channel FIFOs of `input_bytes` (each with its
// own credits upstream); each node has `injection_fifos` injection FIFOs of `injection_bytes`. Only
// the packet at the head of a FIFO may move (head-of-line blocking). Whenever something changes at
// a router (a head arrives, a link frees, credits return, the host refills a FIFO) its input ports
// are served round-robin (the injection FIFOs count as one port): a head bound here is ejected
// (reception is not a bottleneck), any other takes an output link that is idle and a downstream
// VC with room for it.
//
// Virtual cut-through: a packet may leave as soon as its head has arrived (one hop = the axis's
// latency), if the downstream buffer has room for the whole packet; its tail leaves no earlier
// than it arrived, so a message of S bytes over h hops of equal rate B takes S/B + h * latency.
// Buffer space is freed when the tail leaves; the credit reaches the upstream router one latency
// later. Deadlock freedom on rings comes from bubble flow control (the BG/L escape rule): a packet
// entering a ring (from injection or from another axis) needs room for itself and one more
// largest packet downstream; one continuing along its ring needs room for itself.
//
// Routing: dimension order (axis 0 first; half-way ties + from even coordinates, - from odd, as
// packet_next_link) on any VC that passes the bubble rule, or minimal adaptive as BG/L: the
// dynamic VCs (1..) on any productive axis whose link is idle, the most room first, else the
// escape VC 0 on the dimension-order link under the bubble rule (Duato's protocol). A stall is
// reported as an error, never as a time.
//
// Injection: the host posts an operation's messages into injection FIFOs (see injection_fifos);
// `interleaved` cuts each FIFO's next packet from its messages in turn (round-robin over
// destinations, the NIC's view of MPI_Isend everything), `in_order` sends each FIFO's messages one
// after another in post order (a fixed destination order: all nodes walk the same shifts). Receives are pre-posted
// (eager, active messages); an operation completes when all its messages are delivered.
//
//   auto t = torus::parse("8x4x4,bw=175MB/s,lat=100ns");
//   auto s = alltoall_schedule(t, packet_schedule_kind::linear, 4096);
//   auto r = simulate_credit(t, s, {});   // r.seconds, r.axis_utilisation
//
// Pure and thread-safe. Cost: about one microsecond per packet-hop.
#pragma once

#include <cstdint>
#include <vector>

#include "toru/topology/packet_sim.hpp"
#include "toru/topology/torus.hpp"

namespace toru::topology {

struct credit_params {
  enum class routing { dimension_order, adaptive };
  enum class injection { interleaved, in_order };
  enum class arbitration { round_robin, oldest_first, longest_queue };
  routing route = routing::dimension_order;
  injection inject = injection::interleaved;
  arbitration arbitrate = arbitration::round_robin;
  double packet_bytes = 256;  // largest packet on the wire (BG/L: 256 B in 32 B chunks)
  // Of each packet, not payload. 0 (the default): the spec's bandwidth is the links' payload rate,
  // the "peak" published all-to-all efficiencies are quoted against.
  double header_bytes = 0;
  // Virtual channels per input port, each a FIFO of input_bytes with its own credits (BG/L: two
  // dynamic VCs and the bubble escape VC besides the high-priority one, about 1 KB each).
  int vcs = 3;
  double input_bytes = 1024;
  int injection_fifos = 4;  // per node
  double injection_bytes = 2048;
  double host_delay = 0;    // seconds from an operation's dependencies to its first packet
  double time_limit = 1e6;  // simulated seconds; beyond is an error
};

struct credit_result {
  double seconds = 0;  // last operation's completion
  std::uint64_t packets = 0, events = 0;
  double payload_bytes = 0;
  double max_link_utilisation = 0;       // busiest link: busy time / makespan
  std::vector<double> axis_utilisation;  // per axis: mean busy fraction of its links
  std::vector<double> op_finish;         // per op of the schedule: its completion time
};

/// Runs `s` (nodes numbered as torus nodes) on `t`. Throws toru::error(invalid_argument) for a bad
/// schedule or parameters (buffers under two packets, an op after a later op, a message whose ops
/// are on other nodes), for a network that deadlocks or runs past time_limit; unsupported for
/// switched axes.
credit_result simulate_credit(const torus& t, const packet_schedule& s, const credit_params& p = {});

std::string to_string(credit_params::routing r);
std::string to_string(credit_params::injection i);

}  // namespace toru::topology
