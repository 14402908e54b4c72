// SPDX-License-Identifier: BSD-3-Clause
// The self-contained HTML report of a run: inline SVG plots (time per category per rank, compute
// imbalance, top call sites, a timeline window), the findings, toru's regions. No scripts, no
// network resources: one file to mail or attach to an issue.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "toru/tune/rules.hpp"

namespace toru::tune {

std::string html_report(const nlohmann::json& profile, const std::vector<finding>& findings);

}  // namespace toru::tune
