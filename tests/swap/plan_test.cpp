// SPDX-License-Identifier: BSD-3-Clause
// Levels and distances, each TFLMS rewrite rule on small graphs with hand-computed peaks, the memory
// replay against an independent allocator trace, and the time model on chains with known answers.
#include <algorithm>
#include <map>
#include <random>
#include <set>

#include <gtest/gtest.h>

#include "test_graphs.hpp"
#include "toru/core/error.hpp"
#include "toru/swap/models.hpp"
#include "toru/swap/plan.hpp"
#include "toru/swap/simulate.hpp"
#include "toru/swap/timeline.hpp"

namespace ts = toru::swap;
using swap_test::make_chain;
using swap_test::mk;

namespace {

int count_steps(const ts::plan& p, ts::step_kind k) {
  return static_cast<int>(
      std::count_if(p.steps.begin(), p.steps.end(), [&](const ts::step& s) { return s.kind == k; }));
}

// The compute op issued last before step `s`.
std::string op_before(const ts::plan& p, int s) {
  for (int i = s; i >= 0; --i)
    if (p.steps[i].kind == ts::step_kind::compute) return p.g->ops[p.steps[i].op].name;
  return "";
}

int swap_in_step(const ts::plan& p) {
  for (int i = 0; i < static_cast<int>(p.steps.size()); ++i)
    if (p.steps[i].kind == ts::step_kind::swap_in) return i;
  return -1;
}

ts::device_spec ms_device() {
  ts::device_spec d;
  d.memory_bytes = 1 << 20;
  d.flops_fp32 = d.flops_16 = 1e12;  // 1 GFLOP op = 1 ms
  d.memory_bandwidth = 1e15;
  d.h2d_bandwidth = d.d2h_bandwidth = 2e5;  // 1000 B = 5 ms
  d.op_overhead = 0;
  return d;
}

}  // namespace

TEST(levels, longest_path_and_distance) {
  // a -> b -> d, a -> c -> d, a -> d (a long edge does not shorten d's level), d -> e; f isolated.
  ts::graph g;
  const auto f32 = ts::dtype::f32;
  auto T = [&](const char* n) { return g.add_tensor(n, {2, 2}, f32, ts::tensor_kind::activation); };
  const int ta = T("ta"), tb = T("tb"), tc = T("tc"), td = T("td"), te = T("te"), tf = T("tf");
  const int x = g.add_tensor("x", {2, 2}, f32, ts::tensor_kind::input);
  const int a = g.add_op(mk("a", "op", {x}, {ta}));
  const int b = g.add_op(mk("b", "op", {ta}, {tb}));
  const int c = g.add_op(mk("c", "op", {ta}, {tc}));
  const int d = g.add_op(mk("d", "op", {tb, tc, ta}, {td}));
  const int e = g.add_op(mk("e", "op", {td}, {te}));
  const int f = g.add_op(mk("f", "op", {x}, {tf}));
  auto l = ts::topo_levels(g);
  EXPECT_EQ(l.level, (std::vector<int>{0, 1, 1, 2, 3, 0}));
  EXPECT_EQ(l.count(), 4);
  EXPECT_EQ(l.by_level[0], (std::vector<int>{a, f}));
  EXPECT_EQ(l.by_level[1], (std::vector<int>{b, c}));
  EXPECT_EQ(ts::distance(l, a, e), 3);
  EXPECT_EQ(ts::distance(l, b, c), 0);
  // A control edge c -> b lengthens the path.
  g.ops[b].control_inputs.push_back(c);
  l = ts::topo_levels(g);
  EXPECT_EQ(l.level[b], 2);
  EXPECT_EQ(l.level[d], 3);
  EXPECT_EQ(l.level[e], 4);
  (void)e;
  // A cycle is an error.
  g.ops[c].control_inputs.push_back(e);
  EXPECT_THROW(ts::topo_levels(g), toru::error);
}

TEST(levels, training_graph_levels_grow_through_backward) {
  const auto t = ts::make_training_graph(ts::build_model("alexnet", {.batch = 2}));
  const auto l = ts::topo_levels(t);
  for (std::size_t o = 0; o < t.ops.size(); ++o)
    for (int x : t.ops[o].inputs)
      if (t.tensors[x].producer >= 0) {
        EXPECT_GT(l.level[o], l.level[t.tensors[x].producer]);
      }
}

TEST(rewrite, no_swap_peak_by_hand) {
  auto c = make_chain();
  const auto p = ts::make_plan(c.g, {});
  const auto r = ts::replay_memory(p);
  // At C2: t + u1 + u2 = 1000 + 400 + 400.
  EXPECT_EQ(r.peak, 1800);
  EXPECT_EQ(count_steps(p, ts::step_kind::swap_out), 0);
}

TEST(rewrite, threshold_selects_far_consumers) {
  auto c = make_chain();
  ts::swap_options o;
  o.threshold = 6;  // distance(A, Z) = 6 is not more than 6
  EXPECT_EQ(count_steps(ts::make_plan(c.g, o), ts::step_kind::swap_out), 0);
  o.threshold = 5;
  const auto p = ts::make_plan(c.g, o);
  EXPECT_EQ(count_steps(p, ts::step_kind::swap_out), 1);
  EXPECT_EQ(count_steps(p, ts::step_kind::swap_in), 1);
  // The swapped original is released after its last near consumer C1, with a fence.
  const auto& orig = *std::find_if(p.objects.begin(), p.objects.end(),
                                   [&](const auto& ob) { return ob.tensor == c.t && ob.copy == 0; });
  EXPECT_EQ(op_before(p, orig.free_step), "C1");
  EXPECT_TRUE(p.steps[orig.free_step].fence);
  // Z reads the swap-in copy.
  EXPECT_EQ(p.objects[p.input_objects[c.z_op][0]].copy, 1);
}

TEST(rewrite, ahead_places_the_trigger) {
  auto c = make_chain();
  ts::swap_options o;
  o.threshold = 1;
  o.ahead = 1;  // TFLMS scans from level(Z) - ahead - 1 = 4: C4
  auto p = ts::make_plan(c.g, o);
  EXPECT_EQ(op_before(p, swap_in_step(p)), "C4");
  // After C4 (u3 freed, u4 live) + t; C5 adds u5 while u4 is still read: 400 + 1000 + 400.
  EXPECT_EQ(ts::replay_memory(p).peak, 1800);
  o.ahead = 3;  // level 2: C2
  p = ts::make_plan(c.g, o);
  EXPECT_EQ(op_before(p, swap_in_step(p)), "C2");
  o.ahead = -1;  // sequential strategy: the first destination level uses ahead 3
  p = ts::make_plan(c.g, o);
  EXPECT_EQ(op_before(p, swap_in_step(p)), "C2");
}

TEST(rewrite, sync_h2d_is_just_in_time_and_lowers_the_peak) {
  auto c = make_chain();
  ts::swap_options o;
  o.threshold = 1;
  o.sync = ts::sync_mode::h2d;
  const auto p = ts::make_plan(c.g, o);
  EXPECT_EQ(op_before(p, swap_in_step(p)), "C5");
  // Peak: x + t at A (1400), t + u1 at C1 (1400), u5 + t + z at Z (1404).
  EXPECT_EQ(ts::replay_memory(p).peak, 1404);
}

TEST(rewrite, swapout_delay_and_sync_d2h_set_the_release) {
  auto c = make_chain();
  ts::swap_options o;
  o.threshold = 1;
  o.sync = ts::sync_mode::h2d;
  o.swapout_delay = 3;  // release after max(C1, A + 3) = C3: t + u2 + u3 at C3
  auto p = ts::make_plan(c.g, o);
  EXPECT_EQ(ts::replay_memory(p).peak, 1800);
  o.sync = ts::sync_mode::both;  // sync D2H: no delay
  p = ts::make_plan(c.g, o);
  EXPECT_EQ(ts::replay_memory(p).peak, 1404);
}

TEST(rewrite, groupby_merges_close_consumers) {
  // t read by Z6, Z7 and Z9 at levels 6, 7 and 9.
  ts::graph g;
  const auto f32 = ts::dtype::f32;
  const int x = g.add_tensor("x", {4, 4}, f32, ts::tensor_kind::input);
  const int t = g.add_tensor("t", {4, 4}, f32, ts::tensor_kind::activation);
  g.add_op(mk("A", "op", {x}, {t}));
  int prev = t;
  std::vector<int> u{t};
  for (int i = 1; i <= 8; ++i) {
    const int ui = g.add_tensor("u" + std::to_string(i), {4, 4}, f32, ts::tensor_kind::activation);
    g.add_op(mk("C" + std::to_string(i), "op", {prev}, {ui}));
    u.push_back(ui);
    prev = ui;
  }
  for (int lv : {6, 7, 9}) {
    const int z = g.add_tensor("z" + std::to_string(lv), {1}, f32, ts::tensor_kind::activation);
    g.add_op(mk("Z" + std::to_string(lv), "op", {t, u[lv - 1]}, {z}));
  }
  ts::swap_options o;
  o.threshold = 2;
  for (auto [gb, expect] : std::vector<std::pair<int, int>>{{0, 3}, {1, 2}, {2, 1}, {5, 1}}) {
    o.groupby = gb;
    EXPECT_EQ(count_steps(ts::make_plan(g, o), ts::step_kind::swap_in), expect) << "groupby " << gb;
  }
}

TEST(rewrite, serialization_chains_a_level) {
  // Three parallel ops at level 1 become three levels.
  ts::graph g;
  const auto f32 = ts::dtype::f32;
  const int x = g.add_tensor("x", {2, 2}, f32, ts::tensor_kind::input);
  const int a = g.add_tensor("a", {2, 2}, f32, ts::tensor_kind::activation);
  g.add_op(mk("A", "op", {x}, {a}));
  std::vector<int> outs;
  for (int i = 0; i < 3; ++i) {
    outs.push_back(g.add_tensor("b" + std::to_string(i), {2, 2}, f32, ts::tensor_kind::activation));
    g.add_op(mk("B" + std::to_string(i), "op", {a}, {outs.back()}));
  }
  const int z = g.add_tensor("z", {2, 2}, f32, ts::tensor_kind::activation);
  g.add_op(mk("Z", "op", outs, {z}));
  ts::swap_options o;
  EXPECT_EQ(ts::make_plan(g, o).lv.count(), 3);
  o.serialize_levels = {1};
  EXPECT_EQ(ts::make_plan(g, o).lv.count(), 5);
  o.serialize_levels = {7};
  EXPECT_THROW(ts::make_plan(g, o), toru::error);
}

// x -> A -> a -> relu -> r -> Z(r, x) -> z (100-byte tensors, z 4 B; x read to the end). In place,
// relu's output takes over a's storage (a dies at relu): peak x + r + z = 204 B instead of
// x + a + r = 300 B at relu. When Z also reads a, a does not die at relu: x + a + r + z = 304 B.
std::vector<std::int64_t> allocator_trace(const ts::plan& p);

TEST(rewrite, in_place_relu_reuses_a_dying_input) {
  for (const bool a_read_later : {false, true}) {
    ts::graph g;
    const auto f32 = ts::dtype::f32;
    const int x = g.add_tensor("x", {5, 5}, f32, ts::tensor_kind::input);
    const int a = g.add_tensor("a", {5, 5}, f32, ts::tensor_kind::activation);
    const int r = g.add_tensor("r", {5, 5}, f32, ts::tensor_kind::activation);
    const int z = g.add_tensor("z", {1}, f32, ts::tensor_kind::activation);
    g.add_op(mk("A", "op", {x}, {a}));
    g.add_op(mk("R", "relu", {a}, {r}));
    g.add_op(mk("Z", "op", a_read_later ? std::vector<int>{r, x, a} : std::vector<int>{r, x}, {z}));
    ts::swap_options o;
    const auto p = ts::make_plan(g, o);
    EXPECT_EQ(ts::replay_memory(p).peak, a_read_later ? 304 : 204) << a_read_later;
    EXPECT_EQ(allocator_trace(p), ts::replay_memory(p).in_use);
    o.in_place = false;
    EXPECT_EQ(ts::replay_memory(ts::make_plan(g, o)).peak, a_read_later ? 304 : 300);
  }
}

TEST(rewrite, rejects_bad_options) {
  auto c = make_chain();
  ts::swap_options o;
  o.threshold = -1;
  EXPECT_THROW(ts::make_plan(c.g, o), toru::error);
  o.threshold = 1;
  o.groupby = -2;
  EXPECT_THROW(ts::make_plan(c.g, o), toru::error);
}

// Replays the steps with an explicit set of live allocations, independent of the objects' recorded
// alloc/free steps; checks every read hits a live object and returns bytes in use after each step.
std::vector<std::int64_t> allocator_trace(const ts::plan& p) {
  const auto& g = *p.g;
  std::map<int, std::int64_t> live;
  for (int k = 0; k < static_cast<int>(p.objects.size()); ++k)
    if (p.objects[k].alloc_step < 0) live[k] = p.objects[k].bytes;
  std::map<int, int> original;  // tensor -> object of copy 0
  for (int k = 0; k < static_cast<int>(p.objects.size()); ++k)
    if (p.objects[k].copy == 0) original[p.objects[k].tensor] = k;
  std::vector<std::int64_t> used;
  std::set<int> handed;  // storage an in-place op's output takes over: readable by that op only
  for (const auto& s : p.steps) {
    switch (s.kind) {
      case ts::step_kind::compute:
        for (int obj : p.input_objects[s.op])
          if (obj >= 0) {
            EXPECT_TRUE(live.contains(obj) || handed.contains(obj))
                << "op " << g.ops[s.op].name << " reads a released object";
          }
        if (!handed.empty()) {
          EXPECT_EQ(handed.size(), 1u);
          EXPECT_EQ(p.objects[*handed.begin()].bytes, g.tensors[g.ops[s.op].outputs.at(0)].bytes);
        }
        handed.clear();
        for (int t : g.ops[s.op].outputs) {
          const int obj = original.at(t);
          EXPECT_FALSE(live.contains(obj));
          live[obj] = p.objects[obj].bytes;
        }
        break;
      case ts::step_kind::swap_in:
        live[s.object] = p.objects[s.object].bytes;
        break;
      case ts::step_kind::swap_out:
        EXPECT_TRUE(live.contains(s.object));
        break;
      case ts::step_kind::free:
        EXPECT_TRUE(live.contains(s.object));
        live.erase(s.object);
        if (s.in_place) handed.insert(s.object);
        break;
    }
    std::int64_t sum = 0;
    for (const auto& [k, b] : live) sum += b;
    used.push_back(sum);
  }
  EXPECT_TRUE(live.empty()) << live.size() << " objects never released";
  return used;
}

TEST(replay, equals_an_allocator_trace_on_random_options) {
  std::mt19937 rng(1234);
  const auto g = ts::make_training_graph(ts::build_model("googlenet", {.batch = 3, .height = 97, .width = 131}));
  for (int trial = 0; trial < 12; ++trial) {
    ts::swap_options o;
    o.threshold = std::uniform_int_distribution<int>(1, 60)(rng);
    o.ahead = std::uniform_int_distribution<int>(-1, 12)(rng);
    o.groupby = std::uniform_int_distribution<int>(0, 6)(rng);
    o.sync = static_cast<ts::sync_mode>(std::uniform_int_distribution<int>(0, 3)(rng));
    o.swapout_delay = std::uniform_int_distribution<int>(0, 5)(rng);
    o.order = trial % 2 ? ts::schedule_order::depth_first : ts::schedule_order::by_level;
    const auto p = ts::make_plan(g, o);
    const auto r = ts::replay_memory(p);
    const auto trace = allocator_trace(p);
    ASSERT_EQ(trace, r.in_use) << "trial " << trial;
    EXPECT_EQ(r.peak, std::max(r.initial, *std::max_element(trace.begin(), trace.end())));
    EXPECT_GT(count_steps(p, ts::step_kind::swap_out), 0);
  }
}

TEST(simulate, chain_without_swaps_is_the_sum_of_op_times) {
  auto c = make_chain();
  const auto p = ts::make_plan(c.g, {});
  const auto r = ts::simulate(p, ms_device());
  EXPECT_NEAR(r.step_seconds, 7e-3, 1e-12);
  EXPECT_NEAR(r.stall_seconds, 0, 1e-15);
  EXPECT_NEAR(r.forward_seconds, 6e-3, 1e-12);
  EXPECT_NEAR(r.backward_seconds, 1e-3, 1e-12);
  EXPECT_NEAR(r.bound_seconds, 7e-3, 1e-12);
}

TEST(simulate, chain_with_swaps_has_the_hand_computed_time) {
  auto c = make_chain();
  ts::swap_options o;
  o.threshold = 1;
  o.sync = ts::sync_mode::h2d;
  o.swapout_delay = 0;
  const auto r = ts::simulate(ts::make_plan(c.g, o), ms_device());
  // A 0-1 ms; swap-out 1-6; C1 1-2, fence waits to 6; C2..C5 6-10; JIT swap-in 10-15; Z 15-16.
  EXPECT_NEAR(r.step_seconds, 16e-3, 1e-12);
  EXPECT_NEAR(r.stall_seconds, 9e-3, 1e-12);
  EXPECT_EQ(r.swapped_out_bytes, 1000);
  EXPECT_EQ(r.swapped_in_bytes, 1000);
  // Bound: max(C_f 6, S_out 5) + max(C_b 1, S_in 5) = 11 ms; global: max(7, 5, 5).
  EXPECT_NEAR(r.bound_seconds, 11e-3, 1e-12);
  EXPECT_NEAR(r.global_bound_seconds, 7e-3, 1e-12);
  // Prefetching after C2 (ahead 3): C2 runs 6-7, the swap-in 7-12 behind C3..C5 (7-10), Z 12-13.
  o.sync = ts::sync_mode::none;
  o.ahead = 3;
  const auto r2 = ts::simulate(ts::make_plan(c.g, o), ms_device());
  EXPECT_NEAR(r2.step_seconds, 13e-3, 1e-12);
  EXPECT_NEAR(r2.stall_seconds, 4e-3 + 2e-3, 1e-12);
}

TEST(simulate, memory_budget_and_overflow_point) {
  auto c = make_chain();
  auto d = ms_device();
  d.memory_bytes = 1500;
  const auto p = ts::make_plan(c.g, {});
  const auto r = ts::simulate(p, d, {.memory_fraction = 1.0, .opt = ts::optimizer::sgd});
  EXPECT_FALSE(r.fits);
  EXPECT_EQ(r.peak_bytes, 1800);
  EXPECT_EQ(r.overflow_at, "C2");
  ts::swap_options o;
  o.threshold = 1;
  o.sync = ts::sync_mode::both;
  EXPECT_TRUE(ts::simulate(ts::make_plan(c.g, o), d, {.memory_fraction = 1.0, .opt = ts::optimizer::sgd}).fits);
}

TEST(timeline, svg_shows_memory_budget_and_three_queues) {
  auto c = make_chain();
  ts::swap_options o;
  o.threshold = 1;
  const auto p = ts::make_plan(c.g, o);
  auto d = ms_device();
  EXPECT_THROW(ts::timeline_svg(p, ts::simulate(p, d), "x"), toru::error);  // no trace recorded
  const auto r = ts::simulate(p, d, {.record_trace = true});
  ASSERT_EQ(r.trace.size(), 7u + 1u + 1u);  // 7 ops, one swap-out, one swap-in
  const std::string svg = ts::timeline_svg(p, r, "chain <test>");
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_NE(svg.find("chain &lt;test&gt;"), std::string::npos);  // escaped title
  EXPECT_NE(svg.find("budget"), std::string::npos);
  for (const char* lane : {"compute", "device→host", "host→device"}) EXPECT_NE(svg.find(lane), std::string::npos);
  EXPECT_NE(svg.find("<title>t "), std::string::npos);  // the swap copies are labelled with the tensor
  EXPECT_NE(svg.find("<title>Z "), std::string::npos);
}
