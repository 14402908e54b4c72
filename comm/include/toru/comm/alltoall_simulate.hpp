// SPDX-License-Identifier: BSD-3-Clause
// The all-to-all schedules fed to the topology flow simulator: how close each algorithm gets to
// the bound T_min = P*m*L/(8B) on a torus, without running anything.
//
//   auto t = toru::topology::torus::parse("16x16x32");
//   auto r = toru::comm::simulate_alltoall(t, toru::comm::alltoall_algorithm::indirect, 65536, {});
//   // r.percent_of_bound, r.chunks
//
// Pure and thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "toru/comm/alltoall_plan.hpp"
#include "toru/topology/credit_sim.hpp"
#include "toru/topology/packet_sim.hpp"
#include "toru/topology/torus.hpp"

namespace toru::comm {

/// fluid: the flow-level max-min simulator (topology/simulator.hpp; direct = pairwise = one phase).
/// packet: the packet-level simulator (topology/packet_sim.hpp) with each algorithm's real schedule
/// (direct = MPI_Alltoall as Open MPI 4.1 coll/tuned picks it) on tori of at most
/// `packet_max_nodes` nodes, else the fitted tier (topology/fitted_model.hpp).
/// fitted: the fitted tier at any size.
/// On a torus whose transport is credit (an HPC torus: torus::transport()) packet and fitted mean
/// the credit model's tiers (topology/credit_model.hpp): packet level up to
/// `credit_packet_max_nodes`, its fitted tier above; direct is then the MPI library's linear
/// schedule (every send posted at once) with `credit_direct_routing`, indirect toru's pipeline
/// with `credit_indirect_routing`.
enum class network_model { fluid, packet, fitted };
std::string to_string(network_model m);
network_model network_model_from_string(const std::string& s);

struct simulation_options {
  int chunks = 0;                 // indirect: 0 = the decision model's choice
  double message_startup = 2e-6;  // fluid: seconds of software start-up per message a node posts
  double copy_bandwidth = 5e9;    // fluid: bytes/s of one thread's memory copies (pack, transpose, unpack)
  network_model model = network_model::fluid;
  topology::packet_params packet{};  // packet: network and host description
  int packet_max_nodes = 256;        // packet: larger tori use the fitted tier
  // packet: the median of the last this many of packet.repetitions (a benchmark's timed calls
  // after its warm-ups); 1: the last alone
  int timed_repetitions = 1;
  // packet: the median over this many runs with seeded host timing noise
  // (topology::simulate_packets_seeded); 1: the one run of `packet` as given (deterministic for
  // packet.seed = 0)
  int seeds = 1;
  // credit transport: the network (buffers, packets); its routing is set per algorithm below
  topology::credit_params credit{};
  int credit_packet_max_nodes = 128;
  // BG/L's MPI sends with dynamic (adaptive) routing; the indirect phases each stay on their own
  // axes, where dimension order keeps the bubble escape rule on every VC (docs/topology.md).
  topology::credit_params::routing credit_direct_routing = topology::credit_params::routing::adaptive;
  topology::credit_params::routing credit_indirect_routing = topology::credit_params::routing::dimension_order;
};

struct simulated_alltoall {
  alltoall_algorithm algorithm = alltoall_algorithm::direct;
  int chunks = 1;
  double seconds = 0;        // simulated makespan
  double bound_seconds = 0;  // topology::alltoall_bound (bandwidth only)
  double percent_of_bound = 0;
  network_model model = network_model::fluid;  // the tier that produced `seconds`
  std::string schedule;                        // packet / fitted: the schedule run (e.g. "linear")
  std::uint64_t drops = 0, timeouts = 0;       // packet (the mean over seeded runs)
  std::string model_version;                   // packet / fitted: which network model answered
};

/// Simulates one all-to-all of `bytes_per_pair` over every node of `t` with the given algorithm
/// (automatic: what the decision function picks for that torus). direct and pairwise are one
/// all-to-all phase over all axes with P-1 messages per node (the flow model cannot tell their
/// message orders apart); bruck is ceil(log2 P) shift phases of P/2 blocks as explicit messages
/// (tori of at most 4096 nodes, else toru::error(unsupported)); indirect is the chunked pipeline
/// pack(c) -> A(c) on the plane axes -> transpose(c) -> B(c) on the bottleneck axis -> unpack(c), with
/// one copy thread and each phase in order across chunks. With `model = packet` or `fitted` see
/// network_model; throws toru::error(unsupported) for switched axes there.
simulated_alltoall simulate_alltoall(const topology::torus& t, alltoall_algorithm algorithm, double bytes_per_pair,
                                     const simulation_options& opts = {});

}  // namespace toru::comm
