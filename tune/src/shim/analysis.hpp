// SPDX-License-Identifier: BSD-3-Clause
// Rank 0's part of MPI_Finalize: every rank's statistics and events merged into one profile, with
// the wait states found by matching sends to receives and collective instances across ranks.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "recorder.hpp"

namespace toru::tune::shim {

struct rank_data {
  nlohmann::json stats;       // what on_finalize serialised on that rank
  std::vector<event> events;  // on rank 0's clock
};

/// The merged profile (the schema docs/tune.md describes).
nlohmann::json build_profile(std::vector<rank_data>& ranks);

/// Writes dir/profile.json, dir/findings.json, dir/report.html and (unless TORU_TUNE_TRACE=0)
/// the OTF2 archive dir/trace/traces.otf2.
void write_run(std::vector<rank_data>& ranks, const std::string& dir);

}  // namespace toru::tune::shim
