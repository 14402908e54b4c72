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
#include <vector>

#include "toru/swap/device.hpp"
#include "toru/swap/plan.hpp"

namespace toru::swap {

struct sim_options {
  double memory_fraction = 0.9;
  optimizer opt = optimizer::momentum;
  std::int64_t workspace_bytes = 0;
  bool record_trace = false;  // fill sim_result::trace / memory (for the timeline)
  // Per op of the plan's graph: measured seconds used instead of the device's compute model (an
  // executor's calibration); empty: op_seconds().
  std::vector<double> measured_op_seconds = {};
};

struct trace_event {
  int queue = 0;  // 0 compute, 1 device-to-host, 2 host-to-device
  double start = 0, end = 0;
  int op = -1;      // compute
  int object = -1;  // copies
  category cat = category::forward;
};

struct sim_result {
  std::int64_t persistent_bytes = 0;
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
  double percent_of_bound() const { return bound_seconds > 0 ? 100.0 * step_seconds / bound_seconds : 0; }

  std::vector<trace_event> trace;
  std::vector<std::pair<double, std::int64_t>> memory;  // (time, bytes in use incl. persistent)
};

/// Seconds the time model gives one op on a device.
double op_seconds(const graph& g, int op, const device_spec& d);

sim_result simulate(const plan& p, const device_spec& d, const sim_options& options = {});

}  // namespace toru::swap
