// SPDX-License-Identifier: BSD-3-Clause
// Simulator: exact memory replay of a plan plus a time model with one compute queue and two copy
// queues (device-to-host, host-to-device).
//
// Time model. Steps run in program order. An op starts when the compute queue is free and every
// swap-in it reads has landed; it takes max(flops / rate, bytes_touched / memory_bandwidth) +
// op_overhead. A swap-out starts when its producer has finished and the D2H queue is free; a swap-in
// when its trigger op has finished, its swap-out has landed and the H2D queue is free; copies take
// bytes / bandwidth. The release of a swapped-out tensor is a fence: compute after it waits for the
// D2H copy, because the memory is reused from there on. Step time = when all queues are done.
//
// Memory. Persistent bytes = parameters x (1 + optimizer state factor) plus `workspace_bytes`; the
// budget is memory_fraction x device memory (TFLMS uses 0.9 for fragmentation). Peak = persistent +
// the replay's peak of live objects.
//
// Bound (reported with every plan), from the swap reference §6.2:
//   phase bound  T >= max(C_f, S_out/BW_d2h) + max(C_b + R, S_in/BW_h2d)
//   global bound T >= max(C_f + C_b + R, S_out/BW_d2h, S_in/BW_h2d)
// C_f forward compute, C_b backward + update compute, R recompute time, S bytes swapped.
//
// Pure, thread-safe.
//
//   auto r = toru::swap::simulate(plan, toru::swap::device_preset("v100-nvlink2"));
//   if (!r.fits) std::puts(r.overflow_at.c_str());
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "toru/swap/device.hpp"
#include "toru/swap/plan.hpp"

namespace toru::swap {

struct sim_options {
  double memory_fraction = 0.9;
  optimizer opt = optimizer::momentum;
  std::int64_t workspace_bytes = 0;  // library workspaces (cuDNN, cuBLAS) held through the step
  std::int64_t context_bytes = 0;    // device memory outside the allocator (CUDA context, loaded kernels)
  double fragmentation = 0;          // the allocator holds live object bytes x (1 + this)
  bool record_trace = false;         // fill sim_result::trace / memory (for the timeline)
  // Per op of the plan's graph: measured seconds used instead of the device's compute model (an
  // executor's calibration); empty: op_seconds(). Ops past its end that are recompute clones take
  // their forward op's time, so times measured on the training graph serve every recompute plan
  // made from it.
  std::vector<double> measured_op_seconds = {};
};

/// What a framework adds to the planner's tensors on the device, as one named set of settings:
///  - "pytorch": PyTorch 1.13 on CUDA 11 — parameter gradients persistent (.grad), max pooling saves
///    int64 indices, 0.75 GiB of CUDA context and kernels, 256 MiB of cuDNN/cuBLAS workspace, 5% of
///    the live bytes lost to the caching allocator's block rounding and splitting, all of memory usable;
///  - "toru": the toru trainer on its emulated device — gradients persistent (one buffer), an exact
///    arena (no context, no fragmentation), max pooling keeps its output;
///  - "tflms": the setting of the published TFLMS figures (docs/swap.md "Reproduction"): 90% of
///    memory usable for fragmentation, gradients per step, nothing else.
/// The context, workspace and fragmentation figures are estimates (no GPU to measure them on here).
struct memory_profile {
  std::string name;
  bool persistent_param_grads = false;
  bool maxpool_indices = false;
  std::int64_t context_bytes = 0;
  std::int64_t workspace_bytes = 0;
  double fragmentation = 0;
  double memory_fraction = 0.9;
};
std::vector<std::string> memory_profile_names();
/// Throws toru::error (invalid_argument) naming the profiles for an unknown name.
memory_profile memory_profile_preset(std::string_view name);
/// Sets the training-graph and simulation options a profile decides.
void apply(const memory_profile& p, training_options& training, sim_options& sim);

struct trace_event {
  int queue = 0;  // 0 compute, 1 device-to-host, 2 host-to-device
  double start = 0, end = 0;
  int op = -1;      // compute
  int object = -1;  // copies
  category cat = category::forward;
};

struct sim_result {
  std::int64_t persistent_bytes = 0;  // parameters, optimizer state, persistent gradients, context, workspace
  std::int64_t budget_bytes = 0;
  std::int64_t peak_bytes = 0;  // persistent + live objects
  int peak_step = -1;
  bool fits = false;
  int overflow_step = -1;   // first allocating step over budget
  std::string overflow_at;  // op or tensor name there
  std::int64_t host_peak_bytes = 0;

  double step_seconds = 0;
  double forward_seconds = 0, backward_seconds = 0, recompute_seconds = 0;  // compute time by category
  double stall_seconds = 0;                                                 // compute queue idle waiting for copies
  double d2h_busy_seconds = 0, h2d_busy_seconds = 0;
  std::int64_t swapped_out_bytes = 0, swapped_in_bytes = 0;
  int swap_outs = 0, swap_ins = 0;
  int ops_recomputed = 0;
  double recomputed_flops = 0;
  double bound_seconds = 0;         // phase bound
  double global_bound_seconds = 0;  // global bound
  /// The achieved fraction of the phase bound, bound / step time (100% = the plan runs at the bound),
  /// the project's one convention (comm/'s "% of T_min" is the same ratio).
  double percent_of_bound() const { return step_seconds > 0 ? 100.0 * bound_seconds / step_seconds : 0; }

  std::vector<trace_event> trace;
  std::vector<std::pair<double, std::int64_t>> memory;  // (time, bytes in use incl. persistent)
};

/// Seconds the time model gives one op on a device.
double op_seconds(const graph& g, int op, const device_spec& d);
/// The time simulate() gives op `op`: its measured time where `options` has one (a recompute
/// clone's is its forward op's), op_seconds() otherwise.
double op_seconds(const graph& g, int op, const device_spec& d, const sim_options& options);

sim_result simulate(const plan& p, const device_spec& d, const sim_options& options = {});

}  // namespace toru::swap
