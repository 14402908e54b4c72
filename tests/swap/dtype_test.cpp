// SPDX-License-Identifier: BSD-3-Clause
// fp16 and bf16 plans. The swap planner is what models half precision in toru (comm and fft run
// float and double): a half-precision graph has every floating tensor at 2 bytes per element, its
// ops at the device's 16-bit rate, and plans and simulates like the fp32 one. Checked against the
// shapes and rates directly, not against the planner's own arithmetic.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <numeric>

#include "toru/core/error.hpp"
#include "toru/swap/models.hpp"
#include "toru/swap/tune.hpp"

namespace ts = toru::swap;

namespace {

std::int64_t elements(const std::vector<std::int64_t>& shape) {
  return std::accumulate(shape.begin(), shape.end(), std::int64_t{1}, std::multiplies<>());
}

bool floating(ts::dtype t) { return t == ts::dtype::f32 || t == ts::dtype::f16 || t == ts::dtype::bf16; }

TEST(dtype, names_and_sizes) {
  EXPECT_EQ(ts::parse_dtype("fp16"), ts::dtype::f16);
  EXPECT_EQ(ts::parse_dtype("half"), ts::dtype::f16);
  EXPECT_EQ(ts::parse_dtype("bfloat16"), ts::dtype::bf16);
  EXPECT_EQ(ts::size_of(ts::dtype::f16), 2);
  EXPECT_EQ(ts::size_of(ts::dtype::bf16), 2);
  EXPECT_EQ(ts::size_of(ts::dtype::f32), 4);
  EXPECT_THROW(ts::parse_dtype("fp8"), toru::error);
}

TEST(dtype, half_precision_graphs_hold_two_bytes_per_element) {
  for (auto half : {ts::dtype::f16, ts::dtype::bf16}) {
    for (const char* name : {"mlp", "resnet18"}) {
      const auto f32 = ts::build_model(name, {.batch = 4, .height = 32, .width = 32});
      const auto f16 = ts::build_model(name, {.batch = 4, .height = 32, .width = 32, .type = half});
      ASSERT_EQ(f16.tensors.size(), f32.tensors.size()) << name;
      std::int64_t params = 0;
      for (std::size_t i = 0; i < f16.tensors.size(); ++i) {
        const auto& t = f16.tensors[i];
        EXPECT_EQ(t.shape, f32.tensors[i].shape) << name << " " << t.name;
        if (!floating(f32.tensors[i].type)) continue;  // labels, indices: as they were
        EXPECT_EQ(t.type, half) << name << " " << t.name;
        EXPECT_EQ(t.bytes, 2 * elements(t.shape)) << name << " " << t.name;
        if (t.kind == ts::tensor_kind::parameter) params += elements(t.shape);
      }
      EXPECT_EQ(f16.parameter_bytes(), 2 * params) << name;
      EXPECT_EQ(2 * f16.parameter_bytes(), f32.parameter_bytes()) << name;
    }
  }
  // mlp's parameters by hand: 784*256+256 + 256*128+128 + 128*10+10.
  const auto m = ts::build_model("mlp", {.batch = 2, .height = 28, .width = 28, .type = ts::dtype::bf16});
  EXPECT_EQ(m.parameter_bytes(), (784 * 256 + 256 + 256 * 128 + 128 + 128 * 10 + 10) * 2);
}

TEST(dtype, half_precision_ops_run_at_the_16_bit_rate) {
  auto d = ts::device_preset("v100-nvlink2");
  d.flops_fp32 = 1e12;
  d.flops_16 = 8e12;
  d.memory_bandwidth = 1e18;  // compute-bound everywhere: only the rate differs
  d.op_overhead = 0;
  const auto f32 = ts::make_training_graph(ts::build_model("resnet18", {.batch = 8, .height = 64, .width = 64}));
  const auto f16 = ts::make_training_graph(
      ts::build_model("resnet18", {.batch = 8, .height = 64, .width = 64, .type = ts::dtype::f16}));
  ASSERT_EQ(f16.ops.size(), f32.ops.size());
  int compared = 0;
  for (std::size_t o = 0; o < f16.ops.size(); ++o) {
    if (f16.ops[o].flops <= 0) continue;
    EXPECT_DOUBLE_EQ(f16.ops[o].flops, f32.ops[o].flops) << f16.ops[o].name;
    EXPECT_NEAR(ts::op_seconds(f16, static_cast<int>(o), d), f16.ops[o].flops / 8e12, 1e-15) << f16.ops[o].name;
    EXPECT_NEAR(ts::op_seconds(f32, static_cast<int>(o), d), f32.ops[o].flops / 1e12, 1e-15) << f32.ops[o].name;
    ++compared;
  }
  EXPECT_GT(compared, 20);
}

// Half the bytes: on a device between the two precisions' needs, the fp32 step cannot run without
// swapping and the fp16 one fits as it is.
TEST(dtype, half_precision_plans_fit_where_fp32_must_swap) {
  const std::int64_t batch = 64;
  const auto f32 = ts::make_training_graph(ts::build_model("resnet50", {.batch = batch}));
  const auto f16 = ts::make_training_graph(ts::build_model("resnet50", {.batch = batch, .type = ts::dtype::f16}));
  const auto live32 = ts::replay_memory(ts::make_plan(f32, {})).peak;
  const auto live16 = ts::replay_memory(ts::make_plan(f16, {})).peak;
  // Activations and gradients halve; the int64 max-pool indices and labels do not.
  EXPECT_LT(live16, live32 * 0.52);
  EXPECT_GT(live16, live32 * 0.45);
  ts::tune_options o;
  o.device = ts::device_preset("v100-nvlink2");
  o.sim.memory_fraction = 1.0;
  const auto need32 = ts::simulate(ts::make_plan(f32, {}), o.device, o.sim).peak_bytes;
  const auto need16 = ts::simulate(ts::make_plan(f16, {}), o.device, o.sim).peak_bytes;
  ASSERT_LT(need16, need32);
  o.device.memory_bytes = (need16 + need32) / 2;
  EXPECT_THROW(ts::tune(f32, ts::strategy::none, o), toru::error);
  const auto fits = ts::tune(f16, ts::strategy::none, o);
  EXPECT_TRUE(fits.result.fits);
  EXPECT_EQ(fits.result.swapped_out_bytes, 0);
  EXPECT_EQ(fits.result.peak_bytes, need16);
  const auto swapped = ts::tune(f32, ts::strategy::swap, o);
  EXPECT_TRUE(swapped.result.fits);
  EXPECT_GT(swapped.result.swapped_out_bytes, 0);
}

}  // namespace
