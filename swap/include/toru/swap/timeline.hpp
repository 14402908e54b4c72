// SPDX-License-Identifier: BSD-3-Clause
// SVG timeline of one simulated step: device memory in use over time (with the budget line) above
// three lanes for the compute queue (forward, backward, update, recompute ops coloured apart) and
// the two copy queues, so stalls show as gaps in the compute lane.
//
//   auto r = toru::swap::simulate(p, dev, {.record_trace = true});
//   std::string svg = toru::swap::timeline_svg(p, r, "resnet50 b=64 on v100-nvlink2");
#pragma once

#include <string>

#include "toru/swap/plan.hpp"
#include "toru/swap/simulate.hpp"

namespace toru::swap {

/// Returns a standalone SVG document. `r` must come from simulate() with record_trace = true;
/// throws toru::error (invalid_argument) otherwise. Thread-safe.
std::string timeline_svg(const plan& p, const sim_result& r, const std::string& title);

}  // namespace toru::swap
