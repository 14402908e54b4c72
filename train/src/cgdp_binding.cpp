// SPDX-License-Identifier: BSD-3-Clause
#include "cgdp_binding.hpp"

#include <hwloc.h>

#include <array>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "toru/core/error.hpp"
#include "toru/core/mpi.hpp"

namespace toru::train::detail {

namespace {

struct topology {
  hwloc_topology_t t = nullptr;
  topology() {
    if (hwloc_topology_init(&t) != 0 || hwloc_topology_load(t) != 0) {
      if (t) hwloc_topology_destroy(t);
      t = nullptr;
    }
  }
  ~topology() {
    if (t) hwloc_topology_destroy(t);
  }
};

struct bitmap {
  hwloc_bitmap_t b = hwloc_bitmap_alloc();
  ~bitmap() { hwloc_bitmap_free(b); }
};

std::string list(hwloc_const_bitmap_t b) {
  char* s = nullptr;
  hwloc_bitmap_list_asprintf(&s, b);
  std::string out = s ? s : "";
  std::free(s);
  return out;
}

}  // namespace

helper_binding plan_helper_binding(MPI_Comm node, int local_rank) {
  constexpr int text = 512;
  topology topo;
  std::array<char, text> mine{};
  bitmap own;
  const bool ok = topo.t && hwloc_get_cpubind(topo.t, own.b, HWLOC_CPUBIND_PROCESS) == 0;
  if (ok) std::strncpy(mine.data(), list(own.b).c_str(), text - 1);
  int size = 1;
  check_mpi(MPI_Comm_size(node, &size), "MPI_Comm_size");
  std::vector<char> all(static_cast<std::size_t>(size) * text);
  check_mpi(MPI_Allgather(mine.data(), text, MPI_CHAR, all.data(), text, MPI_CHAR, node), "MPI_Allgather");
  if (!topo.t) return {-1, "unbound: hwloc could not load the topology"};
  bitmap workers, parsed, free_set;
  for (int r = 0; r < size; ++r) {
    const char* s = all.data() + static_cast<std::size_t>(r) * text;
    if (*s == 0) return {-1, fmt::format("unbound: local rank {}'s binding is unknown", r)};
    hwloc_bitmap_list_sscanf(parsed.b, s);
    hwloc_bitmap_or(workers.b, workers.b, parsed.b);
  }
  hwloc_bitmap_andnot(free_set.b, hwloc_topology_get_allowed_cpuset(topo.t), workers.b);
  const int nfree = hwloc_bitmap_weight(free_set.b);
  if (nfree <= 0)
    return {-1, fmt::format("unbound: the workers are bound to PUs {} which cover every allowed PU, so no core is "
                            "free of workers (helpers share them, scheduled by the OS)",
                            list(workers.b))};
  int pick = hwloc_bitmap_first(free_set.b);
  for (int k = 0; k < local_rank % nfree; ++k) pick = hwloc_bitmap_next(free_set.b, pick);
  return {pick, fmt::format("PU {} (free of workers; workers on PUs {})", pick, list(workers.b))};
}

void bind_thread(std::thread& t, helper_binding& b) {
  topology topo;
  bitmap set;
  hwloc_bitmap_only(set.b, static_cast<unsigned>(b.core));
  if (!topo.t || hwloc_set_thread_cpubind(topo.t, t.native_handle(), set.b, 0) != 0) {
    b.description = fmt::format("unbound: binding to PU {} failed ({})", b.core, std::strerror(errno));
    b.core = -1;
  }
}

}  // namespace toru::train::detail
