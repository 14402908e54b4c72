// SPDX-License-Identifier: BSD-3-Clause
// A per-op hook into a model's forward: engines that deliver weights piecewise (CGDP hands each
// chunk's update to the worker only when the forward reaches it) wait at the op that first needs
// them instead of before the whole forward.
//
//   toru::train::set_forward_hook(m, [&](int op) { engine.before_forward_op(op); });
//   m.forward(...);                          // calls the hook before every op, in graph order
//   toru::train::set_forward_hook(m, {});    // removes it
#pragma once

#include <functional>

#include "toru/train/model.hpp"

namespace toru::train {

/// Installs `hook` (empty: removes it). model::forward calls hook(op) on the calling thread before
/// it runs forward op `op` (graph op id, in graph order), so a hook that writes the parameters an
/// op reads must have written them by the time it returns: backends read parameter_data() at each
/// op's forward (a backend that caches weights would have to refresh them there). op_times()
/// exclude the time spent in the hook. With an executor installed (plan_executor::install), the hook
/// is called for every op before the executor's forward starts, since the executor does not
/// report its ops. A hook's exception leaves forward() as any op's error would.
void set_forward_hook(model& m, std::function<void(int op)> hook);

}  // namespace toru::train
