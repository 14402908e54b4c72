// SPDX-License-Identifier: BSD-3-Clause
// toru::topology::torus — the shape of the machine as toru models it.
//
// A torus has 1 to 6 axes. Each axis has an extent (nodes along it), a link kind (a ring with
// wrap-around links, a mesh line without them, or a non-blocking switch), a link bandwidth in
// bytes/s per direction per link and a link latency in seconds. An axis may stand for a level of
// the machine hierarchy: a cluster of multi-core nodes is the 2-axis "torus"
// `T=8[switch,bw=...]xN=64[switch,bw=...]` (ranks per node x nodes), see derive_mapping().
//
// Nodes are numbered with axis 0 varying fastest: node = c0 + D0*(c1 + D1*(c2 + ...)).
//
// Spec syntax (docs/topology.md has the full grammar):
//   16x16x32                      three rings, default bandwidth and latency
//   16x16x32,bw=425MB/s,lat=2us   the same with every axis at 425 MB/s and 2 us
//   X=16x16[mesh]x32[bw=2GB/s]    axis names, a mesh axis, a per-axis bandwidth
//   T=4[switch,bw=10GB/s]xN=16[switch,bw=3GB/s]
//
// A torus is an immutable value: all const members are thread-safe.
//
//   auto t = toru::topology::torus::parse("16x16x32,bw=425MB/s");
//   int z = t.longest_axis();   // 2
//   auto c = t.coords(t.size() - 1);   // {15, 15, 31}
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>  // the (de)serialisers below: include nlohmann/json.hpp to call them

namespace toru::topology {

/// Default link bandwidth when a spec gives none: 1 GB/s per direction (a round number; real
/// machines should say theirs). Default latency: 1 us.
inline constexpr double default_bandwidth = 1e9;
inline constexpr double default_latency = 1e-6;
inline constexpr int max_axes = 6;

/// How the nodes along one axis are connected.
///  - wrap = true,  switched = false: a ring (torus axis); extent 2 has ONE link between the pair.
///  - wrap = false, switched = false: a mesh line (no wrap-around link).
///  - switched = true: every node has one port of `bandwidth` per direction into a non-blocking
///    switch (or crossbar, or shared memory); any pair is one hop apart. `wrap` is ignored.
struct axis {
  int extent = 1;
  bool wrap = true;
  double bandwidth = default_bandwidth;  // bytes/s per direction per link (per port if switched)
  double latency = default_latency;      // seconds per hop
  std::string name;                      // empty: filled with X, Y, Z, T, U, V by position
  bool switched = false;

  friend bool operator==(const axis&, const axis&) = default;
};

/// How the links move packets; it selects the network model of the all-to-all decision and of
/// `--simulate` (docs/topology.md, "Network models"):
///  - tcp: Ethernet/IP with drop-tail queues and TCP (the emulated testbed; toru-netmodel tiers).
///  - credit: an HPC torus (Blue Gene, Tofu, TPU ICI): lossless links, credit flow control,
///    hardware routing (topology/credit_sim.hpp, credit_model.hpp).
/// Spec: ",transport=credit" after the axes; JSON: "transport": "credit". Default tcp.
enum class link_transport { tcp, credit };
std::string to_string(link_transport t);
/// Parses "tcp" or "credit"; errors name `what`.
link_transport link_transport_from_string(std::string_view text, std::string_view what);

class torus {
 public:
  /// Validates: 1..6 axes, extents >= 1, bandwidth > 0 and finite, latency >= 0 and finite,
  /// names unique identifiers ([A-Za-z_][A-Za-z0-9_]*), size <= 2^31-1. Empty names get defaults.
  /// Throws toru::error(invalid_argument) naming the offending axis and value.
  explicit torus(std::vector<axis> axes, link_transport transport = link_transport::tcp);

  /// Parses a spec string (grammar in docs/topology.md); errors name the offending token.
  static torus parse(std::string_view spec);
  /// {"axes":[{"name":"X","extent":16,"kind":"torus"|"mesh"|"switch","bandwidth":1e9|"1GB/s",
  ///  "latency":1e-6|"1us"}, ...], "bandwidth":..., "latency":...} (top-level values are defaults),
  /// or a JSON string holding a spec. Unknown keys are errors.
  static torus from_json(const nlohmann::json& j);
  /// Reads a JSON file (as from_json). Errors name the path.
  static torus load(const std::string& path);

  nlohmann::json to_json() const;
  /// A spec that parse() turns back into an equal torus.
  std::string to_string() const;

  int ndims() const { return static_cast<int>(axes_.size()); }
  const axis& operator[](int i) const { return axes_.at(static_cast<std::size_t>(i)); }
  std::span<const axis> axes() const { return axes_; }
  /// Number of nodes, the product of the extents.
  std::int64_t size() const { return size_; }
  /// The links' transport (see link_transport).
  link_transport transport() const { return transport_; }
  /// Index of the axis named `name` (case-sensitive, then case-insensitive), or -1.
  int find_axis(std::string_view name) const;

  /// The axis that bounds all-to-all: largest effective_extent(axis)/bandwidth (see
  /// network_model.hpp); ties go to the highest index.
  int longest_axis() const;

  /// Coordinates of a node (axis 0 fastest). Throws if node is out of range.
  std::vector<int> coords(std::int64_t node) const;
  /// Node index of coordinates. Throws if the count or a value is out of range.
  std::int64_t node(std::span<const int> c) const;
  /// Unchecked fast forms for inner loops: c must have ndims() entries.
  void coords_into(std::int64_t node, std::span<int> c) const noexcept;
  std::int64_t node_unchecked(std::span<const int> c) const noexcept;

  /// The sub-torus spanned by `axes` (each index once, any order; kept in the given order), with
  /// this torus's transport.
  torus sub(std::span<const int> axes) const;

  friend bool operator==(const torus&, const torus&) = default;

 private:
  std::vector<axis> axes_;
  std::int64_t size_ = 1;
  link_transport transport_ = link_transport::tcp;
};

/// A balanced factorization of n into `ndims` extents, largest last (like MPI_Dims_create, then
/// sorted ascending so the last axis is the longest): factorize(8192, 3) = {16, 16, 32}.
std::vector<int> factorize(int n, int ndims);

}  // namespace toru::topology
