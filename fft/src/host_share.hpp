// What the strategy table needs to know about the hardware under a plan beyond its communicator:
// how many ranks share each host core, and what the described torus makes of one exchange.
#pragma once

#include <mpi.h>

#include "toru/comm/communicator.hpp"

namespace toru::fft::detail {

/// Collective over comm: the largest number of comm's ranks per core of one host (at least 1).
/// Ranks count as one host when they run on one kernel (same boot id), whatever host names
/// they report: the namespaces of the emulated torus are distinct "nodes" to MPI but share the
/// host's cores, so local FFTs and thread hand-offs there are not free.
double ranks_per_core(MPI_Comm comm);

/// Seconds one all-to-all of `bytes_per_rank` (sent by each rank) takes at the described torus's
/// bandwidth bound; negative when no torus is described or there is one rank.
double torus_wire_seconds(const comm::communicator& c, double bytes_per_rank);

}  // namespace toru::fft::detail
