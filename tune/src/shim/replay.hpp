// SPDX-License-Identifier: BSD-3-Clause
// The wait-state and delay analysis at MPI_Finalize as a parallel replay over the ranks (as
// Scalasca's): each rank keeps its own events and exchanges with its partners only what matching
// needs (a send's times go to its receiver, a collective's arrival to one owner rank per instance),
// so no rank holds more than its share however large the job. The results equal rootcause.hpp's
// serial analysis of all ranks' events (tests/tune/replay_test.cpp compares them).
//
// Rounds: (1) sends to their receivers, collective arrivals to their owners; (2) matches back: wait
// states (late sender, late receiver, wait at collective) now sit on their victims; (3) each wait
// goes to its delayer with the victim's compute since their previous synchronisation, and the
// delayer shares it among its regions; (4) how much of each wait is passed on down a chain of
// waits flows from the latest wait back (a DAG in time order, batched per delayer); (5) the
// critical path is walked backwards by a token; (6) the largest causes are merged by a reduction.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "event.hpp"
#include "rootcause.hpp"

namespace toru::tune::shim {

/// Waiting at one call site of this rank, and waiting of others it caused.
struct site_waits {
  double late_sender = 0, late_receiver = 0, wait_collective = 0;  // this rank waited here, s
  double caused_late_sender = 0, caused_late_receiver = 0;         // others waited for this site, s
};

struct replay_input {
  std::vector<event> events;           // this rank's, on the common clock; `site` a local site index
  std::vector<std::int64_t> site_ids;  // local site -> global id (the same code on every rank: the same id)
  std::unordered_map<std::uint64_t, std::vector<int>> members;  // communicator key -> its ranks in comm
};

struct replay_result {
  std::vector<site_waits> sites;  // per local site
  /// total_wait and attributed over all ranks; causes and critical: the `top` largest of all ranks
  /// (the same on every rank; a cause's region ids are global site ids); critical_rank is empty.
  rootcause_result rootcause;
  double critical_compute = 0;  // this rank's compute on the critical path, s
};

/// Collective over `comm` (MPI_COMM_WORLD's ranks: events name partners by their rank in it).
replay_result replay(const replay_input& in, MPI_Comm comm, std::size_t top = 20);

}  // namespace toru::tune::shim
