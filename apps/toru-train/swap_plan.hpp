// SPDX-License-Identifier: BSD-3-Clause
// toru-train --memory-budget: the options of the swap plan the trainer runs, and its report.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "run.hpp"
#include "toru/train/plan_executor.hpp"
#include "toru/train/trainer.hpp"

namespace toru::apps::train {

/// --memory-budget, --strategy, --link-bandwidth, --link-latency and --device-flops as the
/// trainer's options (budget 0 without --memory-budget). Throws toru::error naming the option.
toru::train::swap_plan_options parse_swap_plan(const settings& s);
/// Plan and measurement of the last step, for the summary.
nlohmann::ordered_json plan_summary(const toru::train::plan_executor& ex);
void print_plan(const toru::train::plan_executor& ex);
/// Writes through a temporary file in the same directory and renames it, so nothing partial is left.
void write_timeline(const std::string& path, const std::string& svg);

}  // namespace toru::apps::train
