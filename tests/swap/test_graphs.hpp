// SPDX-License-Identifier: BSD-3-Clause
// Small hand-made graphs for the planner tests.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "toru/swap/graph.hpp"

namespace swap_test {

namespace ts = toru::swap;

// An op from its fields (designated initializers would trip -Wmissing-field-initializers).
inline ts::op mk(std::string name, std::string type, std::vector<int> in, std::vector<int> out,
                 ts::category cat = ts::category::forward, double flops = 0) {
  ts::op o;
  o.name = std::move(name);
  o.type = std::move(type);
  o.inputs = std::move(in);
  o.outputs = std::move(out);
  o.cat = cat;
  o.flops = flops;
  o.bytes_touched = 1;  // keep the time model compute-bound unless a test says otherwise
  return o;
}

// x(400 B) -> A -> t(1000 B) -> C1 -> u1 -> ... -> C5 -> u5 (400 B each); Z(t, u5) -> z (4 B).
// Levels: A 0, Ci i, Z 6. With every op 1 GFLOP on a 1 TFLOP/s device each op takes 1 ms.
struct chain {
  ts::graph g;
  int t = -1, z_op = -1;
};

inline chain make_chain(ts::category z_cat = ts::category::backward) {
  chain c;
  auto& g = c.g;
  g.name = "chain";
  const auto f32 = ts::dtype::f32;
  const int x = g.add_tensor("x", {10, 10}, f32, ts::tensor_kind::input);
  c.t = g.add_tensor("t", {10, 25}, f32, ts::tensor_kind::activation);
  g.add_op(mk("A", "op", {x}, {c.t}, ts::category::forward, 1e9));
  int prev = c.t;
  for (int i = 1; i <= 5; ++i) {
    const int u = g.add_tensor("u" + std::to_string(i), {10, 10}, f32, ts::tensor_kind::activation);
    g.add_op(mk("C" + std::to_string(i), "op", {prev}, {u}, ts::category::forward, 1e9));
    prev = u;
  }
  const int z = g.add_tensor("z", {1}, f32, ts::tensor_kind::activation);
  c.z_op = g.add_op(mk("Z", "op", {c.t, prev}, {z}, z_cat, 1e9));
  return c;
}

}  // namespace swap_test
