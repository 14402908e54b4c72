// SPDX-License-Identifier: BSD-3-Clause
// The fast tier of the network model: what fraction of T_min each all-to-all schedule reaches,
// fitted on the packet tier (packet_sim.hpp) and applied at any torus size (8192-65536 nodes and
// beyond, where packets cannot be simulated in minutes).
//
// The fit: packet_sim at toru-netmodel 3 on 4[bw=20Mb/s]x4[bw=20Mb/s]x8[bw=10Mb/s] (128 nodes) at
// 4-64 KiB and on 2x2x4 at 256 KiB and 1 MiB per pair (TCP/BBR, the testbed's tbf, a CPU per node,
// one warm-up call); the points and their limits are in src/fitted_model.cpp and
// docs/history/benchmarks-2026-12.md. Between fitted sizes the fraction is interpolated in log(bytes); outside, the
// nearest fitted size is used. linear, bruck and indirect are taken as size-independent fractions
// of T_min at fixed block size; pairwise as a fraction of its own flow-level time (the sum over its
// P-1 steps of the step's busiest link, `pairwise_step_bound`), so its loss to step synchronisation
// grows with P as it should; bruck likewise over its log2 P shift steps, with pairwise's fraction.
#pragma once

#include <string_view>

#include "toru/topology/packet_schedules.hpp"
#include "toru/topology/torus.hpp"

namespace toru::topology {

inline constexpr std::string_view packet_model_version =
    "toru-netmodel 3 (2026-12-01: TCP BBR v1 with Linux's TSO quantization budget and app-limited/recovery state, tbf, "
    "ob1 rendezvous; local qdisc drops, match header, host turns, warm repetitions)";

/// Fitted efficiency: linear / ompi_tuned / bruck / indirect as a fraction of T_min in (0, 1],
/// pairwise as a fraction of pairwise_step_bound (above 1 where its steps overlap). ompi_tuned
/// resolves with `ranks`.
double fitted_efficiency(packet_schedule_kind kind, double bytes_per_pair, int ranks);

/// Flow-level time of the pairwise schedule: sum over steps s = 1..P-1 of the busiest link's bytes
/// over its bandwidth when every node sends `bytes_per_pair` to node+s (the testbed's routing).
/// Cost O(P^2 x hops): throws toru::error(unsupported) above 16384 nodes.
double pairwise_step_bound(const torus& t, double bytes_per_pair);

/// Fast-tier all-to-all time of `kind` on `t` (ranks on nodes, identity mapping): the larger of the
/// fitted bandwidth time and a latency floor from the packet tier's default host description (one
/// host_delay per dependent step, one post_overhead per message, the routes' hop latency);
/// `chunks` is the indirect pipeline's chunk count.
double fitted_alltoall_seconds(const torus& t, packet_schedule_kind kind, double bytes_per_pair, int chunks = 64);

/// The fitted bandwidth time alone: T_min (or the step bound) over the fitted efficiency.
double fitted_bandwidth_seconds(const torus& t, packet_schedule_kind kind, double bytes_per_pair);

}  // namespace toru::topology
