// SPDX-License-Identifier: BSD-3-Clause
#include "swap_plan.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "toru/core/error.hpp"
#include "toru/topology/units.hpp"

namespace toru::apps::train {

namespace tt = toru::train;

tt::swap_plan_options parse_swap_plan(const settings& s) {
  tt::swap_plan_options o;
  if (s.memory_budget.empty()) return o;
  const double budget = topology::parse_bytes(s.memory_budget, "--memory-budget");
  if (!(budget >= 1))
    throw error(errc::invalid_argument,
                fmt::format("--memory-budget: expected a positive size such as 2GiB, got '{}'", s.memory_budget));
  o.budget = static_cast<std::size_t>(budget);
  o.strategy = swap::parse_strategy(s.strategy);
  o.link_bandwidth = topology::parse_bandwidth(s.link_bandwidth, "--link-bandwidth");
  o.link_latency = topology::parse_time(s.link_latency, "--link-latency");
  double flops = 0;
  try {
    flops = std::stod(s.device_flops);
  } catch (const std::exception&) {
  }
  if (!(flops > 0))
    throw error(
        errc::invalid_argument,
        fmt::format("--device-flops: expected a positive rate in FLOP/s such as 20e9, got '{}'", s.device_flops));
  o.device_flops = flops;
  return o;
}

nlohmann::ordered_json plan_summary(const tt::plan_executor& ex) {
  const auto& t = ex.tuned();
  const auto& r = t.result;
  const auto& meas = ex.last_step();
  nlohmann::ordered_json j{{"strategy", std::string(swap::to_string(t.chosen))},
                           {"budget_bytes", r.budget_bytes},
                           {"persistent_bytes", ex.persistent_bytes()},
                           {"planned_peak_bytes", ex.persistent_bytes() + ex.planned_peak()},
                           {"measured_peak_bytes", ex.persistent_bytes() + meas.measured_peak},
                           {"swapped_out_bytes", r.swapped_out_bytes},
                           {"ops_recomputed", r.ops_recomputed},
                           {"calibrated", ex.calibrated()},
                           {"planned_step_s", r.step_seconds},
                           {"planning_s", t.planning_seconds}};
  if (meas.step_seconds > 0) {
    j["measured_step_s"] = meas.step_seconds;
    j["predicted_step_s"] = meas.predicted_step_seconds;             // the plan's time when the step ran
    j["replayed_step_s"] = ex.simulate_measured_ops().step_seconds;  // with that step's own op times
    j["measured_stall_s"] = meas.stall_seconds;
  }
  return j;
}

void print_plan(const tt::plan_executor& ex) {
  const auto j = plan_summary(ex);
  const double mib = 1024.0 * 1024.0;
  fmt::print(
      "swap plan: {}, peak {:.1f} MiB planned / {:.1f} MiB measured of a {:.1f} MiB budget, {:.1f} MiB "
      "swapped out, {} ops recomputed",
      j["strategy"].get<std::string>(), j["planned_peak_bytes"].get<double>() / mib,
      j["measured_peak_bytes"].get<double>() / mib, j["budget_bytes"].get<double>() / mib,
      j["swapped_out_bytes"].get<double>() / mib, j["ops_recomputed"].get<int>());
  if (j.contains("measured_step_s"))
    fmt::print("; last step {:.4f} s measured, {:.4f} s predicted", j["measured_step_s"].get<double>(),
               j["predicted_step_s"].get<double>());
  fmt::print("\n");
}

void write_timeline(const std::string& path, const std::string& svg) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  if (fs::is_directory(target))
    throw error(errc::invalid_argument, fmt::format("--timeline: expected a file name, got the directory '{}'", path));
  const fs::path tmp = target.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary);
    out << svg;
    out.close();
    if (!out) {
      std::error_code ec;
      fs::remove(tmp, ec);
      throw error(errc::io, fmt::format("--timeline: cannot write '{}'", path));
    }
  }
  std::error_code ec;
  fs::rename(tmp, target, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw error(errc::io, fmt::format("--timeline: cannot write '{}': {}", path, ec.message()));
  }
}

}  // namespace toru::apps::train
