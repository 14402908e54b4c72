// SPDX-License-Identifier: BSD-3-Clause
// The OTF2 trace of a run (Score-P's format: Vampir, Scalasca and otf2-print read it), written
// serially by rank 0 from the gathered events: one location per rank, Enter/Leave per MPI call,
// I/O call and toru region.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis.hpp"

namespace toru::tune::shim {

/// Writes `dir`/traces.otf2 (+ traces.def, traces/). Throws std::runtime_error on an OTF2 error.
void write_otf2(const std::vector<rank_data>& ranks, const nlohmann::json& profile, const std::string& dir);

}  // namespace toru::tune::shim
