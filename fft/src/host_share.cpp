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
int host_pus() {
  try {
    return std::max(1, topology::probe_node().pus);
  } catch (const std::exception&) {
    return static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  }
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
  try {
    // The environment forces comm's algorithm as it does in the plan the exchange will build.
    if (const char* v = std::getenv("TORU_ALLTOALL_ALGORITHM");
        v && *v && algorithm == comm::alltoall_algorithm::automatic)
      algorithm = comm::algorithm_from_string(v);
    // Not the bound for both: on the emulated 2x2x4 torus the plan took the middle layout through
    // MPI_Alltoallw at 64^3 (16 KiB per pair) because both paths were costed at T_min, while MPI's
    // linear schedule reaches about 40 % of it there and comm's indirect one about 90 %.
    w.alltoall = comm::simulate_alltoall(c.torus(), algorithm, m, {.model = comm::network_model::fitted}).seconds;
    w.alltoallw = topology::fitted_alltoall_seconds(c.torus(), topology::packet_schedule_kind::linear, m);
  } catch (const std::exception&) {
    return {};  // a torus the model cannot handle (switched axes): the generic network figure stays
  }
  return w;
}

}  // namespace toru::fft::detail
