// SPDX-License-Identifier: BSD-3-Clause
// The credit packet tier on one torus: % of T_min for the all-to-all schedules (exploration and the
// fitted tier's regeneration).
//
//   credit_explore --torus 8x4x4,bw=175MB/s,lat=100ns --bytes 4096 --routing adaptive
#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <chrono>

#include "toru/topology/credit_model.hpp"
#include "toru/topology/credit_sim.hpp"
#include "toru/topology/network_model.hpp"
#include "toru/topology/packet_schedules.hpp"
#include "toru/topology/torus.hpp"

int main(int argc, char** argv) {
  using namespace toru::topology;
  CLI::App app{"credit packet tier: all-to-all schedules on one torus"};
  std::string spec, routing = "dimension-order", inject = "interleaved";
  double bytes = 4096;
  credit_params p;
  int chunks = 16;
  std::vector<std::string> kinds = {"linear", "indirect"};
  app.add_option("--torus", spec)->required();
  app.add_option("--bytes", bytes);
  app.add_option("--routing", routing)->check(CLI::IsMember({"dimension-order", "adaptive"}));
  app.add_option("--inject", inject)->check(CLI::IsMember({"interleaved", "in-order"}));
  app.add_option("--input-bytes", p.input_bytes);
  bool oldest = false, longest = false;
  app.add_flag("--oldest", oldest);
  app.add_flag("--longest-queue", longest);
  app.add_option("--vcs", p.vcs);
  app.add_option("--fifos", p.injection_fifos);
  app.add_option("--injection-bytes", p.injection_bytes);
  app.add_option("--packet-bytes", p.packet_bytes);
  app.add_option("--chunks", chunks);
  app.add_option("--schedules", kinds);
  bool fitted_only = false;
  app.add_flag("--fitted-only", fitted_only, "the fitted tier alone (any size)");
  CLI11_PARSE(app, argc, argv);
  if (oldest) p.arbitrate = credit_params::arbitration::oldest_first;
  if (longest) p.arbitrate = credit_params::arbitration::longest_queue;
  p.route = routing == "adaptive" ? credit_params::routing::adaptive : credit_params::routing::dimension_order;
  p.inject = inject == "in-order" ? credit_params::injection::in_order : credit_params::injection::interleaved;
  const auto t = torus::parse(spec);
  const double bound = alltoall_bound(t, bytes);
  for (const auto& k : kinds) {
    credit_model_options mo{.packet = p, .chunks = chunks};
    const double fitted = credit_fitted_seconds(t, packet_schedule_kind_from_string(k), bytes, mo);
    fmt::print("{} {} m={} {}: fitted tier {:.1f}% of T_min\n", spec, k, bytes, routing, 100 * bound / fitted);
    if (fitted_only) continue;
    const auto s = alltoall_schedule(t, packet_schedule_kind_from_string(k), bytes, {.chunks = chunks});
    const auto t0 = std::chrono::steady_clock::now();
    const auto r = simulate_credit(t, s, p);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::string util;
    for (double u : r.axis_utilisation) util += fmt::format(" {:.3f}", u);
    fmt::print("{} {} m={} {} {}: {:.1f}% of T_min ({:.4g} s), axis util{}, {} events, {:.1f} s wall\n", spec, k, bytes,
               routing, inject, 100 * bound / r.seconds, r.seconds, util, r.events, wall);
  }
}
