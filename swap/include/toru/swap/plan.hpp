// SPDX-License-Identifier: BSD-3-Clause
// Planning on a training graph: categorized topological order, recompute units, TFLMS swap
// rewriting, and the executable schedule (compute, swap-out, swap-in and free steps in program order).
//
// The rules follow IBM TFLMS v2 (lms.py, topos.py; see docs/swap.md):
//  - level(op) = longest path from a source (data and control edges); distance = level difference;
//  - a tensor whose consumers lie more than `threshold` levels after its producer is swapped out
//    after the producer; its far consumers, grouped when their levels are within `groupby` of each
//    other, each read one swap-in;
//  - a swap-in is triggered after an op found by scanning levels level(dest)-ahead-1 down to at most
//    10 levels further (but after the producer) for an op that reaches dest; ahead < 0 chains the
//    swap-ins one destination level apart (TFLMS "sequential" strategy); sync modes as in TFLMS.
// Departures (program order with release fences, depth-first order, size-dependent rules) are in
// docs/swap.md.
// All functions are pure and thread-safe.
//
//   auto t = toru::swap::make_training_graph(toru::swap::build_model("resnet50", {.batch = 64}));
//   toru::swap::swap_options o;
//   o.threshold = 4;
//   auto p = toru::swap::make_plan(t, o);
//   // p.steps: the program, p.objects: device allocations with their lifetimes
#pragma once

#include <climits>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "toru/swap/graph.hpp"

namespace toru::swap {

struct levels {
  std::vector<int> level;                  // per op
  std::vector<std::vector<int>> by_level;  // op ids per level, ascending id
  int count() const noexcept { return static_cast<int>(by_level.size()); }
};

/// Longest-path levels over data and control edges (Kahn layering). Throws toru::error on a cycle.
levels topo_levels(const graph& g);
inline int distance(const levels& l, int from, int to) { return l.level[to] - l.level[from]; }

enum class sync_mode { none = 0, d2h = 1, h2d = 2, both = 3 };

/// Program order of the ops. by_level: level, then id (TFLMS's categorized order).
/// depth_first: topological order that runs the most recently enabled op first, which finishes one
/// branch (e.g. a residual block's shortcut gradient) before starting the next and so holds fewer
/// tensors at once. Levels and distances are the same either way.
enum class schedule_order { by_level, depth_first };

struct swap_options {
  static constexpr int off = INT_MAX;
  int threshold = off;  // swap a tensor whose consumer is more than this many levels away; `off` = no swaps
  int ahead = 1;        // swap-in trigger distance in levels; < 0: sequential chaining
  int groupby = 0;      // far consumers whose levels differ by at most this share one swap-in
  sync_mode sync = sync_mode::none;
  int swapout_delay = 1;  // ops between a producer and the release of its swapped-out tensor (TFLMS: 1)
  // Beyond TFLMS: swap-ins of tensors larger than this are just-in-time even when H2D is async, so a
  // few huge tensors need not force sync mode on every swap-in.
  std::int64_t prefetch_max_bytes = INT64_MAX;
  // Likewise, tensors larger than this are released right after their last near consumer
  // (swapout_delay 0): only the small ones hold memory while their copy overlaps compute.
  std::int64_t delay_max_bytes = INT64_MAX;
  schedule_order order = schedule_order::by_level;
  // In-place elementwise ops, as frameworks run them: ReLU (PyTorch inplace=True, TensorFlow buffer
  // forwarding), the residual add (torchvision's `out += identity`), gradient accumulation (add_n) and
  // the ReLU gradient (TensorFlow forwards the incoming gradient's buffer). The output takes over the
  // storage of a same-sized input whose last reader is this op and which is not being swapped out.
  bool in_place = true;
  std::vector<int> serialize_levels;  // levels whose ops are chained by control edges (TFLMS serialization)
};

/// A candidate recompute unit: forward ops starting at checkpoint tensors (the unit's inputs).
struct unit {
  int id = 0;
  std::vector<int> ops;            // forward op ids
  std::vector<int> dropped;        // tensors kept for backward now, recomputed when the unit is chosen
  std::vector<int> recompute_ops;  // forward ops re-run to rebuild `dropped`
  std::vector<int> triggers;       // backward ops after which the recomputation runs
  std::int64_t bytes = 0;          // bytes of `dropped`
  double flops = 0;                // flops of `recompute_ops`
};

/// Units from the graph's structure alone (op::block is not read), so a built and an imported copy
/// of a model get the same units: cuts of the forward order where exactly one activation crosses
/// (block boundaries of residual and Inception networks), merged to at least
/// max(4, forward ops / `max_units`) ops each. `fine`: cut after every activation (relu, gelu, clip)
/// and every pooling op that a single tensor crosses (conv-bn-relu units): more checkpoints kept,
/// less recomputed at once.
std::vector<unit> find_units(const graph& training, int max_units = 64, bool fine = false);

/// Copy of `training` where each chosen unit's `dropped` tensors are rebuilt by recompute ops (clones
/// of the unit's forward ops, run after the unit's triggers) and read from there by the backward ops.
graph apply_recompute(const graph& training, const std::vector<unit>& units, const std::vector<int>& chosen);

enum class step_kind { compute, swap_out, swap_in, free };

struct step {
  step_kind kind = step_kind::compute;
  int op = -1;            // compute: the op
  int object = -1;        // swap_out / swap_in / free: the device object
  bool fence = false;     // free of a swapped-out object: compute waits for its device-to-host copy
  bool in_place = false;  // free just before an in-place op: its output takes over this storage
};

/// One device allocation: an op output (copy 0) or a swap-in copy of it (copy >= 1).
struct memory_object {
  int tensor = -1;
  int copy = 0;
  std::int64_t bytes = 0;
  int alloc_step = -1;     // -1: resident from the start (step inputs)
  int free_step = -1;      // step index of its free
  int swap_out_step = -1;  // copy 0 of a swapped tensor: its swap-out step
  int source = -1;         // swap-in copies: the object index of copy 0
};

struct plan {
  std::shared_ptr<const graph> g;  // the training graph after recomputation and serialization edges
  levels lv;
  std::vector<int> order;  // compute order (level, then id)
  std::vector<step> steps;
  std::vector<memory_object> objects;
  /// Per op, the object read for each input (-1 for parameters), in input order: input_objects[op].
  struct per_op_lists {
    std::vector<int> offset, item;
    std::span<const int> operator[](int op) const {
      return {item.data() + offset[op], static_cast<std::size_t>(offset[op + 1] - offset[op])};
    }
  } input_objects;
  swap_options options;
  std::vector<int> recomputed_units;
};

/// Builds the swap rewrite and schedule. Throws toru::error for invalid options (negative
/// threshold or groupby, a serialize level out of range).
plan make_plan(std::shared_ptr<const graph> training, const swap_options& options);
inline plan make_plan(const graph& training, const swap_options& options) {
  return make_plan(std::make_shared<const graph>(training), options);
}

/// Memory replay of the schedule in program order: device bytes in use after each step (objects
/// only, no persistent state), and the step where it peaks.
struct replay {
  std::vector<std::int64_t> in_use;  // after each step
  std::int64_t initial = 0;          // step inputs resident before step 0
  std::int64_t peak = 0;
  int peak_step = -1;
  std::int64_t host_peak = 0;  // bytes of swapped-out tensors held on the host
};
replay replay_memory(const plan& p);

}  // namespace toru::swap
