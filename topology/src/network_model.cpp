// SPDX-License-Identifier: BSD-3-Clause
#include "toru/topology/network_model.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "toru/core/error.hpp"

namespace toru::topology {
namespace {

std::vector<int> checked_axes(const torus& t, std::span<const int> axes, std::string_view what) {
  std::vector<int> out;
  if (axes.empty()) {
    for (int i = 0; i < t.ndims(); ++i) out.push_back(i);
    return out;
  }
  std::vector<bool> seen(static_cast<std::size_t>(t.ndims()), false);
  for (int a : axes) {
    if (a < 0 || a >= t.ndims() || seen[static_cast<std::size_t>(a)])
      throw error(errc::invalid_argument, fmt::format("{}: expected distinct axes in 0..{}, got [{}]", what,
                                                      t.ndims() - 1, fmt::join(axes, ",")));
    seen[static_cast<std::size_t>(a)] = true;
    out.push_back(a);
  }
  return out;
}

void check_node(const torus& t, std::int64_t n, std::string_view what) {
  if (n < 0 || n >= t.size())
    throw error(errc::invalid_argument,
                fmt::format("{}: expected a node in 0..{} of torus {}, got {}", what, t.size() - 1, t.to_string(), n));
}

int max_distance(const axis& a) {
  if (a.extent == 1) return 0;
  if (a.switched) return 1;
  return a.wrap ? a.extent / 2 : a.extent - 1;
}

bool is_tie(const axis& a, int displacement) {
  return a.wrap && !a.switched && a.extent > 2 && a.extent % 2 == 0 && 2 * displacement == a.extent;
}

}  // namespace

int axis_displacement(const axis& a, int from, int to) {
  if (from == to) return 0;
  if (a.switched || !a.wrap) return to - from;
  const int d = ((to - from) % a.extent + a.extent) % a.extent;
  return 2 * d <= a.extent ? d : d - a.extent;
}

int axis_distance(const axis& a, int from, int to) {
  if (from == to) return 0;
  if (a.switched) return 1;
  return std::abs(axis_displacement(a, from, to));
}

int hop_count(const torus& t, std::int64_t src, std::int64_t dst) {
  check_node(t, src, "hop_count src");
  check_node(t, dst, "hop_count dst");
  const auto a = t.coords(src), b = t.coords(dst);
  int hops = 0;
  for (int i = 0; i < t.ndims(); ++i)
    hops += axis_distance(t[i], a[static_cast<std::size_t>(i)], b[static_cast<std::size_t>(i)]);
  return hops;
}

int diameter(const torus& t) {
  int d = 0;
  for (const auto& a : t.axes()) d += max_distance(a);
  return d;
}

std::vector<path> routes(const torus& t, std::int64_t src, std::int64_t dst) {
  check_node(t, src, "routes src");
  check_node(t, dst, "routes dst");
  const auto target = t.coords(dst);
  std::vector<path> done;
  // Each partial path carries its current position; a tied ring axis forks it in two.
  struct partial {
    path p;
    std::vector<int> at;
  };
  std::vector<partial> work{{path{}, t.coords(src)}};
  for (int i = 0; i < t.ndims(); ++i) {
    const axis& ax = t[i];
    const auto ui = static_cast<std::size_t>(i);
    std::vector<partial> next;
    for (auto& w : work) {
      const int disp = axis_displacement(ax, w.at[ui], target[ui]);
      if (disp == 0) {
        next.push_back(std::move(w));
        continue;
      }
      auto walk = [&](partial q, int dir, int steps) {
        for (int s = 0; s < steps; ++s) {
          route_step st;
          st.from = t.node_unchecked(q.at);
          st.axis = i;
          st.dir = dir;
          if (ax.switched) {
            q.at[ui] = target[ui];
          } else {
            q.at[ui] = ((q.at[ui] + dir) % ax.extent + ax.extent) % ax.extent;
          }
          st.to = t.node_unchecked(q.at);
          q.p.steps.push_back(st);
        }
        next.push_back(std::move(q));
      };
      if (ax.switched) {
        walk(std::move(w), 1, 1);
      } else if (is_tie(ax, disp)) {
        partial other = w;
        other.p.share *= 0.5;
        w.p.share *= 0.5;
        walk(std::move(w), 1, disp);
        walk(std::move(other), -1, disp);
      } else {
        walk(std::move(w), disp > 0 ? 1 : -1, std::abs(disp));
      }
    }
    work = std::move(next);
  }
  for (auto& w : work) done.push_back(std::move(w.p));
  return done;
}

path route(const torus& t, std::int64_t src, std::int64_t dst) {
  auto all = routes(t, src, dst);
  path p = std::move(all.front());  // the first fork always took the + way
  p.share = 1;
  return p;
}

std::int64_t link_index(const torus& t, std::int64_t node, int axis, int dir) {
  return (node * t.ndims() + axis) * 2 + (dir > 0 ? 0 : 1);
}

std::int64_t link_count(const torus& t) { return 2 * t.ndims() * t.size(); }

int step_links(const torus& t, const route_step& s, std::int64_t out[2]) {
  if (t[s.axis].switched) {
    out[0] = link_index(t, s.from, s.axis, +1);
    out[1] = link_index(t, s.to, s.axis, -1);
    return 2;
  }
  out[0] = link_index(t, s.from, s.axis, s.dir);
  return 1;
}

load_map link_loads(const torus& t, std::span<const flow> pattern) {
  load_map m;
  m.bytes.assign(static_cast<std::size_t>(link_count(t)), 0.0);
  for (const auto& f : pattern) {
    if (!(f.bytes >= 0) || !std::isfinite(f.bytes))
      throw error(errc::invalid_argument,
                  fmt::format("link_loads flow {}->{} bytes: expected >= 0, got {}", f.src, f.dst, f.bytes));
    if (f.src == f.dst || f.bytes == 0) {
      check_node(t, f.src, "link_loads flow src");
      continue;
    }
    for (const auto& p : routes(t, f.src, f.dst))
      for (const auto& s : p.steps) {
        std::int64_t l[2];
        const int n = step_links(t, s, l);
        for (int k = 0; k < n; ++k) m.bytes[static_cast<std::size_t>(l[k])] += p.share * f.bytes;
      }
  }
  const auto nd = static_cast<std::size_t>(t.ndims());
  m.axis_max.assign(nd, 0.0);
  m.axis_total.assign(nd, 0.0);
  m.axis_seconds.assign(nd, 0.0);
  for (std::size_t l = 0; l < m.bytes.size(); ++l) {
    const std::size_t a = (l / 2) % nd;
    m.axis_max[a] = std::max(m.axis_max[a], m.bytes[l]);
    m.axis_total[a] += m.bytes[l];
  }
  for (std::size_t a = 0; a < nd; ++a) {
    m.axis_seconds[a] = m.axis_max[a] / t[static_cast<int>(a)].bandwidth;
    if (m.axis_seconds[a] >= m.seconds) {
      m.seconds = m.axis_seconds[a];
      m.bottleneck_axis = static_cast<int>(a);
    }
  }
  return m;
}

std::vector<flow> alltoall_pattern(const torus& t, double bytes_per_pair, std::span<const int> axes) {
  const auto s = checked_axes(t, axes, "alltoall_pattern axes");
  std::int64_t group = 1;
  for (int a : s) group *= t[a].extent;
  expect(t.size() * group <= (std::int64_t{1} << 26), "alltoall_pattern torus",
         "at most 2^26 flows (use alltoall_loads for big tori)", t.to_string());
  std::vector<flow> out;
  out.reserve(static_cast<std::size_t>(t.size() * (group - 1)));
  std::vector<int> a(static_cast<std::size_t>(t.ndims())), b;
  for (std::int64_t src = 0; src < t.size(); ++src) {
    t.coords_into(src, a);
    for (std::int64_t k = 0; k < group; ++k) {
      b = a;
      std::int64_t r = k;
      for (int ax : s) {
        b[static_cast<std::size_t>(ax)] = static_cast<int>(r % t[ax].extent);
        r /= t[ax].extent;
      }
      const std::int64_t dst = t.node_unchecked(b);
      if (dst != src) out.push_back({src, dst, bytes_per_pair});
    }
  }
  return out;
}

double effective_extent(const axis& a) {
  const double d = a.extent;
  if (a.extent == 1) return 0;
  if (a.switched) return 8 * (d - 1) / d;
  if (a.extent == 2) return 4;  // one link joins the pair, whether or not the axis "wraps"
  if (a.wrap) return a.extent % 2 == 0 ? d : (d * d - 1) / d;
  return a.extent % 2 == 0 ? 2 * d : 2 * (d * d - 1) / d;
}

alltoall_model alltoall_loads(const torus& t, double bytes_per_pair, std::span<const int> axes) {
  if (!(bytes_per_pair >= 0) || !std::isfinite(bytes_per_pair))
    throw error(errc::invalid_argument,
                fmt::format("all-to-all bytes per pair: expected a finite value >= 0, got {}", bytes_per_pair));
  const auto s = checked_axes(t, axes, "all-to-all axes");
  alltoall_model m;
  const auto nd = static_cast<std::size_t>(t.ndims());
  m.link_bytes.assign(nd, 0.0);
  m.seconds.assign(nd, 0.0);
  m.group_size = 1;
  for (int a : s) m.group_size *= t[a].extent;
  m.bottleneck_axis = s.back();
  for (int a : s) {
    const auto ua = static_cast<std::size_t>(a);
    m.link_bytes[ua] = bytes_per_pair * static_cast<double>(m.group_size) * effective_extent(t[a]) / 8;
    m.seconds[ua] = m.link_bytes[ua] / t[a].bandwidth;
  }
  double best = -1;
  for (std::size_t a = 0; a < nd; ++a)
    if (std::find(s.begin(), s.end(), static_cast<int>(a)) != s.end() && m.seconds[a] >= best) {
      best = m.seconds[a];
      m.bottleneck_axis = static_cast<int>(a);
    }
  m.bound_seconds = std::max(best, 0.0);
  return m;
}

double alltoall_bound(const torus& t, double bytes_per_pair) { return alltoall_loads(t, bytes_per_pair).bound_seconds; }

double alltoall_bound(const torus& t, double bytes_per_pair, std::span<const int> axes) {
  return alltoall_loads(t, bytes_per_pair, axes).bound_seconds;
}

namespace {
double diameter_latency(const torus& t) {
  double s = 0;
  for (const auto& a : t.axes()) s += max_distance(a) * a.latency;
  return s;
}
}  // namespace

double alltoall_latency_direct(const torus& t, double alpha) {
  return static_cast<double>(t.size() - 1) * alpha + diameter_latency(t);
}

double alltoall_latency_indirect(const torus& t, double alpha) {
  const std::int64_t l = t[t.longest_axis()].extent;
  return static_cast<double>(t.size() / l - 1 + l - 1) * alpha + diameter_latency(t);
}

}  // namespace toru::topology
