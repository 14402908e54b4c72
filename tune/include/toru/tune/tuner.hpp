// SPDX-License-Identifier: BSD-3-Clause
// Online tuning of toru's own knobs between iterations of a running application.
//
//   toru::tune::tuner t(MPI_COMM_WORLD, toru::tune::fft_knobs(), start, {.wisdom = "tune.json",
//                                                                       .key = "fft 128^3 x4"});
//   auto plan = make_plan(t.current());
//   for (int it = 0; it < iters; ++it) {
//     plan.forward(...);                          // one iteration of the application
//     if (t.step()) plan = make_plan(t.current()); // collective; true: the configuration changed
//   }
//   // t.done(): t.best() is in use, t.gain() = start time / best time, persisted to tune.json.
//
// Search: the start configuration is timed first; then, knob by knob (coordinate descent), every
// other value of that knob, keeping the best so far for the others; a candidate replaces the best
// only when it is faster by more than the noise floor (the larger of options.noise_floor and the
// data's own, below); passes repeat until one changes nothing (at most
// max_passes). Each candidate gets `warmup` discarded iterations (plan rebuild, caches) and
// `samples` timed ones; its time is the fastest sample (noise on a shared machine only adds time),
// each sample the max over ranks; the noise floor from the data is how far apart the start's two
// fastest samples are. Every rank
// takes the same decision from the same max-reduced times, and rank 0's choice is broadcast.
// A value a knob cannot take on this run (the plan constructor throws) is skipped: report it with
// step_failed() after catching the error on every rank.
#pragma once

#include <mpi.h>

#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "toru/comm/alltoall_plan.hpp"
#include "toru/fft/options.hpp"

namespace toru::tune {

using config = nlohmann::json;  // {"knob": value, ...}

struct knob {
  std::string name;
  std::vector<nlohmann::json> values;
};

struct tuner_options {
  int samples = 5;            // timed iterations per candidate
  int warmup = 1;             // discarded iterations after each change
  double noise_floor = 0.02;  // relative gain below which a candidate does not replace the best
  int max_passes = 2;
  std::string wisdom{};      // wisdom file (toru/comm/wisdom_store.hpp; section "tune"): read at construction
                             // (a known key: no search), written when done; "" = none
  std::string key{};         // the wisdom entry (problem, sizes, ranks); required with wisdom
  std::string report_dir{};  // where tuner.json goes for toru-tune; empty: $TORU_TUNE_DIR if set
};

class tuner {
 public:
  /// Collective. Throws toru::error(invalid_argument) on every rank for an empty knob, a start that
  /// names a value a knob does not list, or arguments that differ across ranks.
  tuner(MPI_Comm comm, std::vector<knob> knobs, config start, tuner_options opts = {});

  /// Collective, once per iteration: the time since the previous call (or since construction).
  bool step();
  /// Collective, with the iteration time measured by the caller (seconds, this rank).
  bool step(double seconds);
  /// Collective: the current configuration failed to build (every rank caught the same error);
  /// moves on to the next candidate. Returns true (the configuration changed).
  bool step_failed();

  const config& current() const { return current_; }
  bool done() const { return done_; }
  const config& best() const { return best_; }
  double start_seconds() const { return start_seconds_; }
  double best_seconds() const { return best_seconds_; }
  /// start_seconds / best_seconds (1 until done).
  double gain() const { return best_seconds_ > 0 ? start_seconds_ / best_seconds_ : 1; }
  double noise() const { return noise_; }
  bool from_wisdom() const { return from_wisdom_; }
  /// Every candidate measured: {"config": ..., "seconds": ..., "samples": [...]}.
  nlohmann::json report() const;

 private:
  void next_candidate();
  void finish();
  bool begin(const config& c);

  MPI_Comm comm_;
  std::vector<knob> knobs_;
  tuner_options opts_;
  config start_, current_, best_;
  std::vector<config> queue_;  // candidates of the current knob
  std::size_t knob_ = 0;
  int pass_ = 0;
  bool changed_in_pass_ = false;
  int seen_ = 0;  // iterations of the current candidate
  std::vector<double> samples_;
  double start_seconds_ = 0, best_seconds_ = 0, noise_ = 0;
  bool done_ = false, from_wisdom_ = false;
  nlohmann::json history_ = nlohmann::json::array();
  std::chrono::steady_clock::time_point last_;
};

/// The process-wide tuner toru::tune::step() drives (nullptr: none).
void install(tuner* t) noexcept;
/// Steps the installed tuner (collective); false when none is installed or it is done.
bool step();

/// toru's FFT knobs: decomposition (slab, pencil), overlap (true, false), chunks (1, 2, 4, 8) and
/// the all-to-all algorithm (automatic, direct, pairwise, bruck).
std::vector<knob> fft_knobs();
/// `base` with the knobs of `c` applied (keys it lacks keep base's value).
fft::options3d apply(const config& c, fft::options3d base = {});
/// The all-to-all plan knobs (algorithm, chunks) as alltoall_options.
comm::alltoall_options apply(const config& c, comm::alltoall_options base);
/// "decomposition=slab overlap=true ..." (for reports).
std::string to_text(const config& c);

}  // namespace toru::tune
