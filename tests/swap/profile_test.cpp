// SPDX-License-Identifier: BSD-3-Clause
// Memory profiles: persistent parameter gradients, max-pool indices, context, workspace and
// fragmentation, each against hand-computed bytes; the "% of bound" convention; the OOM message.
#include <algorithm>
#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "toru/core/error.hpp"
#include "toru/swap/models.hpp"
#include "toru/swap/tune.hpp"

namespace ts = toru::swap;

TEST(profile, parameter_gradients_are_persistent_state_not_step_objects) {
  const auto f = ts::build_model("mlp", {.batch = 4, .height = 28, .width = 28});
  ts::training_options t;
  t.persistent_param_grads = true;
  const auto g = ts::make_training_graph(f, t);
  const auto p = ts::make_plan(g, {});
  for (const auto& ob : p.objects) EXPECT_NE(g.tensors[ob.tensor].kind, ts::tensor_kind::param_gradient);
  const auto r = ts::simulate(p, ts::device_preset("v100-nvlink2"), {});
  // Parameters, momentum, gradients: 3 x the parameter bytes (mlp: 784*256+256 + 256*128+128 + 128*10+10).
  const std::int64_t params = (784 * 256 + 256 + 256 * 128 + 128 + 128 * 10 + 10) * 4;
  EXPECT_EQ(f.parameter_bytes(), params);
  EXPECT_EQ(r.persistent_bytes, 3 * params);
  // Without the option the gradients are step objects and persistent holds parameters + momentum.
  const auto r0 = ts::simulate(ts::make_plan(ts::make_training_graph(f), {}), ts::device_preset("v100-nvlink2"), {});
  EXPECT_EQ(r0.persistent_bytes, 2 * params);
}

TEST(profile, max_pooling_saves_int64_indices_as_pytorch_does) {
  // fashion-cnn at batch 2: pool 1 gives [2,32,14,14] (read by conv 2, which saves it), pool 2 gives
  // [2,64,7,7] (read by flatten only). With indices: + 8 bytes per output element of both pools, and
  // pool 2's output is no longer saved: 8*12544 + 8*6272 - 4*6272 = 125440 bytes.
  const auto f = ts::build_model("fashion-cnn", {.batch = 2, .height = 28, .width = 28});
  ts::training_options t;
  t.maxpool_indices = true;
  const auto with = ts::make_training_graph(f, t);
  const auto without = ts::make_training_graph(f);
  EXPECT_EQ(ts::saved_bytes(with) - ts::saved_bytes(without), 125440);
  int pools = 0;
  for (const auto& o : with.ops) {
    if (o.type != "maxpool" || o.cat != ts::category::forward) continue;
    ++pools;
    ASSERT_EQ(o.outputs.size(), 2u);
    const auto& idx = with.tensors[o.outputs[1]];
    EXPECT_EQ(idx.type, ts::dtype::i64);
    EXPECT_EQ(idx.shape, with.tensors[o.outputs[0]].shape);
    EXPECT_EQ(o.saved, (std::vector<int>{o.inputs[0], o.outputs[1]}));
  }
  EXPECT_EQ(pools, 2);
  // The indices live from the pool's forward to its backward: the plan stays valid and recomputable.
  const auto units = ts::find_units(with);
  std::vector<int> all;
  for (const auto& u : units)
    if (u.bytes > 0) all.push_back(u.id);
  EXPECT_NO_THROW(ts::topo_levels(ts::apply_recompute(with, units, all)));
}

TEST(profile, context_workspace_and_fragmentation_add_up) {
  const auto prof = ts::memory_profile_preset("pytorch");
  ts::training_options t;
  ts::sim_options s;
  ts::apply(prof, t, s);
  const auto f = ts::build_model("resnet18", {.batch = 8, .height = 64, .width = 64});
  const auto g = ts::make_training_graph(f, t);
  const auto p = ts::make_plan(g, {});
  const auto d = ts::device_preset("v100-nvlink2");
  const auto r = ts::simulate(p, d, s);
  const auto live = ts::replay_memory(p).peak;
  EXPECT_EQ(r.persistent_bytes, 3 * f.parameter_bytes() + (768 + 256) * (std::int64_t{1} << 20));
  EXPECT_EQ(r.peak_bytes, r.persistent_bytes + static_cast<std::int64_t>(std::ceil(live * 1.05)));
  EXPECT_EQ(r.budget_bytes, d.memory_bytes);  // the profile's fraction is 1: the rest is modelled
  EXPECT_THROW(ts::memory_profile_preset("jax"), toru::error);
}

TEST(profile, percent_of_bound_is_bound_over_time) {
  ts::tune_options o;
  o.device = ts::device_preset("v100-nvlink2");
  const auto t = ts::tune(ts::make_training_graph(ts::build_model("resnet50", {.batch = 300})), ts::strategy::swap, o);
  const auto& r = t.result;
  // The phase bound rebuilt from the plan itself, not from simulate()'s queues: each phase takes at
  // least its compute (each op's model time) or its copies (bytes over the link's bandwidth),
  // whichever is longer; forward with the swap-outs, backward and recompute with the swap-ins.
  const auto& g = *t.p.g;
  double fwd = 0, bwd_and_recompute = 0, out_bytes = 0, in_bytes = 0;
  for (const auto& st : t.p.steps) {
    if (st.kind == ts::step_kind::compute)
      (g.ops[st.op].cat == ts::category::forward ? fwd : bwd_and_recompute) += ts::op_seconds(g, st.op, o.device);
    else if (st.kind == ts::step_kind::swap_out)
      out_bytes += static_cast<double>(t.p.objects[st.object].bytes);
    else if (st.kind == ts::step_kind::swap_in)
      in_bytes += static_cast<double>(t.p.objects[st.object].bytes);
  }
  ASSERT_GT(out_bytes, 0) << "batch 300 of resnet50 swaps on a 16 GB V100";
  const double bound = std::max(fwd, out_bytes / o.device.d2h_bandwidth) +
                       std::max(bwd_and_recompute, in_bytes / o.device.h2d_bandwidth);
  EXPECT_NEAR(r.bound_seconds, bound, 1e-9 * bound);
  EXPECT_NEAR(r.percent_of_bound(), 100 * bound / r.step_seconds, 1e-9);
  // The step can never beat a serial queue: all compute one after another, and each copy direction.
  EXPECT_GE(r.step_seconds, (fwd + bwd_and_recompute) * (1 - 1e-12));
  EXPECT_GE(r.step_seconds, out_bytes / o.device.d2h_bandwidth * (1 - 1e-12));
  EXPECT_GE(r.step_seconds, in_bytes / o.device.h2d_bandwidth * (1 - 1e-12));
  // The swap plan overlaps copies with compute: within the bound's reach, not a serialised sum.
  EXPECT_GT(r.percent_of_bound(), 50);
  EXPECT_LE(r.percent_of_bound(), 100 + 1e-9);
}

TEST(profile, out_of_memory_message_gives_bytes) {
  ts::tune_options o;
  o.device = ts::device_preset("v100-nvlink2");
  o.device.memory_bytes = std::int64_t{1} << 30;
  const auto g = ts::make_training_graph(ts::build_model("resnet50", {.batch = 512}));
  try {
    ts::tune(g, ts::strategy::none, o);
    ADD_FAILURE() << "batch 512 fitted 1 GiB";
  } catch (const toru::error& e) {
    EXPECT_EQ(e.code(), toru::errc::out_of_memory);
    const auto budget = std::to_string(static_cast<std::int64_t>(0.9 * (1 << 30)));
    EXPECT_NE(e.message().find(budget + " bytes"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("bytes more"), std::string::npos) << e.message();
  }
}
