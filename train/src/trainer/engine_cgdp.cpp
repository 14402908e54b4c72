// SPDX-License-Identifier: BSD-3-Clause
#include <chrono>
#include <optional>

#include "engine.hpp"

namespace toru::train::detail {

namespace {

using clock_type = std::chrono::steady_clock;

class cgdp_engine final : public engine {
 public:
  cgdp_engine(const comm::communicator& comm, model& m, std::span<const float> weights, const optimizer_options& o,
              const cgdp_options& co)
      : comm_(comm), o_(o), co_(co) {
    cg_.emplace(comm_, m.parameters(), m.space(), weights, o_, co_);
  }
  engine_kind kind() const noexcept override { return cg_->host_update() ? engine_kind::cgdp : engine_kind::cgdp_sum; }
  // The forward hook writes each chunk of the last update as the forward reaches it (docs/train.md,
  // "Waiting per chunk"): the model must re-read its parameters.
  void before_forward(model& m) override { m.parameters_changed(); }
  void before_forward_op(int op, model& m) override { cg_->before_forward_op(op, m.parameter_data()); }
  double forward_wait() const noexcept override { return cg_->last_wait_seconds(); }
  // One micro-batch (the trainer refuses accumulation and clipping with CGDP).
  void backward_and_update(model& m, std::int64_t step, double lr, step_timing& t, const micro_batches&) override {
    const auto t1 = clock_type::now();
    cg_->begin_step(step, lr, m.gradient_data());
    m.backward([&](int slot) { cg_->gradient_ready(slot); });
    cg_->end_backward();
    t.backward = std::chrono::duration<double>(clock_type::now() - t1).count();
  }
  void sync_weights(model& m) override {
    cg_->acquire_weights(m.parameter_data());
    m.parameters_changed();
  }
  std::vector<float> optimizer_state(std::int64_t& steps) override { return cg_->optimizer_state(steps); }
  // The helpers hold the master weights: a fresh engine on the model's (resumed) parameters, same
  // chunking, then the helpers' share of the optimizer state.
  void restore(model& m, std::span<const float> state, std::int64_t steps) override {
    auto co = co_;
    co.chunk_sizes = cg_->chunk_sizes();
    cg_.reset();
    cg_.emplace(comm_, m.parameters(), m.space(), m.parameter_data(), o_, co);
    cg_->set_optimizer_state(state, steps);
  }
  std::vector<int> chunk_sizes() const override { return cg_->chunk_sizes(); }
  const std::vector<chunk_stats>* last_chunk_stats() const override { return &cg_->last_stats(); }
  std::string binding() const override { return cg_->binding(); }

 private:
  const comm::communicator& comm_;
  optimizer_options o_;
  cgdp_options co_;
  std::optional<cgdp> cg_;
};

}  // namespace

std::unique_ptr<engine> make_cgdp_engine(const comm::communicator& comm, model& m, std::span<const float> weights,
                                         const optimizer_options& o, const cgdp_options& co) {
  return std::make_unique<cgdp_engine>(comm, m, weights, o, co);
}

}  // namespace toru::train::detail
