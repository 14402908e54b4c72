// SPDX-License-Identifier: BSD-3-Clause
// The swap-plan executor on a GPU (train/src/swap_exec/streams_cuda.cpp: the CUDA backend's stream
// computes, two copy streams move swapped tensors through pinned host buffers, cudaEvents order
// them; the model's memory is the default cudaMallocAsync pool under a hard capacity = the budget):
//  - swap, recompute and hybrid plans of fashion-cnn and ResNet-18 (32x32) train 3 SGD steps with
//    the same losses, weights and running statistics, bit for bit, as the same CUDA model without
//    a plan and without a memory limit;
//  - the pool's high-water mark equals the planner's replayed peak exactly and stays within the
//    budget; bytes swapped and ops recomputed are the plan's;
//  - a budget below the leanest plan is refused before anything runs;
//  - ResNet-18 at a budget the default schedule overflows trains with a plan.
// Needs a GPU: every test is skipped (and CTest reports it skipped) without one.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "toru/core/device.hpp"
#include "toru/core/error.hpp"
#include "toru/swap/models.hpp"
#include "toru/train/device_memory.hpp"
#include "toru/train/model.hpp"
#include "toru/train/plan_executor.hpp"
#include "util.hpp"

namespace tt = toru::train;
namespace ts = toru::swap;

namespace {

using toru::train::test::batch;
using toru::train::test::make_batches;

#define TORU_REQUIRE_GPU()                                                                        \
  do {                                                                                            \
    if (toru::gpu_count() == 0) GTEST_SKIP() << "no CUDA device: " << toru::gpu_absence_reason(); \
  } while (0)

std::vector<float> to_host(std::span<const float> s) {
  std::vector<float> h(s.size());
  if (cudaMemcpy(h.data(), s.data(), s.size() * sizeof(float), cudaMemcpyDeviceToHost) != cudaSuccess)
    throw std::runtime_error("cudaMemcpy");
  return h;
}

// Forward, backward, and a plain SGD update done on the host (the same for both models).
std::vector<double> train(tt::model& m, const std::vector<batch>& data) {
  std::vector<double> losses;
  for (std::size_t s = 0; s < data.size(); ++s) {
    losses.push_back(m.forward(data[s].x, data[s].y, {.training = true, .step = s}).loss);
    m.backward();
    auto w = to_host(m.parameter_data());
    const auto g = to_host(m.gradient_data());
    for (std::size_t i = 0; i < w.size(); ++i) w[i] -= 0.05f * g[i];
    if (cudaMemcpy(m.parameter_data().data(), w.data(), w.size() * sizeof(float), cudaMemcpyHostToDevice) !=
        cudaSuccess)
      throw std::runtime_error("cudaMemcpy");
    m.parameters_changed();
  }
  return losses;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

tt::executor_options options(ts::strategy s, std::size_t budget) {
  tt::executor_options o;
  o.strategy = s;
  o.budget = budget;
  return o;
}

tt::model_options cuda(std::size_t capacity, bool deferred) {
  return {.backend = tt::backend_kind::cuda, .seed = 7, .memory_capacity = capacity, .defer_activations = deferred};
}

struct need {
  std::int64_t persistent = 0, none_peak = 0;
};
need without_plan(const ts::graph& g) {
  const std::size_t big = std::size_t{1} << 40;
  tt::model m(g, cuda(big, true));
  auto ex = tt::plan_executor::install(m, options(ts::strategy::none, big));
  return {ex->persistent_bytes(), ex->planned_peak()};
}

void check(const ts::graph& g, ts::strategy s) {
  SCOPED_TRACE(g.name + " " + std::string(ts::to_string(s)));
  tt::model ref(g, cuda(0, false));
  const auto data = make_batches(ref, 3, 11);
  const auto ref_loss = train(ref, data);
  const auto n = without_plan(g);
  for (double f : {0.6, 0.7, 0.8, 0.9}) {
    const auto budget = static_cast<std::size_t>(n.persistent + f * static_cast<double>(n.none_peak));
    tt::model m(g, cuda(budget, true));
    std::shared_ptr<tt::plan_executor> ex;
    try {
      ex = tt::plan_executor::install(m, options(s, budget));
    } catch (const toru::error& e) {
      ASSERT_EQ(e.code(), toru::errc::out_of_memory) << e.what();
      continue;
    }
    EXPECT_EQ(train(m, data), ref_loss);
    EXPECT_TRUE(same_bits(to_host(m.parameter_data()), to_host(ref.parameter_data()))) << "weights differ";
    EXPECT_TRUE(same_bits(to_host(m.buffer_data()), to_host(ref.buffer_data()))) << "running statistics differ";
    EXPECT_EQ(ex->last_step().measured_peak, ex->planned_peak());
    EXPECT_LE(m.memory().high_water(), budget);
    const auto& r = ex->tuned().result;
    EXPECT_EQ(ex->last_step().swapped_out_bytes, r.swapped_out_bytes);
    EXPECT_EQ(ex->last_step().ops_recomputed, r.ops_recomputed);
    std::printf(
        "%s %s at %.1f of the no-plan peak: %lld bytes swapped, %d ops recomputed, peak %lld == %lld, step "
        "%.4f s measured / %.4f s predicted\n",
        g.name.c_str(), std::string(ts::to_string(ex->tuned().chosen)).c_str(), f,
        static_cast<long long>(r.swapped_out_bytes), r.ops_recomputed,
        static_cast<long long>(ex->last_step().measured_peak), static_cast<long long>(ex->planned_peak()),
        ex->last_step().step_seconds, ex->last_step().predicted_step_seconds);
    return;
  }
  ADD_FAILURE() << "no budget fraction gave a plan";
}

ts::graph fashion() { return ts::build_model("fashion-cnn", {.batch = 6, .height = 28, .width = 28}); }
ts::graph resnet18() { return ts::build_model("resnet18", {.batch = 4, .height = 32, .width = 32, .classes = 10}); }

}  // namespace

TEST(swap_exec_gpu, fashion_cnn_plans_bit_identical_at_the_planned_peak) {
  TORU_REQUIRE_GPU();
  for (auto s : {ts::strategy::swap, ts::strategy::recompute, ts::strategy::hybrid}) check(fashion(), s);
}

TEST(swap_exec_gpu, resnet18_plans_bit_identical_at_the_planned_peak) {
  TORU_REQUIRE_GPU();
  for (auto s : {ts::strategy::swap, ts::strategy::recompute, ts::strategy::hybrid}) check(resnet18(), s);
}

TEST(swap_exec_gpu, budget_too_small_is_refused_and_a_model_too_big_trains_with_a_plan) {
  TORU_REQUIRE_GPU();
  const auto g = resnet18();
  const auto n = without_plan(g);
  {
    const auto budget = static_cast<std::size_t>(n.persistent + n.none_peak / 20);
    tt::model m(g, cuda(budget, true));
    EXPECT_THROW(tt::plan_executor::install(m, options(ts::strategy::hybrid, budget)), toru::error);
  }
  const auto budget = static_cast<std::size_t>(n.persistent + 0.7 * static_cast<double>(n.none_peak));
  tt::model m(g, cuda(budget, true));
  EXPECT_THROW(tt::plan_executor::install(m, options(ts::strategy::none, budget)), toru::error);
  auto ex = tt::plan_executor::install(m, options(ts::strategy::automatic, budget));
  tt::model ref(g, cuda(0, false));
  const auto data = make_batches(ref, 2, 11);
  EXPECT_EQ(train(m, data), train(ref, data));
  EXPECT_EQ(ex->last_step().measured_peak, ex->planned_peak());
  EXPECT_LE(m.memory().high_water(), budget);
}
