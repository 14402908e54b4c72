// SPDX-License-Identifier: BSD-3-Clause
// Root causes of wait states (the delay analysis of Böhme et al., ICPP 2010) and the critical path,
// from every rank's events on one clock. Pure computation: no MPI, tested on hand-made traces.
// MPI_Finalize runs the same analysis in parallel (replay.hpp); this serial form is its reference.
//
// A compute region is the code between two consecutive recorded MPI calls of a rank (sites A, B).
// A wait state (late sender, late receiver, wait at collective) of a victim rank v is caused by a
// delaying rank d that arrived late; since their previous synchronisation d spent longer in some
// regions than v did, and the wait is shared among those regions in proportion to the excess. The
// part of d's excess that is d's own waiting is handed back along the chain to what caused that
// wait (propagated waits), so a cause three ranks away is still found.
#pragma once

#include <compare>
#include <cstdint>
#include <vector>

#include "event.hpp"

namespace toru::tune::shim {

// What the serial analysis and the parallel replay (replay.hpp) share, so both read a trace alike.
namespace delay {
/// Waits shorter than this are clock noise: they neither cause a jump of the critical path nor count.
inline constexpr double tiny = 1e-7;
/// How far back a victim's events are searched for its previous synchronisation with the delayer;
/// beyond it the interval starts at MPI_Init (the analysis stays linear on long traces).
inline constexpr int max_back = 4096;
/// The events that take part: messages, collectives and other MPI calls (not I/O, not toru's).
inline bool sync_type(ev_type t) {
  return t == ev_type::send || t == ev_type::recv || t == ev_type::coll || t == ev_type::other_mpi;
}
/// The first MPI_Iprobe or MPI_Improbe of a streak that found nothing (recorder::poll).
inline bool is_poll(const event& e) {
  return e.type == ev_type::other_mpi && (e.func == f_iprobe || e.func == f_improbe);
}
/// A send that waits for its receive to be posted (late receiver).
inline bool blocking_send(std::uint16_t f) { return f == f_send || f == f_ssend; }
}  // namespace delay

/// A compute region of one rank: the code between call site `from` (-1: MPI_Init) and call site
/// `to` (global site ids).
struct region_key {
  int rank = -1;
  std::int64_t from = -1, to = -1;
  auto operator<=>(const region_key&) const = default;
};

struct wait_cause {
  region_key region{};
  double caused = 0;    // waiting on all ranks attributed to it, directly or through a chain, s
  double direct = 0;    // of which the waits whose delaying rank computed here, s
  double compute = 0;   // this rank's compute in the region, s
  double excess = 0;    // that minus the mean over the other ranks of their compute in it, s
  double critical = 0;  // its compute on the critical path, s
};

struct critical_segment {
  region_key region{};
  double time = 0;  // compute on the critical path, s
};

struct rootcause_result {
  double total_wait = 0;                   // every wait state found, s
  double attributed = 0;                   // of which attributed to compute regions, s
  std::vector<wait_cause> causes;          // by decreasing `caused`
  std::vector<critical_segment> critical;  // by decreasing time
  std::vector<double> critical_rank;       // compute on the critical path per rank, s
};

/// events[r]: rank r's events, times on one clock, `site` a global site id (the same code on two
/// ranks has the same id). Only send, recv, coll and other_mpi events are read.
rootcause_result root_causes(const std::vector<std::vector<event>>& events);

}  // namespace toru::tune::shim
