// SPDX-License-Identifier: BSD-3-Clause
#include <algorithm>
#include <chrono>

#include "engine.hpp"

namespace toru::train::detail {

namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

class allreduce_engine final : public engine {
 public:
  allreduce_engine(data_parallel& dp, const optimizer_options& o, std::int64_t count) : dp_(dp), opt_(o, count) {}
  engine_kind kind() const noexcept override { return engine_kind::allreduce; }
  void before_forward(model&) override {}
  void before_forward_op(int, model&) override {}
  double forward_wait() const noexcept override { return 0; }
  void backward_and_update(model& m, std::int64_t, double lr, step_timing& t) override {
    const auto t1 = clock_type::now();
    dp_.begin_step(m.gradient_data());
    m.backward([&](int slot) { dp_.gradient_ready(slot); });
    t.backward = seconds_since(t1);
    t.comm_wait = dp_.finish();
    const auto t3 = clock_type::now();
    opt_.step(m.parameter_data(), m.gradient_data(), lr);
    m.parameters_changed();
    t.update = seconds_since(t3);
  }
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
};

}  // namespace

std::unique_ptr<engine> make_allreduce_engine(data_parallel& dp, const optimizer_options& o, std::int64_t count) {
  return std::make_unique<allreduce_engine>(dp, o, count);
}

}  // namespace toru::train::detail
