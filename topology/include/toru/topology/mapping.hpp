// SPDX-License-Identifier: BSD-3-Clause
// toru::topology::mapping — which rank sits at which torus coordinates.
//
// A mapping is a bijection between ranks 0..P-1 of a communicator and the P nodes of a torus.
// It is an immutable value (const members thread-safe); the MPI functions below are collective.
//
//   auto t = torus::parse("4x2x2");
//   auto m = mapping::from_order(t, "ZXY");   // Z varies fastest as the rank grows
//   m.coords(1);                              // {0, 0, 1}
//   m.rank_at(std::array{3, 1, 1});            // 15
#pragma once

#include <mpi.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>  // the (de)serialisers below: include nlohmann/json.hpp to call them

#include "toru/topology/torus.hpp"

namespace toru::topology {

class mapping {
 public:
  /// coords_of_rank[r] are the coordinates of rank r. Checks: one entry per node of the torus,
  /// ndims() coordinates each, in range, no two ranks on the same coordinates (the error names
  /// both ranks and the coordinates).
  mapping(torus shape, std::vector<std::vector<int>> coords_of_rank);

  /// The identity layout: rank r sits on node r (axis 0 fastest).
  static mapping identity(const torus& shape);
  /// From an order string naming every axis once, fastest-varying first: "XYZT" puts consecutive
  /// ranks along X; "TXYZ" keeps ranks of one T line (e.g. one node) consecutive. Axis names are
  /// matched case-insensitively; single-letter names may be concatenated, longer ones are
  /// separated by commas ("cores,nodes"). Axis indices ("012") are accepted too.
  static mapping from_order(const torus& shape, std::string_view order);
  /// From a map file: one line per rank holding its ndims() coordinates ("x y z", commas or
  /// blanks), in rank order; or lines "rank: x y z" / "rank x y z" (ndims()+1 integers) in any
  /// order. '#' starts a comment; blank lines are skipped. Duplicate ranks, missing ranks,
  /// repeated coordinates, out-of-range values and malformed lines are errors naming the line.
  static mapping from_file(const torus& shape, const std::string& path);
  static mapping from_json(const torus& shape, const nlohmann::json& j);  // [[x,y,z], ...] per rank

  const torus& shape() const { return shape_; }
  int nranks() const { return static_cast<int>(shape_.size()); }
  std::span<const int> coords(int rank) const;
  /// The node index (axis 0 fastest) of a rank, and the rank on a node.
  std::int64_t node_of(int rank) const;
  int rank_of_node(std::int64_t node) const;
  int rank_at(std::span<const int> c) const;
  /// True when rank r sits on node r.
  bool is_identity() const;

  nlohmann::json to_json() const;  // [[x,y,z], ...] per rank
  /// A one-line description: "identity (axis 0 fastest)", "order ZXY" when it equals an order,
  /// otherwise "explicit".
  std::string describe() const;

  friend bool operator==(const mapping& a, const mapping& b) {
    return a.shape_ == b.shape_ && a.node_of_rank_ == b.node_of_rank_;
  }

 private:
  // Rank r sits where the mixed-radix digits of r over `order` (fastest first) say.
  mapping(torus shape, const std::vector<int>& order);
  torus shape_;
  std::vector<int> coords_;  // nranks x ndims
  std::vector<std::int64_t> node_of_rank_;
  std::vector<int> rank_of_node_;
};

/// Collective. The default layout for a communicator, node-aware: ranks are grouped by shared
/// memory node (MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)), nodes numbered by their lowest rank.
/// When every node holds the same number R of ranks, the torus is `T=R[switch]xN=nodes[switch]`:
/// T the ranks of one node (bandwidth: shared memory per rank), N the nodes (bandwidth: network
/// per rank, i.e. NIC bandwidth / R); rank coordinates (local rank, node index). Otherwise (uneven
/// nodes) a single switched axis N of all ranks in rank order, at the network bandwidth per rank of
/// the fullest node. Bandwidths come from TORU_SHM_BANDWIDTH (default 5GB/s per rank) and
/// TORU_NET_BANDWIDTH (default 12.5GB/s per node, i.e. 100 Gb/s), in spec units.
mapping derive_mapping(MPI_Comm comm);

/// Collective. A mapping of `comm`'s ranks on `shape`: from the order string, or the identity when
/// it is empty. Throws the same toru::error on every rank (no rank hangs) when shape.size() differs
/// from the communicator size or the order is invalid.
mapping make_mapping(MPI_Comm comm, const torus& shape, std::string_view order_or_empty);

/// Collective. As make_mapping, from a map file read by every rank; errors agreed on all ranks.
mapping load_mapping(MPI_Comm comm, const torus& shape, const std::string& path);

/// Local (no communication). The part of `parent_layout` (a mapping of the ranks of `parent`) that
/// the ranks of `sub` occupy, when they form a sub-torus: every node of the axes along which their
/// coordinates vary, one rank each (a line, a plane, ... of the parent torus; the whole torus, extent-1
/// axes included, when `sub` has as many ranks as `parent`). The result maps sub's ranks to their
/// coordinates on that sub-torus, parent_layout.shape().sub(axes) with the axes in increasing order.
/// nullopt when they form no sub-torus (a diagonal, part of a line), when `sub` has one rank, or when a
/// rank of `sub` is not in `parent`. Every rank of `sub` computes the same answer.
std::optional<mapping> sub_mapping(MPI_Comm parent, const mapping& parent_layout, MPI_Comm sub);

}  // namespace toru::topology
