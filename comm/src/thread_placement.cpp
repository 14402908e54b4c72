// SPDX-License-Identifier: BSD-3-Clause
#include "thread_placement.hpp"

#include <hwloc.h>
#include <sched.h>

#include <memory>

#include "toru/core/log.hpp"

namespace toru::comm::detail {

std::uint64_t affinity_digest() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 0;
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a over the CPUs in the mask
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set)) h = (h ^ static_cast<std::uint64_t>(cpu)) * 1099511628211ull;
  return h;
}

int choose_thread_core(const std::vector<int>& allowed, int index, int sharing) {
  if (sharing < 1 || index < 0 || index >= sharing) return -1;
  const auto n = static_cast<int>(allowed.size());
  if (n < 2 * sharing) return -1;
  const int slice = n / sharing;
  return allowed[static_cast<std::size_t>(index * slice + slice - 1)];
}

namespace {

struct topology_deleter {
  void operator()(hwloc_topology* t) const { hwloc_topology_destroy(t); }
};
struct bitmap_deleter {
  void operator()(hwloc_bitmap_s* b) const { hwloc_bitmap_free(b); }
};
using bitmap = std::unique_ptr<hwloc_bitmap_s, bitmap_deleter>;

}  // namespace

std::function<void()> thread_binder(int index, int sharing) {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) return [] {};
  std::shared_ptr<hwloc_topology> topo(raw, topology_deleter{});
  if (hwloc_topology_load(raw) != 0) return [] {};
  // The binding of this (the rank's calling) thread, which is what mpirun or the batch system set.
  bitmap bound(hwloc_bitmap_alloc());
  if (!bound || hwloc_get_cpubind(raw, bound.get(), HWLOC_CPUBIND_THREAD) != 0) {
    log::debug("comm: communication thread left unbound: the rank's CPU binding is unknown");
    return [] {};
  }
  std::vector<int> allowed;
  const int cores = hwloc_get_nbobjs_by_type(raw, HWLOC_OBJ_CORE);
  for (int c = 0; c < cores; ++c) {
    hwloc_obj_t core = hwloc_get_obj_by_type(raw, HWLOC_OBJ_CORE, static_cast<unsigned>(c));
    if (core && hwloc_bitmap_intersects(core->cpuset, bound.get())) allowed.push_back(c);
  }
  const int core = choose_thread_core(allowed, index, sharing);
  if (core < 0) {
    log::debug("comm: communication thread inherits the rank's binding ({} core(s) for {} rank(s))", allowed.size(),
               sharing);
    return [] {};
  }
  // Only the part of the core the rank may use (a binding to some of a core's hardware threads).
  auto target = std::shared_ptr<hwloc_bitmap_s>(hwloc_bitmap_alloc(), bitmap_deleter{});
  hwloc_bitmap_and(target.get(), hwloc_get_obj_by_type(raw, HWLOC_OBJ_CORE, static_cast<unsigned>(core))->cpuset,
                   bound.get());
  return [topo, target, core] {
    if (hwloc_set_cpubind(topo.get(), target.get(), HWLOC_CPUBIND_THREAD) == 0)
      log::debug("comm: communication thread bound to core {}", core);
    else
      log::debug("comm: communication thread left unbound: binding to core {} failed", core);
  };
}

}  // namespace toru::comm::detail
