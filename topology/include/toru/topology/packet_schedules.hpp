// SPDX-License-Identifier: BSD-3-Clause
// All-to-all schedules for the packet simulator: what each algorithm posts, step by step.
//
//   linear     every send and receive posted at once (Open MPI coll/base basic_linear and
//              linear_sync with its default max_requests = 0; toru's phases via MPI_Ialltoallv)
//   pairwise   P-1 MPI_Sendrecv steps, rank+s / rank-s (Open MPI pairwise, toru pairwise)
//   bruck      ceil(log2 P) steps, the blocks with bit k set to rank+k (Open MPI modified Bruck)
//   ompi_tuned what Open MPI 4.1's coll/tuned fixed decision picks for P ranks and the block size
//   indirect   toru's indirect: chunk c crosses phase A (all-to-all in the plane orthogonal to the
//              longest axis, Z*m/C per peer) then phase B (along the longest axis, Q*m/C per peer).
//              The caller keeps A(c+1) in flight while waiting for A(c); the phase-B thread keeps up
//              to 3 line exchanges in flight, posting B(c) once A(c) and A(c-1) are done and B(c-3)
//              has completed (comm/src/alltoall_indirect.cpp).
// Ranks sit on torus nodes in the identity mapping (rank r on node r).
#pragma once

#include <string>

#include "toru/topology/packet_sim.hpp"

namespace toru::topology {

enum class packet_schedule_kind { linear, pairwise, bruck, ompi_tuned, indirect };

struct schedule_options {
  int chunks = 64;   // indirect
  int b_window = 3;  // indirect: line exchanges in flight
};

/// The schedule of one all-to-all of `bytes_per_pair` over every node of `t`. Throws
/// toru::error(invalid_argument) for bytes < 0 or chunks < 1.
packet_schedule alltoall_schedule(const torus& t, packet_schedule_kind kind, double bytes_per_pair,
                                  const schedule_options& opts = {});

/// Open MPI 4.1 coll/tuned's fixed MPI_Alltoall decision (coll_tuned_decision_fixed.c) for `ranks`
/// ranks and blocks of `bytes`, as one of linear / pairwise / bruck (two_proc is pairwise,
/// linear_sync with max_requests 0 is linear).
packet_schedule_kind ompi_tuned_alltoall(int ranks, double bytes);

std::string to_string(packet_schedule_kind k);
packet_schedule_kind packet_schedule_kind_from_string(const std::string& s);

}  // namespace toru::topology
