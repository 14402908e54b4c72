// SPDX-License-Identifier: BSD-3-Clause
// toru::topology network model: dimension-order routes, link loads, and the all-to-all bound.
//
// Links. Every node has two directed links per axis, numbered by link_index(node, axis, dir):
// dir = +1 leaves towards coordinate+1, dir = -1 towards coordinate-1. A ring of extent 2 has ONE
// physical link per pair, used in the + direction only (from 0 to 1 and, wrapping, from 1 to 0);
// its - links carry nothing. Mesh end nodes have no outward link. On a switched axis, + is the
// node's injection port into the switch and - its ejection port.
//
// Routing: dimension order, axis 0 first, shortest way round a ring. When both ways are equally
// short (distance D/2 on an even ring) the bytes are split half and half (routes() returns both
// paths with share 0.5), the balanced minimal routing the bound below assumes.
//
// All-to-all bound (derived in docs/topology.md). For an all-to-all of m bytes per ordered pair
// over P nodes, axis i (extent D, bandwidth B) must carry at least m*P*E/(8*B) seconds of traffic
// on its busiest directed link, with the effective extent E:
//     ring, D even >= 4:  D            ring, D odd:  (D^2-1)/D
//     mesh, D even:       2D           mesh, D odd:  2(D^2-1)/D
//     ring or mesh D = 2: 4 (one link) switch:       8(D-1)/D          D = 1: 0
// T_min = max_i m*P*E_i/(8*B_i); dimension-order routing with split ties attains it, so it is
// the flow-level time too. Over a sub-torus spanned by axes S (all such sub-tori at once),
// P is replaced by the sub-torus size and the max runs over S.
//
// All functions are pure and thread-safe.
//
//   auto t = torus::parse("16x16x32,bw=425MB/s");
//   double t_min = alltoall_bound(t, 65536);           // seconds
//   auto a = alltoall_loads(t, 65536);                 // per-axis link bytes and seconds
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "toru/topology/torus.hpp"

namespace toru::topology {

/// One step of a route: from node `from` to node `to` along `axis` in direction `dir` (+1/-1).
struct route_step {
  std::int64_t from = 0, to = 0;
  int axis = 0;
  int dir = 1;
};

/// One path of a route and the share of the message's bytes it carries.
struct path {
  double share = 1;
  std::vector<route_step> steps;
};

/// Signed shortest displacement from coordinate a to b along an axis (ties: +D/2).
int axis_displacement(const axis& ax, int from, int to);
/// Hops along one axis between two coordinates (0 or 1 on a switched axis).
int axis_distance(const axis& ax, int from, int to);
/// Minimal hop count between two nodes (equals the dimension-order route length).
int hop_count(const torus& t, std::int64_t src, std::int64_t dst);
/// Largest hop count between two nodes.
int diameter(const torus& t);

/// The dimension-order paths from src to dst (1 path, or 2^k with k tied ring axes, shares summing
/// to 1). src == dst gives one empty path.
std::vector<path> routes(const torus& t, std::int64_t src, std::int64_t dst);
/// A single dimension-order path (ties go the + way); for display.
path route(const torus& t, std::int64_t src, std::int64_t dst);

/// Directed link numbering, in [0, 2 * ndims * size).
std::int64_t link_index(const torus& t, std::int64_t node, int axis, int dir);
std::int64_t link_count(const torus& t);
/// The directed links a step occupies: one on a ring or mesh, two (up port, down port) on a switch.
/// Returns how many were written to out[0..1].
int step_links(const torus& t, const route_step& s, std::int64_t out[2]);

/// One message of a traffic pattern.
struct flow {
  std::int64_t src = 0, dst = 0;
  double bytes = 0;
};

/// Bytes carried by every directed link for a pattern, and a per-axis summary.
struct load_map {
  std::vector<double> bytes;         // per link_index
  std::vector<double> axis_max;      // busiest directed link of each axis, bytes
  std::vector<double> axis_seconds;  // axis_max / bandwidth
  std::vector<double> axis_total;    // byte-hops on each axis
  int bottleneck_axis = 0;           // largest axis_seconds (ties: highest index)
  double seconds = 0;                // max axis_seconds: the flow-level time of the pattern
};

/// Link loads of any pattern, by explicit routing (cost: sum over flows of hops x paths). For
/// regular all-to-alls use alltoall_loads() instead.
load_map link_loads(const torus& t, std::span<const flow> pattern);

/// An all-to-all pattern, written out: every ordered pair (a != b) inside each sub-torus spanned
/// by `axes` (empty: all axes) sends `bytes_per_pair`. Size P*P_sub flows: for small tori.
std::vector<flow> alltoall_pattern(const torus& t, double bytes_per_pair, std::span<const int> axes = {});

/// Effective extent E of an axis (see above); 0 for extent 1.
double effective_extent(const axis& ax);

/// Closed form of the all-to-all loads: per axis the bytes on its busiest directed link and the
/// seconds that takes; axes outside `axes` (when given) carry nothing.
struct alltoall_model {
  std::vector<double> link_bytes;  // per axis
  std::vector<double> seconds;     // per axis
  int bottleneck_axis = 0;         // ties: highest index
  double bound_seconds = 0;        // max over axes
  std::int64_t group_size = 0;     // nodes in each all-to-all group (P or the sub-torus size)
};
alltoall_model alltoall_loads(const torus& t, double bytes_per_pair, std::span<const int> axes = {});

/// T_min for an all-to-all of `bytes_per_pair` over the whole torus (or every sub-torus spanned by
/// `axes` at once), in seconds: bandwidth only, no latency.
double alltoall_bound(const torus& t, double bytes_per_pair);
double alltoall_bound(const torus& t, double bytes_per_pair, std::span<const int> axes);

/// Latency floors (seconds) for an all-to-all with per-message start-up `alpha`: direct
/// ((P-1) messages per node) and the two-phase indirect one (P/L-1 + L-1 messages per node,
/// L the extent of the longest axis), each plus the diameter's hop latencies.
double alltoall_latency_direct(const torus& t, double alpha);
double alltoall_latency_indirect(const torus& t, double alpha);

}  // namespace toru::topology
