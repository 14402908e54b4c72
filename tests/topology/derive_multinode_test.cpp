// SPDX-License-Identifier: BSD-3-Clause
// derive_mapping on several nodes, on one machine: this program defines MPI_Comm_split_type, which
// the topology library's call resolves to (the executable exports it), and answers
// MPI_COMM_TYPE_SHARED with the pretend nodes a test sets. Every other split goes to PMPI.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>
#include <functional>
#include <map>
#include <vector>

#include "mpi_test.hpp"
#include "toru/topology/mapping.hpp"

namespace {
// The pretend node of a rank of MPI_COMM_WORLD; empty: the real MPI_COMM_TYPE_SHARED.
std::function<int(int)> pretend_node;
}  // namespace

extern "C" int MPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm* out) {
  if (type != MPI_COMM_TYPE_SHARED || !pretend_node) return PMPI_Comm_split_type(comm, type, key, info, out);
  int world = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &world);
  return PMPI_Comm_split(comm, pretend_node(world), key, out);
}

namespace {

using namespace toru::topology;

struct pretend_nodes {
  explicit pretend_nodes(std::function<int(int)> f) { pretend_node = std::move(f); }
  ~pretend_nodes() { pretend_node = nullptr; }
};

// What the header promises, worked out from the node table alone: nodes numbered by their lowest
// rank, local ranks in rank order; an even layout T=R x N=nodes, otherwise one axis in rank order.
void expect_layout(const mapping& m, const std::function<int(int)>& node, double net_bw) {
  const int p = toru::test::nranks();
  std::map<int, std::vector<int>> ranks_of;  // pretend node -> its ranks, ascending
  for (int r = 0; r < p; ++r) ranks_of[node(r)].push_back(r);
  std::map<int, int> number;  // pretend node -> node index (by lowest rank)
  std::map<int, int> by_lowest;
  for (const auto& [n, rs] : ranks_of) by_lowest[rs.front()] = n;
  for (const auto& [lowest, n] : by_lowest) number[n] = static_cast<int>(number.size());
  std::size_t fullest = 0;
  bool even = true;
  for (const auto& [n, rs] : ranks_of) fullest = std::max(fullest, rs.size());
  for (const auto& [n, rs] : ranks_of) even = even && rs.size() == fullest;
  const int per_node = static_cast<int>(fullest);

  const torus& t = m.shape();
  ASSERT_EQ(m.nranks(), p);
  if (!even) {
    ASSERT_EQ(t.ndims(), 1) << t.to_string();
    EXPECT_EQ(t[0].name, "N");
    EXPECT_EQ(t[0].extent, p);
    EXPECT_DOUBLE_EQ(t[0].bandwidth, net_bw / per_node);
    EXPECT_TRUE(m.is_identity());
    return;
  }
  ASSERT_EQ(t.ndims(), 2) << t.to_string();
  EXPECT_EQ(t[0].name, "T");
  EXPECT_EQ(t[1].name, "N");
  EXPECT_EQ(t[0].extent, per_node);
  EXPECT_EQ(t[1].extent, static_cast<int>(ranks_of.size()));
  EXPECT_DOUBLE_EQ(t[1].bandwidth, net_bw / per_node);
  for (const auto& [n, rs] : ranks_of)
    for (std::size_t local = 0; local < rs.size(); ++local)
      EXPECT_EQ(std::vector<int>(m.coords(rs[local]).begin(), m.coords(rs[local]).end()),
                (std::vector<int>{static_cast<int>(local), number[n]}))
          << "rank " << rs[local];
}

// Consecutive ranks share a node, two to a node: even for an even rank count, uneven (the last
// node holds one) for an odd one.
TEST(derive_mapping, pairs_of_ranks_per_node) {
  const auto node = [](int r) { return r / 2; };
  pretend_nodes nodes(node);
  expect_layout(derive_mapping(MPI_COMM_WORLD), node, 12.5e9);
}

// Round-robin placement (rank r on node r % 2, as a cyclic mpiexec mapping gives): a node's ranks
// are not consecutive, and the node ids (7 and 6) are not the node numbers: the numbering follows
// each node's lowest rank.
TEST(derive_mapping, round_robin_over_two_nodes) {
  const auto node = [](int r) { return 7 - r % 2; };
  pretend_nodes nodes(node);
  expect_layout(derive_mapping(MPI_COMM_WORLD), node, 12.5e9);
}

// One rank per node: T has extent 1, N every rank, at the whole NIC's bandwidth per rank.
TEST(derive_mapping, one_rank_per_node_with_a_set_network_bandwidth) {
  ASSERT_EQ(setenv("TORU_NET_BANDWIDTH", "25GB/s", 1), 0);
  const auto node = [](int r) { return r; };
  pretend_nodes nodes(node);
  const auto m = derive_mapping(MPI_COMM_WORLD);
  unsetenv("TORU_NET_BANDWIDTH");
  expect_layout(m, node, 25e9);
}

}  // namespace
