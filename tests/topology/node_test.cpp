#include <gtest/gtest.h>

#include <thread>

#include "test_util.hpp"
#include "toru/topology/node.hpp"

using namespace toru::topology;

TEST(node, probe_counts_are_consistent) {
  const node_view n = probe_node();
  EXPECT_GE(n.cores, 1);
  EXPECT_GE(n.pus, n.cores);
  EXPECT_GE(n.numa_nodes, 1);
  EXPECT_GE(n.packages, 1);
  const auto j = n.to_json();
  EXPECT_EQ(j["cores"].get<int>(), n.cores);
  EXPECT_EQ(j["gpus"].size(), n.gpus.size());
  for (const auto& g : n.gpus) EXPECT_FALSE(g.name.empty());
  EXPECT_EQ(j["nics"].size(), n.nics.size());
  for (const auto& d : n.nics) {
    EXPECT_FALSE(d.name.empty());
    EXPECT_TRUE(d.kind == "network" || d.kind == "openfabrics") << d.kind;
    EXPECT_LT(d.numa_node, n.numa_nodes);
  }
}

TEST(node, comm_thread_core_slices) {
  node_view n;
  n.cores = 8;
  EXPECT_EQ(comm_thread_core(n, 0, 1), 7);  // one rank: the last core
  EXPECT_EQ(comm_thread_core(n, 0, 2), 3);
  EXPECT_EQ(comm_thread_core(n, 1, 2), 7);
  EXPECT_EQ(comm_thread_core(n, 2, 3), 5);   // slices of 2: cores 4-5
  EXPECT_EQ(comm_thread_core(n, 9, 10), 1);  // more ranks than cores: wrap
  TORU_EXPECT_ERROR(comm_thread_core(n, 2, 2), "local_rank", "got 2");
  TORU_EXPECT_ERROR(comm_thread_core(n, 0, 0), "ranks_per_node", "got 0");
}

TEST(node, bind_a_thread) {
  const node_view n = probe_node();
  TORU_EXPECT_ERROR(bind_thread_to_core(n.cores), "got " + std::to_string(n.cores));
  std::thread t([&] {
    try {
      bind_thread_to_core(n.cores - 1);
    } catch (const toru::error& e) {
      // Containers may forbid binding; that must surface as an hwloc error, not a crash.
      EXPECT_EQ(e.code(), toru::errc::hwloc) << e.what();
    }
  });
  t.join();
}
