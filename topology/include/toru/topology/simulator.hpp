// SPDX-License-Identifier: BSD-3-Clause
// toru::topology::simulator — a flow-level simulator of phased and pipelined schedules.
//
// A schedule is a set of tasks with dependencies (a task starts when all the tasks it comes
// `after` have finished). Three kinds of task:
//  (a) messages: explicit point-to-point flows, routed in dimension order (routes()); each is
//      delayed by the start-up latency (the k-th message a node posts in a task starts at
//      k * message_startup after the task starts) and finishes its path's hop latencies after its
//      last byte. For small tori and for checking the closed forms.
//  (b) alltoall: an aggregated regular phase, an all-to-all of `bytes_per_pair` inside every
//      sub-torus spanned by `axes`, all at once. Alone it takes its closed form (alltoall_loads)
//      plus messages_per_node * message_startup plus the sub-torus diameter's hop latencies. It
//      occupies the links of its axes: phases on disjoint axes overlap freely, phases on shared
//      axes share the bandwidth. Costs O(ndims) however big the torus, so 32x32x64 is instant.
//  (c) compute: `seconds` of work on a node-local resource ("cpu", "memory", ...); a resource has
//      a capacity in units (default 1), and one task uses at most one unit.
//
// Sharing: every active transfer or compute task progresses at rate s times its solo rate, and
// the s are set by progressive filling (weighted max-min fairness, the weights being the solo
// rates): tasks with a common bottleneck slow by the same factor, nothing is left idle that an
// unfrozen task could use. Phases see every link of an axis as one resource (all links of a ring
// axis are equally loaded by a regular phase; on a mesh the middle link is the binding one);
// explicit messages see individual links, which regular phases also load with their closed-form
// per-link bytes, so the two kinds may be mixed.
//
// Not thread-safe while being built; run() is const.
//
//   simulator sim(torus::parse("16x16x32"));
//   auto a = sim.add_alltoall({0, 1}, 32 * 4096.0, {}, "A0");       // plane exchange, chunk 0
//   auto b = sim.add_alltoall({2}, 256 * 4096.0, {a}, "B0");         // line exchange, chunk 0
//   auto r = sim.run();   // r.makespan, r.tasks[b].finish
#pragma once

#include <map>
#include <string>
#include <vector>

#include "toru/topology/network_model.hpp"
#include "toru/topology/torus.hpp"

namespace toru::topology {

struct simulator_options {
  double message_startup = 0;  // seconds per message a node posts (software start-up, alpha)
  bool hop_latency = true;     // add each axis's per-hop latency to message and phase times
};

class simulator {
 public:
  using task_id = int;

  explicit simulator(torus shape, simulator_options options = {});

  /// (a) Explicit messages (node indices of shape()).
  task_id add_messages(std::vector<flow> messages, std::vector<task_id> after = {}, std::string label = {});
  /// (b) An all-to-all phase inside every sub-torus spanned by `axes` (each once, non-empty).
  /// messages_per_node < 0 means a direct exchange: sub-torus size - 1.
  task_id add_alltoall(std::vector<int> axes, double bytes_per_pair, std::vector<task_id> after = {},
                       std::string label = {}, int messages_per_node = -1);
  /// (c) Node-local work of `seconds` on `resource`.
  task_id add_compute(std::string resource, double seconds, std::vector<task_id> after = {}, std::string label = {});
  /// Units of a node-local resource (e.g. 3 worker threads); default 1.
  void set_capacity(const std::string& resource, double units);

  struct task_times {
    std::string label;
    double start = 0, finish = 0;
  };
  struct result {
    std::vector<task_times> tasks;  // indexed by task_id
    double makespan = 0;
  };
  /// Runs the schedule from time 0. Throws toru::error if the dependencies name unknown tasks
  /// (checked when added) — cycles cannot be built, since a task may only come after earlier ones.
  result run() const;

  const torus& shape() const { return shape_; }
  int task_count() const { return static_cast<int>(tasks_.size()); }

 private:
  enum class kind { messages, alltoall, compute };
  struct task {
    kind k;
    std::string label;
    std::vector<task_id> after;
    std::vector<flow> messages;
    std::vector<int> axes;
    double bytes = 0;
    int messages_per_node = 0;
    std::string resource;
    double seconds = 0;
  };
  task_id add(task t);
  torus shape_;
  simulator_options options_;
  std::vector<task> tasks_;
  std::map<std::string, double> capacity_;
};

}  // namespace toru::topology
