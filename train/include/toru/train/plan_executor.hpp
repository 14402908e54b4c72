// SPDX-License-Identifier: BSD-3-Clause
// Executes a swap/ plan (swap-outs, swap-ins, recomputation, frees) inside the trainer's forward and
// backward, on the host-emulated device (emulated_device.hpp): one compute stream (the calling
// thread) and two copy streams, synchronised by events, as the planner's time model assumes.
//
// The plan is made for the graph the executor really runs ("the toru executor's profile"): the
// model's forward graph with every tensor's bytes set to its storage in the device arena (64-byte
// granules, the kernel's layout), the tensors each layer's backward really reads as its saved
// tensors, parameter gradients in the model's persistent flat buffer, and the persistent state
// (parameters, gradients, running statistics, kernel state, workspace) taken from the arena. So the
// arena's measured peak equals the planner's replay exactly, and a plan the planner accepts cannot
// overrun the budget.
//
// Results are bit-identical to the model's default schedule: swapping moves bytes, recomputation
// re-runs the same deterministic kernels on the same inputs (batch-norm running statistics are
// updated once, by the first run), gradients of forks are summed in the default schedule's order.
//
// Not thread-safe; one executor per model.
//
//   toru::train::model m(g, {.memory_capacity = budget, .defer_activations = true});
//   auto ex = toru::train::plan_executor::install(m, {.strategy = toru::swap::strategy::hybrid,
//                                                     .budget = budget});
//   m.forward(images, labels, {});   // runs the plan's forward part
//   m.backward();                    // and the rest
//   ex->last_step().measured_peak;   // == ex->planned_peak()
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "toru/swap/plan.hpp"
#include "toru/swap/simulate.hpp"
#include "toru/swap/tune.hpp"
#include "toru/train/emulated_device.hpp"
#include "toru/train/model.hpp"

namespace toru::train {

struct executor_options {
  swap::strategy strategy = swap::strategy::automatic;
  std::size_t budget = 0;   // device bytes for everything the model holds; 0: the model's capacity
  emulated_link link = {};  // the emulated copy engines
  // The device description the planner times plans with. Its memory and link fields are set from
  // `budget` and `link`; the compute fields (flops, memory bandwidth, op overhead) are what the
  // planner assumes until calibrate() replaces them by measured per-op times.
  swap::device_spec device = swap::device_preset("v100-nvlink2");
  bool split_weight_grad = true;  // conv/linear weight and data gradients as two steps
  // Calibration at the planned batch: after this many training steps, the next one re-plans with
  // each op's fastest time measured in those steps (interference on a shared host only adds time;
  // swap::sim_options::measured_op_seconds; recompute
  // clones take their forward op's time), so the planner's times are this model's at this batch on
  // this device, not a rate fitted elsewhere. 0: plan with `device` only. A fixed plan is kept.
  int calibrate_after = 1;
  // Called on every rank with the per-op times before the calibration re-plans: an engine running
  // one model per rank max-reduces them here (collectively: every rank calibrates at the same
  // step), so that every rank makes the same plan from the same times. Empty: this rank's own.
  std::function<void(std::span<double>)> agree_times = {};
  // The emulated device's compute rate: every compute op occupies the compute stream for at least
  // the time this device's model gives it (swap::op_seconds; the kernel runs, then the stream
  // sleeps out the rest), so a slow device with set compute/link ratios runs here reproducibly
  // whatever the host's load. Unset: kernels at the host's own speed.
  std::optional<swap::device_spec> emulated_compute = {};
  // A given plan instead of the tuner's: these swap options on the graph with these recompute units
  // (ids from swap::find_units(training graph, 64, fine_units)). Still refused if it does not fit.
  struct fixed_plan {
    swap::swap_options swap = {};
    std::vector<int> recompute_units = {};
    bool fine_units = true;
  };
  std::optional<fixed_plan> fixed = {};
};

/// What one executed step measured.
struct step_measurement {
  std::int64_t measured_peak = 0;  // arena high-water mark above the persistent state, bytes
  double step_seconds = 0;         // wall time from the first to the last step of the plan
  double compute_seconds = 0, stall_seconds = 0;
  std::int64_t swapped_out_bytes = 0, swapped_in_bytes = 0;
  int ops_recomputed = 0;
  double predicted_step_seconds = 0;  // the planner's time for the plan this step ran
  bool calibrated = false;            // that plan was made with measured per-op times
  swap::sim_result trace = {};        // measured: trace events and memory samples, for the timeline
};

namespace detail {
class plan_executor_impl;
}

class plan_executor {
 public:
  /// Plans the model (built with defer_activations) for the budget with swap/'s tuner and installs
  /// the executor into the model. Throws toru::error(out_of_memory) before executing anything when
  /// the planner finds no plan of the strategy that fits, naming the budget and what the leanest
  /// plan needs; invalid_argument for a model without deferred activations.
  static std::shared_ptr<plan_executor> install(model& m, const executor_options& options);
  ~plan_executor();

  const swap::plan& plan() const;
  const swap::tuned_plan& tuned() const;
  /// Persistent bytes (in the arena at rest, apart from the step inputs) + the replay's peak: what
  /// the arena's high-water mark reaches during a step.
  std::int64_t persistent_bytes() const;
  std::int64_t planned_peak() const;  // the replay's peak (step inputs and live objects)
  const step_measurement& last_step() const;
  /// Whether the current plan was made with measured per-op times (see calibrate_after).
  bool calibrated() const;

  /// Replaces the device's compute model by the per-op times measured in the last step and
  /// returns the planner's simulation of the plan with them (the prediction to compare the
  /// measured step time with).
  swap::sim_result simulate_measured_ops() const;
  /// SVG: the planned timeline (planner's simulation with the measured per-op times) above the
  /// measured one.
  std::string timeline_svg(const std::string& title) const;

 private:
  explicit plan_executor(std::unique_ptr<detail::plan_executor_impl> impl);
  std::unique_ptr<detail::plan_executor_impl> impl_;
};

/// The model's forward graph as the executor runs it (bytes, saved tensors and gradient rules of
/// the executor's profile; see the file comment). Exposed for tests and the planner CLI.
swap::graph executor_graph(model& m);

}  // namespace toru::train
