// SPDX-License-Identifier: BSD-3-Clause
// Strategy selection and auto-tuning: the swap parameters and the recompute set that minimise the
// simulated step time under the device (and host) memory budget.
//
//  - none:      no swapping, no recomputation.
//  - swap:      TFLMS search (escalate sync mode until threshold 1 fits, binary-search the largest
//               feasible threshold; the better of that and TFLMS's full ahead/groupby answer), then a
//               coordinate descent on simulated time over order, threshold, ahead, groupby, swap-out
//               delay and the size rules. tune_options::tflms_search returns TFLMS's answer alone.
//  - recompute: no swapping; units recomputed in order of bytes freed per recompute second until fit.
//  - hybrid:    start from the tuned swap plan; walk the units (layer or block granularity, see
//               pick in tune.cpp) in decreasing swapped bytes (the published order) and, separately,
//               in decreasing net time saved (bytes/BW_d2h - recompute time), in adaptive chunks;
//               keep what makes the simulated step faster; re-tune the swap parameters; keep the
//               faster order, or the recompute-only plan if that is faster still.
//  - automatic: the fastest feasible of the above.
// Thread-safe (no shared state); each call is single-threaded.
//
//   toru::swap::tune_options o;
//   o.device = toru::swap::device_preset("v100-nvlink2");
//   auto t = toru::swap::tune(training, toru::swap::strategy::hybrid, o);
//   std::printf("%.3f s, %.0f%% of bound (bound / time)\n", t.result.step_seconds, t.result.percent_of_bound());
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "toru/swap/device.hpp"
#include "toru/swap/plan.hpp"
#include "toru/swap/simulate.hpp"

namespace toru::swap {

enum class strategy { none, swap, recompute, hybrid, automatic };
std::string_view to_string(strategy s) noexcept;
/// "none", "swap", "recompute", "hybrid", "auto"; throws toru::error otherwise.
strategy parse_strategy(std::string_view name);

enum class unit_order { swapped_bytes, net_time };

struct tune_options {
  device_spec device;
  sim_options sim;
  bool both_orders = true;    // hybrid: also try the net-time order and keep the faster
  bool tflms_search = false;  // strategy swap: TFLMS v2's own parameter search only (a baseline)
  bool fine_units = true;     // recompute units per conv-bn-relu (layer) rather than per block (find_units)
  // Units the caller can recompute (empty: all). A framework re-runs whole pieces of its model (PyTorch
  // checkpoints modules), so a unit that is no such piece is kept, not recomputed.
  std::function<bool(const unit&)> can_recompute = {};
};

struct tuned_plan {
  strategy requested = strategy::automatic;
  strategy chosen = strategy::none;
  unit_order order = unit_order::swapped_bytes;  // hybrid: the order that won
  std::vector<int> recompute_units;
  plan p;
  sim_result result;
  int evaluations = 0;  // plans simulated
  double planning_seconds = 0;
};

/// Tunes one strategy. Throws toru::error (out_of_memory) when no plan of that strategy fits, with
/// the peak of the leanest plan found ("needs at least X GiB").
tuned_plan tune(const graph& training, strategy s, const tune_options& options);

/// Whether some plan of strategy `s` fits both the device and the host budget. The leanest
/// configurations are tried first (threshold 1, every sync mode; every unit recomputed), as TFLMS
/// does; when they fit the device but swap more than `device.host_memory_bytes`, the full tune()
/// search decides (plans that swap less). Cheaper than tune() in the common case.
bool fits(const graph& training, strategy s, const tune_options& options);

/// Peak bytes of the leanest plan of strategy `s` that the planner builds.
std::int64_t leanest_peak(const graph& training, strategy s, const tune_options& options);

/// Largest n in [1, limit] for which fits(make(n), s) holds, assuming feasibility is monotone
/// (doubling, then bisection); 0 if even n = 1 does not fit. `make` builds a training graph.
std::int64_t largest_fitting(const std::function<graph(std::int64_t)>& make, strategy s, const tune_options& options,
                             std::int64_t limit = std::int64_t{1} << 24);

}  // namespace toru::swap
