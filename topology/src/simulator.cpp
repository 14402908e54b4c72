// SPDX-License-Identifier: BSD-3-Clause
#include "toru/topology/simulator.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>
#include <unordered_map>

#include <fmt/format.h>

#include "toru/core/error.hpp"

namespace toru::topology {
namespace {

constexpr double inf = std::numeric_limits<double>::infinity();

// Bytes one directed link carries in a regular all-to-all of m bytes per pair over sub-tori of
// `group` nodes, at its position on its axis (mesh links are busiest in the middle).
double phase_link_bytes(const torus& t, std::int64_t link, double m, std::int64_t group) {
  const int nd = t.ndims();
  const int ax = static_cast<int>((link / 2) % nd);
  const int dir = link % 2 == 0 ? 1 : -1;
  const std::int64_t node = link / 2 / nd;
  const axis& a = t[ax];
  const double d = a.extent;
  const double others = static_cast<double>(group) / d;
  if (a.extent == 1) return 0;
  if (a.switched) return m * static_cast<double>(group) * (d - 1) / d;
  std::int64_t c = node;
  for (int i = 0; i < ax; ++i) c /= t[i].extent;
  const int k = static_cast<int>(c % a.extent);
  if (a.wrap && a.extent > 2) return m * static_cast<double>(group) * effective_extent(a) / 8;
  if (a.wrap) return dir > 0 ? m * others : 0;  // ring of 2: the one link, used the + way only
  // Mesh: the link from k to k+1 carries the (k+1)(D-1-k) line pairs that straddle it.
  if (dir > 0) return k + 1 < a.extent ? m * others * (k + 1) * (a.extent - 1 - k) : 0;
  return k > 0 ? m * others * k * (a.extent - k) : 0;
}

int max_hops(const axis& a) {
  if (a.extent == 1) return 0;
  if (a.switched) return 1;
  return a.wrap ? a.extent / 2 : a.extent - 1;
}

struct activity {
  int task = 0;
  double remaining = 0;  // bytes (messages) or fraction of the task (phases, compute)
  double solo = 0;       // rate when alone
  double activate_at = 0;
  double tail = 0;                          // latency after the last byte
  std::vector<std::pair<int, double>> use;  // (resource, units consumed per unit of progress)
  double s = 0;                             // share of solo rate granted
};

}  // namespace

simulator::simulator(torus shape, simulator_options options) : shape_(std::move(shape)), options_(options) {
  expect(options_.message_startup >= 0 && std::isfinite(options_.message_startup), "simulator message_startup",
         "a time >= 0 in seconds", std::to_string(options_.message_startup));
}

simulator::task_id simulator::add(task t) {
  const int id = static_cast<int>(tasks_.size());
  for (task_id a : t.after)
    if (a < 0 || a >= id)
      throw error(
          errc::invalid_argument,
          fmt::format("simulator task '{}' after: expected earlier task ids 0..{}, got {}", t.label, id - 1, a));
  if (t.label.empty()) t.label = fmt::format("task{}", id);
  tasks_.push_back(std::move(t));
  return id;
}

simulator::task_id simulator::add_messages(std::vector<flow> messages, std::vector<task_id> after, std::string label) {
  for (const auto& f : messages) {
    if (f.src < 0 || f.src >= shape_.size() || f.dst < 0 || f.dst >= shape_.size())
      throw error(errc::invalid_argument,
                  fmt::format("simulator message {}->{}: expected nodes in 0..{}", f.src, f.dst, shape_.size() - 1));
    if (!(f.bytes >= 0) || !std::isfinite(f.bytes))
      throw error(errc::invalid_argument,
                  fmt::format("simulator message {}->{} bytes: expected >= 0, got {}", f.src, f.dst, f.bytes));
  }
  task t;
  t.k = kind::messages;
  t.label = std::move(label);
  t.after = std::move(after);
  t.messages = std::move(messages);
  return add(std::move(t));
}

simulator::task_id simulator::add_alltoall(std::vector<int> axes, double bytes_per_pair, std::vector<task_id> after,
                                           std::string label, int messages_per_node) {
  expect(!axes.empty(), "simulator alltoall axes", "at least one axis", "none");
  (void)alltoall_loads(shape_, bytes_per_pair, axes);  // validates axes and bytes
  std::int64_t group = 1;
  for (int a : axes) group *= shape_[a].extent;
  task t;
  t.k = kind::alltoall;
  t.label = std::move(label);
  t.after = std::move(after);
  t.axes = std::move(axes);
  t.bytes = bytes_per_pair;
  t.messages_per_node = messages_per_node < 0 ? static_cast<int>(group - 1) : messages_per_node;
  return add(std::move(t));
}

simulator::task_id simulator::add_compute(std::string resource, double seconds, std::vector<task_id> after,
                                          std::string label) {
  expect(!resource.empty(), "simulator compute resource", "a name such as \"cpu\"", "an empty name");
  expect(seconds >= 0 && std::isfinite(seconds), "simulator compute seconds", "a time >= 0", std::to_string(seconds));
  task t;
  t.k = kind::compute;
  t.label = std::move(label);
  t.after = std::move(after);
  t.resource = std::move(resource);
  t.seconds = seconds;
  return add(std::move(t));
}

void simulator::set_capacity(const std::string& resource, double units) {
  expect(units > 0 && std::isfinite(units), "simulator capacity of '" + resource + "'", "units > 0",
         std::to_string(units));
  capacity_[resource] = units;
}

simulator::result simulator::run() const {
  const int nd = shape_.ndims();
  // Resources: one per axis (regular phases), one per directed link used by an explicit message,
  // one per named node-local resource.
  std::vector<double> cap;
  for (int a = 0; a < nd; ++a) cap.push_back(1.0);
  std::unordered_map<std::int64_t, int> link_res;
  std::unordered_map<std::string, int> named_res;
  std::vector<std::vector<std::vector<path>>> msg_routes(tasks_.size());
  for (std::size_t i = 0; i < tasks_.size(); ++i) {
    const task& t = tasks_[i];
    if (t.k == kind::messages) {
      for (const auto& f : t.messages) {
        msg_routes[i].push_back(routes(shape_, f.src, f.dst));
        for (const auto& p : msg_routes[i].back())
          for (const auto& s : p.steps) {
            std::int64_t l[2];
            const int n = step_links(shape_, s, l);
            for (int k = 0; k < n; ++k)
              if (link_res.emplace(l[k], static_cast<int>(cap.size())).second) cap.push_back(shape_[s.axis].bandwidth);
          }
      }
    } else if (t.k == kind::compute && !named_res.contains(t.resource)) {
      named_res.emplace(t.resource, static_cast<int>(cap.size()));
      auto it = capacity_.find(t.resource);
      cap.push_back(it == capacity_.end() ? 1.0 : it->second);
    }
  }

  result out;
  out.tasks.resize(tasks_.size());
  std::vector<int> waiting(tasks_.size()), outstanding(tasks_.size(), 0);
  std::vector<std::vector<int>> dependents(tasks_.size());
  for (std::size_t i = 0; i < tasks_.size(); ++i) {
    out.tasks[i].label = tasks_[i].label;
    waiting[i] = static_cast<int>(tasks_[i].after.size());
    for (int a : tasks_[i].after) dependents[static_cast<std::size_t>(a)].push_back(static_cast<int>(i));
  }

  std::vector<activity> acts;
  std::vector<int> active;
  using event = std::pair<double, int>;
  std::priority_queue<event, std::vector<event>, std::greater<>> activations, task_done;
  double now = 0;

  auto finish_part = [&](int tid, double at) {
    auto& tt = out.tasks[static_cast<std::size_t>(tid)];
    tt.finish = std::max(tt.finish, at);
    if (--outstanding[static_cast<std::size_t>(tid)] == 0) task_done.emplace(tt.finish, tid);
  };
  auto add_activity = [&](activity a) {
    ++outstanding[static_cast<std::size_t>(a.task)];
    acts.push_back(std::move(a));
    activations.emplace(acts.back().activate_at, static_cast<int>(acts.size() - 1));
  };
  auto start_task = [&](int id) {
    const task& t = tasks_[static_cast<std::size_t>(id)];
    auto& tt = out.tasks[static_cast<std::size_t>(id)];
    tt.start = tt.finish = now;
    ++outstanding[static_cast<std::size_t>(id)];  // held until all parts are queued
    if (t.k == kind::messages) {
      std::unordered_map<std::int64_t, int> posted;  // messages posted so far per source node
      for (std::size_t m = 0; m < t.messages.size(); ++m) {
        const flow& f = t.messages[m];
        const double at = now + ++posted[f.src] * options_.message_startup;
        for (const auto& p : msg_routes[static_cast<std::size_t>(id)][m]) {
          activity a;
          a.task = id;
          a.remaining = p.share * f.bytes;
          a.activate_at = at;
          a.solo = inf;
          for (const auto& s : p.steps) {
            if (options_.hop_latency) a.tail += shape_[s.axis].latency;
            std::int64_t l[2];
            const int n = step_links(shape_, s, l);
            for (int k = 0; k < n; ++k) {
              a.use.emplace_back(link_res.at(l[k]), 1.0);
              a.solo = std::min(a.solo, shape_[s.axis].bandwidth);
            }
          }
          if (p.steps.empty()) a.remaining = 0;
          add_activity(std::move(a));
        }
      }
    } else if (t.k == kind::alltoall) {
      const auto model = alltoall_loads(shape_, t.bytes, t.axes);
      activity a;
      a.task = id;
      a.remaining = model.bound_seconds > 0 ? 1.0 : 0.0;
      a.activate_at = now + t.messages_per_node * options_.message_startup;
      for (int ax : t.axes) {
        if (options_.hop_latency) a.tail += max_hops(shape_[ax]) * shape_[ax].latency;
        if (model.seconds[static_cast<std::size_t>(ax)] > 0)
          a.use.emplace_back(ax, model.seconds[static_cast<std::size_t>(ax)]);
      }
      for (const auto& [link, res] : link_res) {
        const int ax = static_cast<int>((link / 2) % nd);
        if (std::find(t.axes.begin(), t.axes.end(), ax) == t.axes.end()) continue;
        const double b = phase_link_bytes(shape_, link, t.bytes, model.group_size);
        if (b > 0) a.use.emplace_back(res, b);
      }
      a.solo = model.bound_seconds > 0 ? 1.0 / model.bound_seconds : 0.0;
      add_activity(std::move(a));
    } else {
      activity a;
      a.task = id;
      a.remaining = t.seconds > 0 ? 1.0 : 0.0;
      a.activate_at = now;
      a.solo = t.seconds > 0 ? 1.0 / t.seconds : 0.0;
      a.use.emplace_back(named_res.at(t.resource), t.seconds);
      add_activity(std::move(a));
    }
    finish_part(id, now);
  };

  // Weighted max-min fairness by progressive filling: every unfrozen activity's share s rises
  // together until a resource saturates (its users freeze) or s reaches 1 (solo speed).
  auto assign_rates = [&] {
    std::vector<double> left = cap, load(cap.size());
    std::vector<int> unfrozen = active;
    for (int i : active) acts[static_cast<std::size_t>(i)].s = 0;
    double level = 0;
    while (!unfrozen.empty()) {
      std::fill(load.begin(), load.end(), 0.0);
      for (int i : unfrozen)
        for (auto [r, c] : acts[static_cast<std::size_t>(i)].use)
          load[static_cast<std::size_t>(r)] += c * acts[static_cast<std::size_t>(i)].solo;
      double step = 1 - level;
      for (std::size_t r = 0; r < cap.size(); ++r)
        if (load[r] > 0) step = std::min(step, left[r] / load[r]);
      step = std::max(step, 0.0);
      level += step;
      std::vector<bool> saturated(cap.size(), false);
      for (std::size_t r = 0; r < cap.size(); ++r) {
        left[r] -= step * load[r];
        saturated[r] = load[r] > 0 && left[r] <= 1e-12 * cap[r];
      }
      std::vector<int> still;
      for (int i : unfrozen) {
        auto& a = acts[static_cast<std::size_t>(i)];
        a.s = level;
        const bool frozen = level >= 1 - 1e-15 || std::any_of(a.use.begin(), a.use.end(), [&](auto rc) {
                              return saturated[static_cast<std::size_t>(rc.first)];
                            });
        if (!frozen) still.push_back(i);
      }
      unfrozen = std::move(still);
    }
  };

  for (std::size_t i = 0; i < tasks_.size(); ++i)
    if (waiting[i] == 0) start_task(static_cast<int>(i));

  while (!active.empty() || !activations.empty() || !task_done.empty()) {
    assign_rates();
    double next = inf;
    if (!activations.empty()) next = std::min(next, activations.top().first);
    if (!task_done.empty()) next = std::min(next, task_done.top().first);
    for (int i : active) {
      const auto& a = acts[static_cast<std::size_t>(i)];
      if (a.s > 0) next = std::min(next, now + a.remaining / (a.s * a.solo));
    }
    if (next == inf) throw error(errc::internal, "simulator: no progress possible (a resource has zero capacity?)");
    const double dt = next - now;
    const double before = now;
    now = next;
    std::vector<int> still;
    for (int i : active) {
      auto& a = acts[static_cast<std::size_t>(i)];
      const double rate = a.s * a.solo;
      // Compare finishing times, not remaining work: when remaining/rate is below the spacing of
      // doubles near `now`, dt rounds to 0 and only this test lets the activity end.
      if (rate > 0 && (before + a.remaining / rate <= next || a.remaining <= rate * dt * (1 + 1e-12))) {
        a.remaining = 0;
        finish_part(a.task, now + a.tail);
      } else {
        a.remaining -= rate * dt;
        still.push_back(i);
      }
    }
    active = std::move(still);
    while (!activations.empty() && activations.top().first <= now) {
      const int i = activations.top().second;
      activations.pop();
      auto& a = acts[static_cast<std::size_t>(i)];
      if (a.remaining <= 0 || a.solo <= 0)
        finish_part(a.task, now + a.tail);
      else
        active.push_back(i);
    }
    while (!task_done.empty() && task_done.top().first <= now) {
      const int id = task_done.top().second;
      task_done.pop();
      out.makespan = std::max(out.makespan, out.tasks[static_cast<std::size_t>(id)].finish);
      for (int d : dependents[static_cast<std::size_t>(id)])
        if (--waiting[static_cast<std::size_t>(d)] == 0) start_task(d);
    }
  }
  return out;
}

}  // namespace toru::topology
