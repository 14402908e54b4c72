// SPDX-License-Identifier: BSD-3-Clause
// Runtime search of CGDP's chunk size (the patent's claims 2-5, as reconstructed in
// docs/train.md): start from the cost model's best uniform chunk size, time each candidate over a
// window of steps (median, the first `warmup` steps of the window excluded), grow the search
// space by a factor, and stop when a larger chunk no longer improves; if the first larger one
// does not, search smaller sizes the same way.
//
// Pure bookkeeping: the caller runs the steps, feeds each step's time (max over ranks, so every
// rank feeds the same) and applies current(). Every rank that feeds the same times makes the same
// decisions; toru-train still broadcasts rank 0's choice and checks it.
//
//   toru::train::chunk_search s(layers - 1, model_best, {});
//   while (!s.done()) { run a step with s.current(); s.record(step_seconds); }
//   s.best();  s.log();  // candidates and their median step times
#pragma once

#include <vector>

namespace toru::train {

struct chunk_search_options {
  int window = 5;       // steps per candidate (>= 1)
  int warmup = 1;       // of which the first are excluded (< window)
  double growth = 2.0;  // the metric that grows the search space: next size = size * growth (> 1)
};

struct chunk_trial {
  int chunk_layers = 0;
  double median_seconds = 0;
};

class chunk_search {
 public:
  /// max_chunk: the largest chunk size (L - 1 layers, >= 1); start: the model's best (clamped).
  /// Throws errc::invalid_argument for a bad window, warm-up or growth.
  chunk_search(int max_chunk, int start, const chunk_search_options& options = {});

  bool done() const noexcept { return done_; }
  int current() const noexcept { return current_; }
  /// One step's time with current(); after a full window moves to the next candidate or stops.
  void record(double seconds);
  int best() const noexcept { return best_; }
  double best_seconds() const noexcept { return best_seconds_; }
  const std::vector<chunk_trial>& log() const noexcept { return log_; }

 private:
  void next(double median);
  chunk_search_options options_;
  int max_ = 1, current_ = 1, best_ = 1;
  double best_seconds_ = 0;
  int direction_ = +1;  // +1 growing, -1 shrinking
  bool done_ = false;
  std::vector<double> window_;
  std::vector<chunk_trial> log_;
};

}  // namespace toru::train
