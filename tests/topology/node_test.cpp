// SPDX-License-Identifier: BSD-3-Clause
#include <gtest/gtest.h>

#include <sched.h>

#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <utility>

#include <nlohmann/json.hpp>

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

// The CPUs the calling thread may run on (Linux), read back after binding.
std::set<int> thread_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return {};
  std::set<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.insert(c);
  return cpus;
}

// The kernel's own name for the core a CPU belongs to (package, core id), from sysfs.
std::pair<std::string, std::string> kernel_core_of(int cpu) {
  const std::string dir = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
  std::string package, core;
  std::ifstream(dir + "physical_package_id") >> package;
  std::ifstream(dir + "core_id") >> core;
  return {package, core};
}

TEST(node, bind_a_thread) {
  const node_view n = probe_node();
  TORU_EXPECT_ERROR(bind_thread_to_core(n.cores), "got " + std::to_string(n.cores));
  const std::set<int> allowed = thread_cpus();
  // A thread per core binds and reports what the kernel then lets it run on.
  auto bound_cpus = [](int core) {
    std::set<int> cpus;
    std::string failure;
    std::thread t([&] {
      try {
        bind_thread_to_core(core);
        cpus = thread_cpus();
      } catch (const toru::error& e) {
        // Containers may forbid binding; that must surface as an hwloc error, not a crash.
        failure =
            e.code() == toru::errc::hwloc ? std::string("hwloc: ") + e.what() : std::string("wrong code: ") + e.what();
      }
    });
    t.join();
    return std::pair{cpus, failure};
  };
  const auto [last, failure] = bound_cpus(n.cores - 1);
  ASSERT_EQ(failure.rfind("wrong code", 0), std::string::npos) << failure;
  if (!failure.empty()) GTEST_SKIP() << "binding is forbidden here, and said so: " << failure;
  // One core's CPUs (its hardware threads): allowed ones, all on one kernel core, at most pus/cores.
  ASSERT_FALSE(last.empty());
  EXPECT_LE(static_cast<int>(last.size()), (n.pus + n.cores - 1) / n.cores);
  for (int c : last) {
    EXPECT_TRUE(allowed.count(c)) << "cpu " << c << " is outside the process's cpuset";
    EXPECT_EQ(kernel_core_of(c), kernel_core_of(*last.begin())) << "cpu " << c << " is on another core";
  }
  if (n.cores > 1) {
    const auto [first, failure0] = bound_cpus(0);
    ASSERT_TRUE(failure0.empty()) << failure0;
    for (int c : first) EXPECT_FALSE(last.count(c)) << "cores 0 and " << n.cores - 1 << " share cpu " << c;
  }
}
