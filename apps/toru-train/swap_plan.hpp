// SPDX-License-Identifier: BSD-3-Clause
// toru-train --memory-budget: plan the step with swap/ and run it on the host-emulated device.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <mpi.h>
#include <nlohmann/json.hpp>

#include "run.hpp"
#include "toru/swap/graph.hpp"
#include "toru/train/model.hpp"
#include "toru/train/plan_executor.hpp"

namespace toru::apps::train {

/// Builds the model with deferred activations and a capacity of --memory-budget, plans it with
/// --strategy and installs the executor. Throws toru::error naming the option for bad values, and
/// out_of_memory (with what the planner needs) for a budget no plan fits.
/// The calibration's per-op times are max-reduced over `comm`, so every rank re-plans alike.
std::shared_ptr<toru::train::plan_executor> install_plan(const settings& s, const swap::graph& g,
                                                         std::optional<toru::train::model>& m, MPI_Comm comm);
/// Plan and measurement of the last step, for the summary.
nlohmann::ordered_json plan_summary(const toru::train::plan_executor& ex);
void print_plan(const toru::train::plan_executor& ex);
/// Writes through a temporary file in the same directory and renames it, so nothing partial is left.
void write_timeline(const std::string& path, const std::string& svg);

}  // namespace toru::apps::train
