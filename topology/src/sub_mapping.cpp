// SPDX-License-Identifier: BSD-3-Clause
// The sub-torus a sub-communicator's ranks occupy (mapping.hpp): how a torus that describes one
// communicator (TORU_TORUS describes MPI_COMM_WORLD) carries over to the communicators split from it.
#include <numeric>
#include <vector>

#include "toru/core/mpi.hpp"
#include "toru/topology/mapping.hpp"

namespace toru::topology {

std::optional<mapping> sub_mapping(MPI_Comm parent, const mapping& parent_layout, MPI_Comm sub) {
  const int n = mpi_size(sub);
  if (n < 2) return std::nullopt;
  MPI_Group sub_group = MPI_GROUP_NULL, parent_group = MPI_GROUP_NULL;
  check_mpi(MPI_Comm_group(sub, &sub_group), "MPI_Comm_group");
  check_mpi(MPI_Comm_group(parent, &parent_group), "MPI_Comm_group");
  std::vector<int> ranks(static_cast<std::size_t>(n)), in_parent(ranks.size());
  std::iota(ranks.begin(), ranks.end(), 0);
  const int rc = MPI_Group_translate_ranks(sub_group, n, ranks.data(), parent_group, in_parent.data());
  MPI_Group_free(&sub_group);
  MPI_Group_free(&parent_group);
  check_mpi(rc, "MPI_Group_translate_ranks");
  for (int r : in_parent)
    if (r == MPI_UNDEFINED || r < 0 || r >= parent_layout.nranks()) return std::nullopt;

  const torus& shape = parent_layout.shape();
  const int nd = shape.ndims();
  std::vector<int> axes;
  if (n == parent_layout.nranks()) {
    axes.resize(static_cast<std::size_t>(nd));
    std::iota(axes.begin(), axes.end(), 0);
  } else {
    const auto c0 = parent_layout.coords(in_parent[0]);
    for (int a = 0; a < nd; ++a)
      for (int r : in_parent)
        if (parent_layout.coords(r)[static_cast<std::size_t>(a)] != c0[static_cast<std::size_t>(a)]) {
          axes.push_back(a);
          break;
        }
  }
  // The ranks sit on distinct nodes and agree on every other axis, so they fill the sub-torus
  // exactly when there are as many of them as it has nodes.
  std::int64_t nodes = 1;
  for (int a : axes) nodes *= shape[a].extent;
  if (nodes != n) return std::nullopt;
  std::vector<std::vector<int>> coords(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    const auto c = parent_layout.coords(in_parent[static_cast<std::size_t>(r)]);
    for (int a : axes) coords[static_cast<std::size_t>(r)].push_back(c[static_cast<std::size_t>(a)]);
  }
  return mapping(shape.sub(axes), std::move(coords));
}

}  // namespace toru::topology
