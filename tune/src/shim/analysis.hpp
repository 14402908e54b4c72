// SPDX-License-Identifier: BSD-3-Clause
// Rank 0's part of MPI_Finalize: every rank's statistics (its sites with their waits, found by the
// parallel replay of replay.hpp) merged into one profile, with the root causes and the timeline.
// No events reach rank 0: what it merges is bounded by the call sites, not by the run's length.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "event.hpp"
#include "rootcause.hpp"

namespace toru::tune::shim {

struct run_data {
  /// Every rank's statistics as on_finalize serialised them: its sites (each with its global "id",
  /// by which they merge, and the MPI sites with their waits) and, for the first timeline_ranks ranks, its "timeline"
  /// row.
  std::vector<nlohmann::json> ranks;
  rootcause_result root_causes;         // regions as global site ids; critical_rank empty (ranks' "critical")
  double window_t0 = 0, window_t1 = 0;  // the timeline's window, seconds since the run's start
  nlohmann::json trace;                 // what became of the OTF2 trace
  nlohmann::json tool;                  // rank 0's time in each phase of the finalize so far, s
};

/// Ranks whose timeline rows travel to rank 0 (a report shows no more usefully).
constexpr int timeline_ranks = 64;

/// One rank's row of the report's timeline: its events overlapping [w0, w1), times since t_begin.
nlohmann::json timeline_row(const std::vector<event>& events, const nlohmann::json& regions, double t_begin, double w0,
                            double w1);

/// The merged profile (the schema docs/tune.md describes).
nlohmann::json build_profile(const run_data& run);

/// Writes dir/profile.json, dir/findings.json and dir/report.html.
void write_run(const run_data& run, const std::string& dir);

}  // namespace toru::tune::shim
