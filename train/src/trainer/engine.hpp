// SPDX-License-Identifier: BSD-3-Clause
// The trainer's engines behind one interface: what happens to a model's gradients between its
// backward and its next forward. allreduce (engine_allreduce.cpp): bucketed reduction during
// backward, the optimizer on the workers. cgdp and cgdp-sum (engine_cgdp.cpp): toru::train::cgdp,
// the host sums (and updates) chunk by chunk.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "toru/comm/communicator.hpp"
#include "toru/train/cgdp.hpp"
#include "toru/train/data_parallel.hpp"
#include "toru/train/model.hpp"
#include "toru/train/optimizer.hpp"
#include "toru/train/trainer.hpp"

namespace toru::train::detail {

/// Gradient accumulation: the summed gradients of the step's earlier micro-batches (empty for a
/// step of one) and the step's micro-batch count; the gradient the update sees is
/// (sum + last) / count, averaged over the ranks.
struct micro_batches {
  std::span<const float> sum{};
  std::int64_t count = 1;
};

class engine {
 public:
  virtual ~engine() = default;
  virtual engine_kind kind() const noexcept = 0;
  /// Before a training forward.
  virtual void before_forward(model& m) = 0;
  /// The model's forward hook: before forward op `op` runs.
  virtual void before_forward_op(int op, model& m) = 0;
  /// Seconds the last forward waited for weights.
  virtual double forward_wait() const noexcept = 0;
  /// Collective: the backward of the forward just run, the reduction and the update; adds the
  /// backward, communication-wait and update seconds to `t`. The CGDP engines take one micro-batch.
  virtual void backward_and_update(model& m, std::int64_t step, double lr, step_timing& t, const micro_batches& mb) = 0;
  /// The global 2-norm of the last update's averaged gradient, before clipping; NaN where the
  /// engine does not see the whole gradient (CGDP: the host sums it chunk by chunk).
  virtual double last_grad_norm() const noexcept { return std::numeric_limits<double>::quiet_NaN(); }
  /// Makes the model's parameters the current weights.
  virtual void sync_weights(model& m) = 0;
  /// Collective: the optimizer state in the checkpoint's layout (every element, slot order) and its
  /// step count.
  virtual std::vector<float> optimizer_state(std::int64_t& steps) = 0;
  /// Collective: continue from the model's current parameters and this optimizer state.
  virtual void restore(model& m, std::span<const float> state, std::int64_t steps) = 0;
  /// CGDP: the chunk sizes, the last step's per-chunk times, where the helper runs.
  virtual std::vector<int> chunk_sizes() const { return {}; }
  virtual const std::vector<chunk_stats>* last_chunk_stats() const { return nullptr; }
  virtual std::string binding() const { return {}; }
};

/// Uses `dp` (which must outlive it) and an optimizer of its own, its update on `threads` OpenMP
/// threads (the model's; 0: OpenMP's default); clips the averaged gradient to the global 2-norm
/// `clip` where set (every rank clips the same gradient the same way).
std::unique_ptr<engine> make_allreduce_engine(data_parallel& dp, const optimizer_options& o, std::int64_t count,
                                              std::optional<double> clip, int threads);
/// Collective over comm: CGDP (host_update) or CGDP-sum on m, starting from `weights`.
std::unique_ptr<engine> make_cgdp_engine(const comm::communicator& comm, model& m, std::span<const float> weights,
                                         const optimizer_options& o, const cgdp_options& co);

}  // namespace toru::train::detail
