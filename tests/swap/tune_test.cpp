// SPDX-License-Identifier: BSD-3-Clause
// Recompute units, the tuner's budget guarantee, strategy relations, and bad budgets.
#include <algorithm>

#include <gtest/gtest.h>

#include "toru/core/error.hpp"
#include "toru/swap/models.hpp"
#include "toru/swap/simulate.hpp"
#include "toru/swap/tune.hpp"

namespace ts = toru::swap;

namespace {

constexpr double gib = 1024.0 * 1024.0 * 1024.0;

ts::tune_options on(double memory_gib, const char* preset = "v100-nvlink2") {
  ts::tune_options o;
  o.device = ts::device_preset(preset);
  o.device.memory_bytes = static_cast<std::int64_t>(memory_gib * gib);
  return o;
}

}  // namespace

TEST(units, resnet50_has_one_unit_per_block) {
  const auto t = ts::make_training_graph(ts::build_model("resnet50", {.batch = 2}));
  const auto units = ts::find_units(t);
  EXPECT_EQ(units.size(), 1u + 16u + 1u);  // stem, bottlenecks, head
  int recomputable = 0;
  for (const auto& u : units) {
    if (u.bytes == 0) continue;
    ++recomputable;
    EXPECT_FALSE(u.triggers.empty());
    for (int x : u.dropped) {
      // A dropped tensor is produced in the unit and read by no forward op outside it.
      EXPECT_TRUE(std::find(u.ops.begin(), u.ops.end(), t.tensors[x].producer) != u.ops.end());
      for (int c : t.tensors[x].consumers)
        if (t.ops[c].cat == ts::category::forward) {
          EXPECT_TRUE(std::find(u.ops.begin(), u.ops.end(), c) != u.ops.end());
        }
    }
  }
  EXPECT_EQ(recomputable, 17);  // all but the loss head
}

TEST(units, recompute_rewires_backward_and_lowers_memory) {
  const auto t = ts::make_training_graph(ts::build_model("resnet50", {.batch = 8}));
  const auto units = ts::find_units(t);
  std::vector<int> all;
  for (const auto& u : units)
    if (u.bytes > 0) all.push_back(u.id);
  const auto r = ts::apply_recompute(t, units, all);
  for (const auto& u : units)
    for (int x : u.dropped)
      for (int c : r.tensors[x].consumers) EXPECT_NE(r.ops[c].cat, ts::category::backward) << r.tensors[x].name;
  int recompute_ops = 0;
  for (const auto& o : r.ops)
    if (o.cat == ts::category::recompute) ++recompute_ops;
  EXPECT_GT(recompute_ops, 100);
  const auto before = ts::replay_memory(ts::make_plan(t, {})).peak;
  const auto after = ts::replay_memory(ts::make_plan(r, {})).peak;
  EXPECT_LT(after, before * 0.75) << before << " -> " << after;
  // Recomputation re-runs forward work only.
  double fwd = 0;
  for (const auto& u : units)
    if (u.bytes > 0) fwd += u.flops;
  EXPECT_DOUBLE_EQ(r.flops(ts::category::recompute), fwd);
}

TEST(units, graphs_without_blocks_are_cut_where_one_tensor_crosses) {
  auto f = ts::build_model("vgg16", {.batch = 2});
  for (auto& o : f.ops) o.block = -1;
  const auto t = ts::make_training_graph(f);
  const auto units = ts::find_units(t, 8);
  EXPECT_GE(units.size(), 4u);
  EXPECT_LE(units.size(), 40u);
  std::size_t ops = 0;
  for (const auto& u : units) ops += u.ops.size();
  EXPECT_EQ(ops, f.ops.size());
}

class budgets : public ::testing::TestWithParam<double> {};

TEST_P(budgets, tuned_plans_never_exceed_the_budget) {
  const auto t = ts::make_training_graph(ts::build_model("resnet50", {.batch = 96}));
  const auto o = on(GetParam());
  double swap_time = -1, hybrid_time = -1;
  int fitted = 0;
  for (auto s : {ts::strategy::none, ts::strategy::swap, ts::strategy::recompute, ts::strategy::hybrid,
                 ts::strategy::automatic}) {
    try {
      const auto p = ts::tune(t, s, o);
      EXPECT_TRUE(p.result.fits);
      EXPECT_LE(p.result.peak_bytes, p.result.budget_bytes) << ts::to_string(s);
      // The returned plan replays to the same peak.
      const auto again = ts::simulate(p.p, o.device, o.sim);
      EXPECT_EQ(again.peak_bytes, p.result.peak_bytes);
      EXPECT_GE(p.result.step_seconds, p.result.global_bound_seconds * (1 - 1e-9));
      ++fitted;
      if (s == ts::strategy::swap) swap_time = p.result.step_seconds;
      if (s == ts::strategy::hybrid) hybrid_time = p.result.step_seconds;
      if (s == ts::strategy::recompute) {
        EXPECT_EQ(p.result.swap_outs, 0);
      }
    } catch (const toru::error& e) {
      EXPECT_EQ(e.code(), toru::errc::out_of_memory) << e.what();
      EXPECT_NE(e.message().find("needs at least"), std::string::npos);
    }
  }
  // With 9 GiB and more, something must fit: a tuner that always reports out_of_memory fails here.
  if (GetParam() >= 9.0) {
    EXPECT_GT(fitted, 0);
  }
  if (swap_time > 0 && hybrid_time > 0) {
    EXPECT_LE(hybrid_time, swap_time * (1 + 1e-9));
  }
}

INSTANTIATE_TEST_SUITE_P(resnet50_b96, budgets, ::testing::Values(2.5, 4.0, 6.0, 9.0, 16.0));

TEST(tune, auto_picks_no_swapping_when_everything_fits) {
  const auto t = ts::make_training_graph(ts::build_model("resnet50", {.batch = 4}));
  const auto p = ts::tune(t, ts::strategy::automatic, on(16));
  EXPECT_EQ(p.chosen, ts::strategy::none);
  EXPECT_EQ(p.result.swap_outs, 0);
  EXPECT_EQ(p.result.ops_recomputed, 0);
  EXPECT_NEAR(p.result.step_seconds, p.result.bound_seconds, 1e-12);
}

TEST(tune, hybrid_recomputes_on_pcie5_where_swapping_is_transfer_bound) {
  const auto t = ts::make_training_graph(ts::build_model("resnet50", {.batch = 1, .height = 2048, .width = 2048}));
  auto o = on(3.0, "h200-pcie5");
  const auto swap = ts::tune(t, ts::strategy::swap, o);
  const auto hybrid = ts::tune(t, ts::strategy::hybrid, o);
  EXPECT_GT(hybrid.result.ops_recomputed, 0);
  EXPECT_LT(hybrid.result.swapped_out_bytes, swap.result.swapped_out_bytes);
  EXPECT_LT(hybrid.result.step_seconds, swap.result.step_seconds);
}

TEST(tune, too_small_a_budget_names_the_minimum) {
  const auto t = ts::make_training_graph(ts::build_model("resnet50", {.batch = 64}));
  try {
    ts::tune(t, ts::strategy::hybrid, on(0.3));
    FAIL() << "expected out_of_memory";
  } catch (const toru::error& e) {
    EXPECT_EQ(e.code(), toru::errc::out_of_memory);
    EXPECT_NE(e.message().find("needs at least"), std::string::npos) << e.message();
  }
  auto bad = on(16);
  bad.device.h2d_bandwidth = 0;
  EXPECT_THROW(ts::tune(t, ts::strategy::swap, bad), toru::error);
  EXPECT_THROW(ts::parse_strategy("magic"), toru::error);
  EXPECT_THROW(ts::device_preset("tpu"), toru::error);
}

// A caller that can re-run only some units (PyTorch checkpoints whole modules) gets plans that
// recompute only those, and a leanest plan no leaner than with every unit.
TEST(tune, can_recompute_limits_the_units) {
  const auto t = ts::make_training_graph(ts::build_model("resnet50", {.batch = 32}));
  auto o = on(16);
  o.fine_units = false;
  o.sim.memory_fraction = 1;  // the budget is the device memory set below
  const auto all = ts::leanest_peak(t, ts::strategy::recompute, o);
  o.can_recompute = [](const ts::unit& u) { return u.id % 2 == 1; };
  const auto odd = ts::leanest_peak(t, ts::strategy::recompute, o);
  EXPECT_GT(odd, all);
  o.device.memory_bytes = (odd + ts::leanest_peak(t, ts::strategy::none, o)) / 2;
  const auto p = ts::tune(t, ts::strategy::recompute, o);
  EXPECT_FALSE(p.recompute_units.empty());
  for (int u : p.recompute_units) EXPECT_EQ(u % 2, 1) << u;
  o.can_recompute = [](const ts::unit&) { return false; };
  EXPECT_EQ(ts::leanest_peak(t, ts::strategy::recompute, o), ts::leanest_peak(t, ts::strategy::none, o));
}

TEST(tune, largest_fitting_batch_grows_with_swapping) {
  auto make = [](std::int64_t b) { return ts::make_training_graph(ts::build_model("resnet50", {.batch = b})); };
  const auto o = on(4.0);
  const auto none = ts::largest_fitting(make, ts::strategy::none, o);
  const auto swap = ts::largest_fitting(make, ts::strategy::swap, o);
  EXPECT_GT(none, 0);
  EXPECT_GT(swap, 2 * none);
  EXPECT_TRUE(ts::fits(make(none), ts::strategy::none, o));
  EXPECT_FALSE(ts::fits(make(none + 1), ts::strategy::none, o));
  EXPECT_FALSE(ts::fits(make(swap + 1), ts::strategy::swap, o));
}

TEST(tune, largest_fitting_honours_the_host_budget) {
  auto make = [](std::int64_t b) { return ts::make_training_graph(ts::build_model("resnet50", {.batch = b})); };
  auto o = on(4.0);
  const auto none = ts::largest_fitting(make, ts::strategy::none, o);
  const auto unlimited = ts::largest_fitting(make, ts::strategy::swap, o);
  // A host budget well below what the largest swap plan keeps on the host.
  const auto at_max = ts::tune(make(unlimited), ts::strategy::swap, o);
  ASSERT_GT(at_max.result.host_peak_bytes, 0);
  o.device.host_memory_bytes = at_max.result.host_peak_bytes / 3;
  const auto limited = ts::largest_fitting(make, ts::strategy::swap, o);
  EXPECT_LT(limited, unlimited);
  EXPECT_GE(limited, none);  // not swapping needs no host memory
  // The answer agrees with the full search: a plan within both budgets at `limited`, none above.
  const auto p = ts::tune(make(limited), ts::strategy::swap, o);
  EXPECT_TRUE(p.result.fits);
  EXPECT_LE(p.result.host_peak_bytes, o.device.host_memory_bytes);
  EXPECT_FALSE(ts::fits(make(limited + 1), ts::strategy::swap, o));
  EXPECT_THROW(ts::tune(make(limited + 1), ts::strategy::swap, o), toru::error);
  // Hybrid may recompute instead of swapping, so it goes at least as far.
  EXPECT_GE(ts::largest_fitting(make, ts::strategy::hybrid, o), limited);
}

// Separate weight- and data-gradient ops let the planner release (or swap in only for the weight
// gradient) a conv's saved input before the input gradient is allocated: the leanest swap plan of the
// 3D U-Net, bounded by its widest decoder conv, gets smaller; no-swap peaks do not grow.
TEST(tune, split_weight_gradients_lower_the_leanest_swap_peak) {
  const auto f = ts::build_model("unet3d", {.batch = 1, .height = 64, .width = 64});
  const auto split = ts::make_training_graph(f);
  const auto joint = ts::make_training_graph(f, {.split_weight_grad = false});
  const auto o = on(16.0);
  EXPECT_LT(ts::leanest_peak(split, ts::strategy::swap, o), ts::leanest_peak(joint, ts::strategy::swap, o) * 0.9);
  EXPECT_LE(ts::leanest_peak(split, ts::strategy::none, o), ts::leanest_peak(joint, ts::strategy::none, o));
  // Same total backward work either way.
  EXPECT_NEAR(split.flops(ts::category::backward), joint.flops(ts::category::backward),
              1e-9 * joint.flops(ts::category::backward));
}

// The reference case (IBM hybrid: +15.3% over swap-only). Guards the hybrid search: units
// are accepted together with looser swap settings, including the size rules (memory freed by
// recomputation lets larger tensors be prefetched), not only with the parameters tuned for swap-only.
TEST(tune, hybrid_beats_swap_only_on_resnet152_7500) {
  const auto t = ts::make_training_graph(ts::build_model("resnet152", {.batch = 1, .height = 7500, .width = 7500}));
  ts::tune_options o;
  o.device = ts::device_preset("v100-nvlink2");
  const auto swap = ts::tune(t, ts::strategy::swap, o);
  const auto hybrid = ts::tune(t, ts::strategy::hybrid, o);
  EXPECT_TRUE(hybrid.result.fits);
  EXPECT_LE(hybrid.result.peak_bytes, hybrid.result.budget_bytes);
  EXPECT_FALSE(hybrid.recompute_units.empty());
  EXPECT_GE(swap.result.step_seconds / hybrid.result.step_seconds, 1.153);
  EXPECT_GE(hybrid.result.step_seconds, hybrid.result.global_bound_seconds);
}

TEST(units, recomputing_every_unit_keeps_every_model_acyclic) {
  for (const auto& name : ts::model_names()) {
    // The MLP's memory is its weights: it has no unit whose recomputation lowers the peak.
    if (name == "mlp") continue;
    ts::model_options mo;
    mo.batch = 2;
    if (ts::model_is_3d(name)) mo.height = mo.width = 32;
    if (ts::model_is_sequence(name)) mo.layers = 3, mo.sequence = 64;
    auto f = ts::build_model(name, mo);
    for (int variant = 0; variant < 3; ++variant) {
      if (variant == 2)
        for (auto& o : f.ops) o.block = -1;  // as an ONNX import would have it
      const auto t = ts::make_training_graph(f);
      const auto units = ts::find_units(t, 64, variant == 1);
      std::vector<int> all;
      for (const auto& u : units)
        if (u.bytes > 0) all.push_back(u.id);
      // Layer units of plain conv-relu chains keep everything (variant 1); the others must drop.
      if (variant != 1) {
        EXPECT_FALSE(all.empty()) << name << " variant " << variant;
      }
      const auto r = ts::apply_recompute(t, units, all);
      EXPECT_NO_THROW(ts::topo_levels(r)) << name << " variant " << variant;
      if (variant == 1) continue;
      EXPECT_LT(ts::replay_memory(ts::make_plan(r, {})).peak, ts::replay_memory(ts::make_plan(t, {})).peak)
          << name << " variant " << variant;
    }
  }
}

TEST(tune, tflms_search_is_the_published_baseline) {
  const auto t = ts::make_training_graph(ts::build_model("resnet50", {.batch = 160}));
  auto o = on(6.0);
  o.tflms_search = true;
  const auto base = ts::tune(t, ts::strategy::swap, o);
  EXPECT_TRUE(base.result.fits);
  EXPECT_EQ(base.p.options.order, ts::schedule_order::by_level);
  EXPECT_EQ(base.p.options.swapout_delay, 1);
  EXPECT_EQ(base.p.options.prefetch_max_bytes, INT64_MAX);
  // The largest feasible threshold: one more level does not fit.
  auto looser = base.p.options;
  ++looser.threshold;
  EXPECT_FALSE(ts::simulate(ts::make_plan(t, looser), o.device, o.sim).fits);
  o.tflms_search = false;
  const auto tuned = ts::tune(t, ts::strategy::swap, o);
  EXPECT_LE(tuned.result.step_seconds, base.result.step_seconds * (1 + 1e-9));
}

TEST(tune, host_budget_is_respected_or_named) {
  const auto t = ts::make_training_graph(ts::build_model("resnet50", {.batch = 256}));
  auto o = on(8.0);
  // Unbounded host memory: the swap plan's host peak (about 20 GiB at this batch).
  const auto free_host = ts::tune(t, ts::strategy::swap, o);
  const auto need = free_host.result.host_peak_bytes;
  ASSERT_GT(need, static_cast<std::int64_t>(4 * gib));
  // A host of twice that: planned within it. (At need + 1 GiB the planner still refuses: under a
  // host budget it searches other plans than the unbounded one, whose host peak it then reports.)
  o.device.host_memory_bytes = 2 * need;
  const auto p = ts::tune(t, ts::strategy::swap, o);
  EXPECT_TRUE(p.result.fits);
  EXPECT_LE(p.result.host_peak_bytes, o.device.host_memory_bytes);
  // 4 GiB, below what any swap plan here needs: refused, naming the host's budget.
  o.device.host_memory_bytes = static_cast<std::int64_t>(4 * gib);
  try {
    ts::tune(t, ts::strategy::swap, o);
    ADD_FAILURE() << "a swap plan needing " << need << " bytes of host memory fitted 4 GiB";
  } catch (const toru::error& e) {
    EXPECT_EQ(e.code(), toru::errc::out_of_memory);
    EXPECT_NE(e.message().find("host memory"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("4.00 GiB"), std::string::npos) << e.message();
  }
  o.device.host_memory_bytes = 1 << 20;  // 1 MiB: no swap plan can fit
  try {
    ts::tune(t, ts::strategy::swap, o);
    FAIL() << "expected a host-memory error";
  } catch (const toru::error& e) {
    EXPECT_EQ(e.code(), toru::errc::out_of_memory);
    EXPECT_NE(e.message().find("host memory"), std::string::npos) << e.message();
  }
  // Recompute needs no host memory.
  auto big = on(16.0);
  big.device.host_memory_bytes = 1 << 20;
  EXPECT_EQ(ts::tune(t, ts::strategy::recompute, big).result.host_peak_bytes, 0);
}

// Measured per-op times of the training graph (an executor's calibration) serve every recompute
// plan made from it: a clone takes its forward op's time, and the tuner and the simulator use them
// instead of the device's compute model.
TEST(tune, measured_op_times_cover_recompute_clones) {
  const auto t = ts::make_training_graph(ts::build_model("resnet18", {.batch = 4, .height = 32, .width = 32}));
  const auto units = ts::find_units(t);
  std::vector<int> all;
  for (const auto& u : units)
    if (u.bytes > 0) all.push_back(u.id);
  const auto r = ts::apply_recompute(t, units, all);
  ts::sim_options so;
  for (std::size_t o = 0; o < t.ops.size(); ++o) so.measured_op_seconds.push_back(1e-3 * static_cast<double>(o + 1));
  const auto d = ts::device_preset("v100-nvlink2");
  int clones = 0;
  for (int o = 0; o < static_cast<int>(r.ops.size()); ++o) {
    const double s = ts::op_seconds(r, o, d, so);
    if (o < static_cast<int>(t.ops.size())) {
      EXPECT_EQ(s, so.measured_op_seconds[static_cast<std::size_t>(o)]);
    } else {
      ASSERT_EQ(r.ops[o].cat, ts::category::recompute);
      EXPECT_EQ(s, so.measured_op_seconds[static_cast<std::size_t>(r.ops[o].forward_op)]) << r.ops[o].name;
      ++clones;
    }
  }
  EXPECT_GT(clones, 0);
  // Without measurements: the device's model.
  EXPECT_EQ(ts::op_seconds(r, 0, d, {}), ts::op_seconds(r, 0, d));
  // The simulated compute time is the sum of the measured (and cloned) times when nothing stalls.
  const auto p = ts::make_plan(std::make_shared<const ts::graph>(r), ts::swap_options{});
  double sum = 0;
  for (int o = 0; o < static_cast<int>(r.ops.size()); ++o) sum += ts::op_seconds(r, o, d, so);
  EXPECT_NEAR(ts::simulate(p, d, so).step_seconds, sum, 1e-9 * sum);
}
