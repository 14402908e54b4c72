// SPDX-License-Identifier: BSD-3-Clause
#include "host_share.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "toru/comm/alltoall_simulate.hpp"
#include "toru/core/mpi.hpp"
#include "toru/topology/credit_model.hpp"
#include "toru/topology/fitted_model.hpp"
#include "toru/topology/network_model.hpp"
#include "toru/topology/node.hpp"

namespace toru::fft::detail {

namespace {

std::uint64_t host_key() {
  std::string id;
  std::ifstream f("/proc/sys/kernel/random/boot_id");
  if (!(f >> id)) {
    // No boot id (not Linux): the host name, which a namespace may change but is the next best.
    char name[256] = {};
    gethostname(name, sizeof name - 1);
    id = name;
  }
  return std::hash<std::string>{}(id);
}

// Hardware threads this node offers its processes (hwloc: the container's cpuset, not one rank's
// binding). Never throws: ranks_per_core is collective and one rank's failure must not hang the rest.
// Probed once per process: hwloc's probe reads every PCI device's configuration (~100 ms on a VM,
// most of a small plan's set-up time), and the node does not change during a run.
int host_pus() {
  static const int pus = [] {
    try {
      return std::max(1, topology::probe_node().pus);
    } catch (const std::exception&) {
      return static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
    }
  }();
  return pus;
}

}  // namespace

double ranks_per_core(MPI_Comm comm) {
  const int P = mpi_size(comm);
  const std::uint64_t mine = host_key();
  std::vector<std::uint64_t> keys(static_cast<std::size_t>(P));
  check_mpi(MPI_Allgather(&mine, 1, MPI_UINT64_T, keys.data(), 1, MPI_UINT64_T, comm), "MPI_Allgather");
  const auto sharing = std::count(keys.begin(), keys.end(), mine);
  double local = std::max(1.0, static_cast<double>(sharing) / host_pus()), worst = 1;
  check_mpi(MPI_Allreduce(&local, &worst, 1, MPI_DOUBLE, MPI_MAX, comm), "MPI_Allreduce");
  return worst;
}

torus_wires torus_wire_seconds(const comm::communicator& c, double bytes_per_rank, comm::alltoall_algorithm algorithm) {
  torus_wires w;
  if (!c.torus_given() || c.size() < 2 || bytes_per_rank <= 0) return w;
  const double m = bytes_per_rank / c.size();
  double bound = -1;
  try {
    bound = topology::alltoall_bound(c.torus(), m);
  } catch (const std::exception&) {
    return w;  // a torus the bound cannot handle: the generic network figure stays
  }
  w.alltoall = w.alltoallw = bound;
  // The fast tier's pairwise step bound (MPI's schedule at these sizes) costs O(P^2 hops) once per
  // torus: above this many ranks a plan keeps the bound rather than wait seconds for the model.
  constexpr int max_modelled_ranks = 4096;
  if (c.size() > max_modelled_ranks) return w;
  try {
    // The algorithm the exchange's plan will be held to (comm resolves its environment).
    algorithm = comm::resolved_algorithm(algorithm);
    // Not the bound for both: on the emulated 2x2x4 torus the plan took the middle layout through
    // MPI_Alltoallw at 64^3 (16 KiB per pair) because both paths were costed at T_min, while the
    // model puts MPI's linear schedule at about 40 % of it there and comm's indirect one at 90 %.
    const double a = comm::simulate_alltoall(c.torus(), algorithm, m, {.model = comm::network_model::fitted}).seconds;
    // MPI's linear schedule in the network model the torus selects (HPC: the credit model, with the
    // adaptive routing its MPI_Alltoall is modelled with; Ethernet: the TCP fit)
    topology::credit_model_options credit;
    credit.packet.route = topology::credit_params::routing::adaptive;
    const double l = c.torus().transport() == topology::link_transport::credit
                         ? topology::credit_fitted_seconds(c.torus(), topology::packet_schedule_kind::linear, m, credit)
                         : topology::fitted_alltoall_seconds(c.torus(), topology::packet_schedule_kind::linear, m);
    w.alltoall = std::max(a, bound);
    w.alltoallw = std::max(l, bound);
  } catch (const std::exception&) {
    // a torus the model cannot handle (switched axes): both paths at the bound, as before
  }
  return w;
}

}  // namespace toru::fft::detail
