// SPDX-License-Identifier: BSD-3-Clause
#include <algorithm>
#include <chrono>
#include <limits>
#include <optional>
#include <vector>

#include "engine.hpp"

namespace toru::train::detail {

namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

class allreduce_engine final : public engine {
 public:
  allreduce_engine(data_parallel& dp, const optimizer_options& o, std::int64_t count, std::optional<double> clip,
                   int threads)
      : dp_(dp), opt_(o, count), clip_(clip) {
    opt_.set_threads(threads);
  }
  engine_kind kind() const noexcept override { return engine_kind::allreduce; }
  void before_forward(model&) override {}
  void before_forward_op(int, model&) override {}
  double forward_wait() const noexcept override { return 0; }
  void backward_and_update(model& m, std::int64_t, double lr, step_timing& t, const micro_batches& mb) override {
    const auto t1 = clock_type::now();
    const auto g = m.gradient_data();
    dp_.begin_step(g);
    if (mb.count == 1) {
      m.backward([&](int slot) { dp_.gradient_ready(slot); });
    } else {
      // Each slot is finished (earlier micro-batches added, divided by their count) as backward
      // completes it, so the reduction still overlaps the backward.
      const auto& slots = m.parameters();
      std::vector<char> done(slots.size(), 0);
      const auto finish_slot = [&](int slot) {
        const auto& sl = slots[static_cast<std::size_t>(slot)];
        const float inv = 1.0f / static_cast<float>(mb.count);
        for (std::int64_t i = sl.offset; i < sl.offset + sl.count; ++i) g[i] = (mb.sum[i] + g[i]) * inv;
        done[static_cast<std::size_t>(slot)] = 1;
      };
      m.backward([&](int slot) {
        finish_slot(slot);
        dp_.gradient_ready(slot);
      });
      for (std::size_t k = 0; k < slots.size(); ++k)
        if (!done[k]) finish_slot(static_cast<int>(k));
    }
    t.backward = seconds_since(t1);
    t.comm_wait = dp_.finish();
    const auto t3 = clock_type::now();
    // The averaged gradient is bit-identical on every rank, so is the norm and the clipping.
    if (clip_) {
      norm_ = clip_grad_norm(g, *clip_, "clip_grad_norm", opt_.threads());
      opt_.step(m.parameter_data(), g, lr);
    } else {
      opt_.step(m.parameter_data(), g, lr, &norm_);  // the reported norm from the update's pass
    }
    m.parameters_changed();
    t.update = seconds_since(t3);
  }
  double last_grad_norm() const noexcept override { return norm_; }
  void sync_weights(model&) override {}
  std::vector<float> optimizer_state(std::int64_t& steps) override {
    steps = opt_.steps();
    return {opt_.state().begin(), opt_.state().end()};
  }
  void restore(model&, std::span<const float> state, std::int64_t steps) override {
    std::copy(state.begin(), state.end(), opt_.state().begin());
    opt_.set_steps(steps);
  }

 private:
  data_parallel& dp_;
  optimizer opt_;
  std::optional<double> clip_;
  double norm_ = std::numeric_limits<double>::quiet_NaN();
};

}  // namespace

std::unique_ptr<engine> make_allreduce_engine(data_parallel& dp, const optimizer_options& o, std::int64_t count,
                                              std::optional<double> clip, int threads) {
  return std::make_unique<allreduce_engine>(dp, o, count, clip, threads);
}

}  // namespace toru::train::detail
