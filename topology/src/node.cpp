// SPDX-License-Identifier: BSD-3-Clause
#include "toru/topology/node.hpp"

#include <hwloc.h>
#include <unistd.h>

#include <memory>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "toru/core/error.hpp"

namespace toru::topology {
namespace {

struct topology_deleter {
  void operator()(hwloc_topology* t) const noexcept { hwloc_topology_destroy(t); }
};
using topology_ptr = std::unique_ptr<hwloc_topology, topology_deleter>;

void check_hwloc(int rc, const char* call) {
  if (rc != 0) throw error(errc::hwloc, fmt::format("{} failed (returned {})", call, rc));
}

topology_ptr load_topology(bool with_io) {
  hwloc_topology_t raw = nullptr;
  check_hwloc(hwloc_topology_init(&raw), "hwloc_topology_init");
  topology_ptr t(raw);
  if (with_io)
    check_hwloc(hwloc_topology_set_io_types_filter(raw, HWLOC_TYPE_FILTER_KEEP_IMPORTANT),
                "hwloc_topology_set_io_types_filter");
  check_hwloc(hwloc_topology_load(raw), "hwloc_topology_load");
  return t;
}

int count(hwloc_topology_t t, hwloc_obj_type_t type) {
  const int n = hwloc_get_nbobjs_by_type(t, type);
  return n < 0 ? 0 : n;
}

// The PCI address above an OS device and the NUMA node closest to it.
std::pair<std::string, int> locate(hwloc_obj_t o) {
  std::string bus;
  for (hwloc_obj_t p = o->parent; p; p = p->parent) {
    if (p->type == HWLOC_OBJ_PCI_DEVICE && bus.empty())
      bus = fmt::format("{:04x}:{:02x}:{:02x}.{:01x}", p->attr->pcidev.domain, p->attr->pcidev.bus, p->attr->pcidev.dev,
                        p->attr->pcidev.func);
    if (p->memory_arity > 0 && p->memory_first_child && p->memory_first_child->type == HWLOC_OBJ_NUMANODE)
      return {bus, static_cast<int>(p->memory_first_child->logical_index)};
  }
  return {bus, -1};
}

}  // namespace

nlohmann::json node_view::to_json() const {
  nlohmann::json g = nlohmann::json::array();
  for (const auto& d : gpus)
    g.push_back({{"name", d.name},
                 {"kind", d.kind},
                 {"model", d.model},
                 {"pci_bus_id", d.pci_bus_id},
                 {"numa_node", d.numa_node}});
  nlohmann::json n = nlohmann::json::array();
  for (const auto& d : nics)
    n.push_back({{"name", d.name}, {"kind", d.kind}, {"pci_bus_id", d.pci_bus_id}, {"numa_node", d.numa_node}});
  return {{"hostname", hostname},
          {"packages", packages},
          {"numa_nodes", numa_nodes},
          {"cores", cores},
          {"pus", pus},
          {"gpus", g},
          {"nics", n}};
}

node_view probe_node() {
  auto topo = load_topology(true);
  hwloc_topology_t t = topo.get();
  node_view v;
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) v.hostname = host;
  v.packages = count(t, HWLOC_OBJ_PACKAGE);
  v.numa_nodes = count(t, HWLOC_OBJ_NUMANODE);
  v.cores = count(t, HWLOC_OBJ_CORE);
  v.pus = count(t, HWLOC_OBJ_PU);
  for (hwloc_obj_t o = nullptr; (o = hwloc_get_next_osdev(t, o)) != nullptr;) {
    const auto type = o->attr->osdev.type;
    const bool gpu = type == HWLOC_OBJ_OSDEV_GPU || type == HWLOC_OBJ_OSDEV_COPROC;
    const bool nic = type == HWLOC_OBJ_OSDEV_NETWORK || type == HWLOC_OBJ_OSDEV_OPENFABRICS;
    if (!gpu && !nic) continue;
    const auto [pci_bus_id, numa_node] = locate(o);
    if (gpu) {
      gpu_device d;
      d.name = o->name ? o->name : "";
      d.kind = type == HWLOC_OBJ_OSDEV_GPU ? "gpu" : "coproc";
      if (const char* model = hwloc_obj_get_info_by_name(o, "GPUModel")) d.model = model;
      d.pci_bus_id = pci_bus_id;
      d.numa_node = numa_node;
      v.gpus.push_back(std::move(d));
    } else {
      nic_device d;
      d.name = o->name ? o->name : "";
      d.kind = type == HWLOC_OBJ_OSDEV_NETWORK ? "network" : "openfabrics";
      d.pci_bus_id = pci_bus_id;
      d.numa_node = numa_node;
      v.nics.push_back(std::move(d));
    }
  }
  return v;
}

void bind_thread_to_core(int core) {
  auto topo = load_topology(false);
  hwloc_topology_t t = topo.get();
  const int cores = count(t, HWLOC_OBJ_CORE);
  expect(core >= 0 && core < cores, "bind_thread_to_core core", fmt::format("a core index in 0..{}", cores - 1),
         std::to_string(core));
  hwloc_obj_t obj = hwloc_get_obj_by_type(t, HWLOC_OBJ_CORE, static_cast<unsigned>(core));
  if (hwloc_set_cpubind(t, obj->cpuset, HWLOC_CPUBIND_THREAD) != 0)
    throw error(errc::hwloc, fmt::format("hwloc_set_cpubind to core {} failed (the cpuset may forbid it)", core));
}

int comm_thread_core(const node_view& node, int local_rank, int ranks_per_node) {
  expect(ranks_per_node >= 1, "comm_thread_core ranks_per_node", "an integer >= 1", std::to_string(ranks_per_node));
  expect(local_rank >= 0 && local_rank < ranks_per_node, "comm_thread_core local_rank",
         fmt::format("0..{}", ranks_per_node - 1), std::to_string(local_rank));
  const int cores = std::max(node.cores, 1);
  if (ranks_per_node >= cores) return local_rank % cores;
  const int slice = cores / ranks_per_node;
  return local_rank * slice + slice - 1;
}

}  // namespace toru::topology
