// SPDX-License-Identifier: BSD-3-Clause
// The credit (HPC torus) network model: the packet tier (credit_sim.hpp) where it is affordable,
// above that a fitted tier derived from it, so that a 65,536-node all-to-all is estimated in
// milliseconds.
//
// Fitted tier. A phase of a schedule (an all-to-all inside every sub-torus spanned by some axes)
// runs at its flow-level rate (the closed-form link loads, network_model.hpp) times the packet
// tier's efficiency for that kind of sub-torus, read from tables measured with the packet tier:
//   - a ring of extent D (one axis): the ring table, by D;
//   - two or more axes: by routing and by the shape's balance r = (second busiest axis's time) /
//     (busiest axis's time), 1 for a symmetric torus, 0.5 for 64x32x32 or 8x4x4.
// The phases then share the links as the flow-level simulator (simulator.hpp) shares them: max-min
// fair per phase, with the schedule's dependencies (the indirect pipeline's chunks and windows).
// linear is one phase over all axes; indirect is phase A on the plane and phase B on the longest
// axis per chunk. docs/topology.md ("The credit model") has the tables, where they were measured,
// and the tier's error against the packet tier.
//
//   auto t = torus::parse("64x32x32,bw=175MB/s,lat=100ns,transport=credit");
//   auto e = credit_alltoall(t, packet_schedule_kind::linear, 65536, {});   // fitted: 65,536 nodes
//   // e.seconds, e.percent_of_bound, e.tier == "fitted"
//
// Pure and thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "toru/topology/credit_sim.hpp"
#include "toru/topology/packet_schedules.hpp"
#include "toru/topology/torus.hpp"

namespace toru::topology {

inline constexpr std::string_view credit_model_version =
    "toru-credit 1 (2026-12-06: lossless VCT links, 3 VCs x 1 KiB, bubble escape, round-robin ports, "
    "256 B packets; fitted tier: flow-level phases x packet-tier efficiency)";

struct credit_model_options {
  credit_params packet{};      // the network (routing, buffers, packets)
  int packet_max_nodes = 128;  // larger tori use the fitted tier
  int chunks = 0;              // indirect: 0 = 16 (the tables' runs)
};

struct credit_estimate {
  double seconds = 0;
  double bound_seconds = 0;  // alltoall_bound (bandwidth only)
  double percent_of_bound = 0;
  std::string tier;  // "packet" or "fitted"
};

/// The network model a torus description selects (for --simulate and the all-to-all decision):
/// name "credit" and credit_model_version for link_transport::credit, "tcp" and
/// packet_model_version (fitted_model.hpp) otherwise.
struct network_model_choice {
  std::string name;
  std::string version;
};
network_model_choice selected_network_model(const torus& t);

/// The packet tier's efficiency (T_min / time) for a one-phase all-to-all over every node of `t`,
/// as the fitted tier reads it from its tables. Throws toru::error(unsupported) for switched axes.
double credit_phase_efficiency(const torus& t, credit_params::routing routing);

/// Fitted-tier time of `kind` (linear or indirect; others: toru::error(unsupported)) on `t`.
double credit_fitted_seconds(const torus& t, packet_schedule_kind kind, double bytes_per_pair,
                             const credit_model_options& opts = {});

/// The credit model: the packet tier up to opts.packet_max_nodes nodes, the fitted tier above.
credit_estimate credit_alltoall(const torus& t, packet_schedule_kind kind, double bytes_per_pair,
                                const credit_model_options& opts = {});

}  // namespace toru::topology
