// SPDX-License-Identifier: BSD-3-Clause
// What the strategy table needs to know about the hardware under a plan beyond its communicator:
// how many ranks share each host core, and what the described torus makes of one exchange.
#pragma once

#include <mpi.h>

#include "toru/comm/alltoall_plan.hpp"
#include "toru/comm/communicator.hpp"

namespace toru::fft::detail {

/// Collective over comm: the largest number of comm's ranks per core of one host (at least 1).
/// Ranks count as one host when they run on one kernel (same boot id), whatever host names
/// they report: the namespaces of the emulated torus are distinct "nodes" to MPI but share the
/// host's cores, so local FFTs and thread hand-offs there are not free.
double ranks_per_core(MPI_Comm comm);

/// What the described torus makes of one exchange of `bytes_per_rank` (sent by each rank), in
/// seconds, from the network model's fast tier (topology/fitted_model.hpp), never below the torus's
/// bandwidth bound; the bound alone above 4096 ranks or where the model cannot handle the torus;
/// negative when no torus is described or there is one rank.
struct torus_wires {
  double alltoall = -1;   // toru::comm's all-to-all with `algorithm` (automatic: what comm decides)
  double alltoallw = -1;  // MPI_Alltoallw: Open MPI's coll/tuned runs it as the basic linear schedule
};
torus_wires torus_wire_seconds(const comm::communicator& c, double bytes_per_rank, comm::alltoall_algorithm algorithm);

}  // namespace toru::fft::detail
