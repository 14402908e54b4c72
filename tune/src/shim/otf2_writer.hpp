// SPDX-License-Identifier: BSD-3-Clause
// The OTF2 trace of a run (Score-P's format: Vampir, Scalasca and otf2-print read it), written in
// parallel at MPI_Finalize: one location per rank, Enter/Leave per MPI call, I/O call and toru region.
// Each rank writes its own location's event file; rank 0 writes only the global definitions. No event
// travels between ranks, so the cost per rank does not grow with the job.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "event.hpp"

namespace toru::tune::shim {

/// Collective over `comm`: every rank of `comm` calls it, with MPI initialised (from inside the
/// MPI_Finalize wrapper with the recorder stopped: the writer calls only PMPI_*). Writes
/// `dir`/traces.otf2 (+ traces.def, traces/), removing an archive already there. Rank r is
/// location r in location group r; its events come from its own `events`.
///
/// - `events`: this rank's events, timestamps in seconds on the clock common to all ranks, in any
///   order (they are sorted by t0 here). Each becomes one Enter and one Leave; an event that outlives
///   the one enclosing it is clipped to it, enclosing regions close last, timestamps are monotone.
/// - Region of an event: function_names[e.func], or for ev_type::toru "toru:" + toru_regions[e.key]
///   (this rank's own region names, ranks may have different lists). Region ids agree across
///   ranks: the ranks' names are merged (sorted union) on rank 0 and broadcast.
/// - `t_begin`: the run's start on the common clock; timestamps in the trace are ns since it, and
///   `t_begin` must be the same on every rank. `program`: the system tree node's name (rank 0's
///   is used; empty: "toru run").
///
/// Throws std::runtime_error, with the same message on every rank, if any rank fails (the ranks
/// agree after each phase: none hangs, none throws alone); the archive is then incomplete. Not
/// thread-safe: one call at a time per process, and no other thread may use `comm` meanwhile.
///
///     std::vector<std::string> names;  // recorder::regions[k].name, k as in event::key
///     write_otf2(rec.events, names, t_begin, "/path/to/app", run_dir + "/trace", MPI_COMM_WORLD);
void write_otf2(const std::vector<event>& events, const std::vector<std::string>& toru_regions, double t_begin,
                const std::string& program, const std::string& dir, MPI_Comm comm);

}  // namespace toru::tune::shim
