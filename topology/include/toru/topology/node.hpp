// SPDX-License-Identifier: BSD-3-Clause
// toru::topology node view: what one node holds (hwloc), and pinning a communication thread.
//
// probe_node() loads the hwloc topology of the calling process's node (I/O devices included, to
// list GPUs) and is not collective. It takes a few milliseconds: call it once and keep the result.
// bind_thread_to_core() binds the calling thread only. Both are thread-safe.
//
//   auto n = toru::topology::probe_node();
//   std::thread comm([&] {
//     toru::topology::bind_thread_to_core(toru::topology::comm_thread_core(n, local_rank, ranks_per_node));
//     ...
//   });
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>  // the (de)serialisers below: include nlohmann/json.hpp to call them

namespace toru::topology {

struct gpu_device {
  std::string name;        // hwloc OS device name ("cuda0", "card0", "renderD128", "nvml0", ...)
  std::string kind;        // "gpu" (display/DRM device) or "coproc" (CUDA, OpenCL, ...)
  std::string model;       // hwloc "GPUModel" info when known, else ""
  std::string pci_bus_id;  // "0000:3b:00.0" when the device hangs off a PCI device, else ""
  int numa_node = -1;      // logical index of the closest NUMA node, -1 if unknown
};

/// A network interface as hwloc sees it: where to place the ranks that drive it.
struct nic_device {
  std::string name;        // OS device name ("eth0", "ib0", "mlx5_0", ...)
  std::string kind;        // "network" (a netdev) or "openfabrics" (an RDMA device)
  std::string pci_bus_id;  // "0000:3b:00.0" when on a PCI device, else ""
  int numa_node = -1;      // logical index of the closest NUMA node, -1 if unknown
};

struct node_view {
  std::string hostname;
  int packages = 0;
  int numa_nodes = 0;
  int cores = 0;
  int pus = 0;                   // hardware threads
  std::vector<gpu_device> gpus;  // OS devices of type GPU or co-processor
  std::vector<nic_device> nics;  // OS devices of type network or OpenFabrics
  nlohmann::json to_json() const;
};

/// Loads this node's topology with hwloc. Throws toru::error(errc::hwloc) if hwloc fails.
node_view probe_node();

/// Binds the calling thread to core `core` (hwloc logical index, 0..cores-1). Throws
/// toru::error(invalid_argument) for an out-of-range core and errc::hwloc if binding fails
/// (e.g. forbidden by the container's cpuset).
void bind_thread_to_core(int core);

/// The core a rank's communication thread should use: ranks share the node's cores in equal
/// consecutive slices (local_rank's slice), and the thread takes the last core of the slice so
/// the rank's main thread keeps the first. With more ranks than cores, slices wrap around.
int comm_thread_core(const node_view& node, int local_rank, int ranks_per_node);

}  // namespace toru::topology
