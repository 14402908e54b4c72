// SPDX-License-Identifier: BSD-3-Clause
// Where CGDP's host helper threads run: hwloc, away from the cores the node's workers are bound to.
#pragma once

#include <mpi.h>

#include <string>
#include <thread>

namespace toru::train::detail {

struct helper_binding {
  int core = -1;            // hwloc PU os index to bind to; -1: leave unbound
  std::string description;  // what was decided and why, for --explain / --verbose
};

/// Collective over `node`: gathers every local rank's CPU binding and picks, for this rank's
/// helper, a PU that no local worker is bound to (the local_rank-th such PU, wrapping). When
/// every allowed PU belongs to some worker (unbound workers cover them all) the helper stays
/// unbound and the description says so.
helper_binding plan_helper_binding(MPI_Comm node, int local_rank);
/// Binds `t` to the planned PU; on failure leaves it unbound and says so in the description.
void bind_thread(std::thread& t, helper_binding& b);

}  // namespace toru::train::detail
