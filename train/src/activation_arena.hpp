// SPDX-License-Identifier: BSD-3-Clause
// Where a model's activations live when they share memory (model_options::share_activations):
// each op output is alive over an interval of the training step's timeline (forward op i at time
// i, its backward at 2N - 1 - i) and tensors whose intervals are disjoint may take the same bytes.
// Offsets by greedy placement, largest first, each at the lowest aligned offset that no placed
// tensor of an overlapping interval occupies (the "greedy by size" of TFLite's arena planner).
#pragma once

#include <cstdint>
#include <vector>

namespace toru::train::detail {

struct lifetime {
  std::int64_t bytes = 0;
  int first = 0, last = 0;  // inclusive: alive from the producer's forward to its last reader
};

struct arena_layout {
  std::vector<std::int64_t> offset;  // per lifetime
  std::int64_t bytes = 0;            // the arena's size
};

/// Offsets (multiples of align) for every lifetime; two lifetimes that overlap in time never
/// overlap in bytes.
arena_layout pack_lifetimes(const std::vector<lifetime>& items, std::int64_t align);

}  // namespace toru::train::detail
