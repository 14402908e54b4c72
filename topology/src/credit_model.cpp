// SPDX-License-Identifier: BSD-3-Clause
// The credit model's fitted tier and its dispatch: see credit_model.hpp.
#include "toru/topology/credit_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "toru/core/error.hpp"
#include "toru/topology/fitted_model.hpp"
#include "toru/topology/network_model.hpp"
#include "toru/topology/simulator.hpp"

namespace toru::topology {

namespace {

struct point {
  double x, efficiency;
};

// The packet tier at credit_model_version's defaults (3 VCs x 1 KiB, 4 injection FIFOs, 256 B
// packets, round-robin ports), 175 MB/s and 100 ns per hop, the linear schedule (every send posted
// at once). Regenerate with `credit_explore --torus <spec>,bw=175MB/s,lat=100ns --bytes <m>
// --schedules linear --routing <r>` (topology/bench).
//
// Rings, dimension order, 2 KiB per pair, by extent: round-robin ports let the sources nearest a
// link take half of it, so the far ones drain last (the parking-lot effect) and long rings lose.
constexpr std::array<point, 5> ring = {{{8, 0.999}, {16, 0.908}, {32, 0.824}, {64, 0.724}, {128, 0.690}}};
// Two axes, 1 KiB per pair, by balance r: 16x8 (r = 0.5), 16x16 (r = 1).
constexpr std::array<point, 2> plane_dor = {{{0.5, 0.817}, {1.0, 0.676}}};
constexpr std::array<point, 2> plane_adaptive = {{{0.5, 0.459}, {1.0, 0.518}}};
// Three or more axes, by balance r, the largest runs made: 16x8x8 (r = 0.5, 1024 nodes, 512 B per
// pair) and 8x8x8 (r = 1, 512 nodes, 1 KiB). Adaptive routing on an asymmetric torus fills the short
// axes' dynamic VCs with packets that then wait for the long axis, blocking the links behind them.
// The efficiencies fall with size (8x4x4: 57.7% adaptive, 76.7% dimension order; 4x4x4: 91.4%,
// 64.1%; docs/topology.md), so these points are the ones nearest the machines the tier is for.
constexpr std::array<point, 2> torus_dor = {{{0.5, 0.717}, {1.0, 0.586}}};
constexpr std::array<point, 2> torus_adaptive = {{{0.5, 0.492}, {1.0, 0.543}}};

template <std::size_t N>
double interpolate(const std::array<point, N>& f, double x, bool log_x) {
  if (x <= f.front().x) return f.front().efficiency;
  if (x >= f.back().x) return f.back().efficiency;
  for (std::size_t i = 1; i < N; ++i)
    if (x <= f[i].x) {
      const double u =
          log_x ? std::log(x / f[i - 1].x) / std::log(f[i].x / f[i - 1].x) : (x - f[i - 1].x) / (f[i].x - f[i - 1].x);
      return f[i - 1].efficiency + u * (f[i].efficiency - f[i - 1].efficiency);
    }
  return f.back().efficiency;
}

void check_not_switched(const torus& t) {
  for (int a = 0; a < t.ndims(); ++a)
    if (t[a].switched && t[a].extent > 1)
      throw error(errc::unsupported,
                  fmt::format("credit model: axis {} of {} is switched (the credit model covers rings and meshes)", a,
                              t.to_string()));
}

int chunks_of(const credit_model_options& o) { return o.chunks > 0 ? o.chunks : 16; }

}  // namespace

network_model_choice selected_network_model(const torus& t) {
  if (t.transport() == link_transport::credit) return {"credit", std::string(credit_model_version)};
  return {"tcp", std::string(packet_model_version)};
}

double credit_phase_efficiency(const torus& t, credit_params::routing routing) {
  check_not_switched(t);
  std::vector<double> secs;
  int longest = 1;
  const auto loads = alltoall_loads(t, 1.0);
  for (int a = 0; a < t.ndims(); ++a)
    if (t[a].extent > 1) {
      secs.push_back(loads.seconds[static_cast<std::size_t>(a)]);
      longest = std::max(longest, t[a].extent);
    }
  if (secs.empty()) return 1.0;
  if (secs.size() == 1) return interpolate(ring, longest, true);
  std::sort(secs.rbegin(), secs.rend());
  const double r = secs[1] / secs[0];
  const bool adaptive = routing == credit_params::routing::adaptive;
  if (secs.size() == 2) return interpolate(adaptive ? plane_adaptive : plane_dor, r, false);
  return interpolate(adaptive ? torus_adaptive : torus_dor, r, false);
}

double credit_fitted_seconds(const torus& t, packet_schedule_kind kind, double bytes_per_pair,
                             const credit_model_options& opts) {
  check_not_switched(t);
  expect(bytes_per_pair >= 0, "bytes_per_pair", ">= 0", fmt::format("{}", bytes_per_pair));
  const auto routing = opts.packet.route;
  if (kind == packet_schedule_kind::linear)
    return alltoall_bound(t, bytes_per_pair) / credit_phase_efficiency(t, routing) + alltoall_latency_direct(t, 0);
  if (kind != packet_schedule_kind::indirect)
    throw error(errc::unsupported,
                fmt::format("credit model, fitted tier: schedule '{}' (expected linear or indirect)", to_string(kind)));
  const auto P = static_cast<double>(t.size());
  const int L = t.longest_axis();
  const double Z = t[L].extent, Q = P / Z;
  const int C = chunks_of(opts);
  std::vector<int> plane;
  for (int a = 0; a < t.ndims(); ++a)
    if (a != L && t[a].extent > 1) plane.push_back(a);
  // Each phase's bytes are stretched by its packet-tier efficiency: the flow-level simulator then
  // runs it at the rate the packets reach, and shares links between overlapping phases.
  const double e_a = plane.empty() ? 1.0 : credit_phase_efficiency(t.sub(plane), routing);
  const std::vector<int> line{L};
  const double e_b = credit_phase_efficiency(t.sub(line), routing);
  simulator sim(t, {.message_startup = 0, .hop_latency = true});
  const schedule_options so;
  std::vector<int> a(static_cast<std::size_t>(C), -1), b(static_cast<std::size_t>(C), -1);
  for (int c = 0; c < C; ++c) {
    const auto uc = static_cast<std::size_t>(c);
    // the packet schedule's order (packet_schedules.hpp): A(c) after A(c-2); B(c) after A(c),
    // A(c-1) and B(c - window)
    if (!plane.empty())
      a[uc] = sim.add_alltoall(plane, Z * bytes_per_pair / C / e_a,
                               c >= 2 ? std::vector<int>{a[uc - 2]} : std::vector<int>{}, fmt::format("A {}", c),
                               static_cast<int>(Q) - 1);
    std::vector<int> after;
    if (a[uc] >= 0) after.push_back(a[uc]);
    if (c >= 1 && a[uc - 1] >= 0) after.push_back(a[uc - 1]);
    if (c >= so.b_window) after.push_back(b[uc - static_cast<std::size_t>(so.b_window)]);
    b[uc] = sim.add_alltoall(line, Q * bytes_per_pair / C / e_b, std::move(after), fmt::format("B {}", c),
                             static_cast<int>(Z) - 1);
  }
  return sim.run().makespan;
}

credit_estimate credit_alltoall(const torus& t, packet_schedule_kind kind, double bytes_per_pair,
                                const credit_model_options& opts) {
  credit_estimate e;
  e.bound_seconds = alltoall_bound(t, bytes_per_pair);
  if (t.size() <= opts.packet_max_nodes) {
    const auto s = alltoall_schedule(t, kind, bytes_per_pair, {.chunks = chunks_of(opts)});
    e.seconds = simulate_credit(t, s, opts.packet).seconds;
    e.tier = "packet";
  } else {
    e.seconds = credit_fitted_seconds(t, kind, bytes_per_pair, opts);
    e.tier = "fitted";
  }
  e.percent_of_bound = e.seconds > 0 ? 100.0 * e.bound_seconds / e.seconds : 0;
  return e;
}

}  // namespace toru::topology
