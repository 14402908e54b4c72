// SPDX-License-Identifier: BSD-3-Clause
#include "toru/swap/simulate.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "toru/core/error.hpp"

namespace toru::swap {

double op_seconds(const graph& g, int o, const device_spec& d) {
  const auto& op = g.ops[o];
  dtype t = dtype::f32;
  if (!op.outputs.empty())
    t = g.tensors[op.outputs.front()].type;
  else if (!op.inputs.empty())
    t = g.tensors[op.inputs.front()].type;
  return std::max(op.flops / d.flops_for(t), op.bytes_touched / d.memory_bandwidth) + d.op_overhead;
}

double op_seconds(const graph& g, int o, const device_spec& d, const sim_options& options) {
  const auto& m = options.measured_op_seconds;
  if (m.empty()) return op_seconds(g, o, d);
  if (static_cast<std::size_t>(o) < m.size()) return m[static_cast<std::size_t>(o)];
  const auto& op = g.ops[o];
  if (op.cat == category::recompute && op.forward_op >= 0 && static_cast<std::size_t>(op.forward_op) < m.size())
    return m[static_cast<std::size_t>(op.forward_op)];
  return op_seconds(g, o, d);
}

std::vector<std::string> memory_profile_names() { return {"pytorch", "toru", "tflms"}; }

memory_profile memory_profile_preset(std::string_view name) {
  constexpr std::int64_t mib = 1024 * 1024;
  if (name == "pytorch") return {"pytorch", true, true, 768 * mib, 256 * mib, 0.05, 1.0};
  if (name == "toru") return {"toru", true, false, 0, 0, 0, 1.0};
  if (name == "tflms") return {"tflms", false, false, 0, 0, 0, 0.9};
  throw error(errc::invalid_argument, fmt::format("memory profile: expected one of {}, got '{}'",
                                                  fmt::join(memory_profile_names(), ", "), name));
}

void apply(const memory_profile& p, training_options& training, sim_options& sim) {
  training.persistent_param_grads = p.persistent_param_grads;
  training.maxpool_indices = p.maxpool_indices;
  training.dropout_masks = p.maxpool_indices;  // both are PyTorch's saved-tensor conventions
  sim.context_bytes = p.context_bytes;
  sim.workspace_bytes = p.workspace_bytes;
  sim.fragmentation = p.fragmentation;
  sim.memory_fraction = p.memory_fraction;
}

sim_result simulate(const plan& p, const device_spec& d, const sim_options& options) {
  sim_result r;
  const graph& g = *p.g;
  r.persistent_bytes =
      g.parameter_bytes() * (1 + optimizer_state_factor(options.opt) + (g.persistent_param_grads ? 1 : 0)) +
      options.workspace_bytes + options.context_bytes;
  r.budget_bytes = static_cast<std::int64_t>(options.memory_fraction * static_cast<double>(d.memory_bytes));
  const replay rep = replay_memory(p);
  // What the allocator holds for `live` bytes of objects.
  auto held = [&](std::int64_t live) {
    return options.fragmentation > 0
               ? static_cast<std::int64_t>(std::ceil(static_cast<double>(live) * (1 + options.fragmentation)))
               : live;
  };
  r.peak_bytes = r.persistent_bytes + held(rep.peak);
  r.peak_step = rep.peak_step;
  r.host_peak_bytes = rep.host_peak;
  r.fits = r.peak_bytes <= r.budget_bytes && (d.host_memory_bytes == 0 || rep.host_peak <= d.host_memory_bytes);
  if (r.peak_bytes > r.budget_bytes) {
    std::int64_t prev = r.persistent_bytes + held(rep.initial);
    for (std::size_t s = 0; s < p.steps.size(); ++s) {
      const std::int64_t now = r.persistent_bytes + held(rep.in_use[s]);
      if (now > r.budget_bytes && now > prev) {
        r.overflow_step = static_cast<int>(s);
        const auto& st = p.steps[s];
        r.overflow_at = st.kind == step_kind::compute ? g.ops[st.op].name
                                                      : "swap-in of " + g.tensors[p.objects[st.object].tensor].name;
        break;
      }
      prev = now;
    }
    if (r.overflow_step < 0) r.overflow_at = "step inputs and persistent state";
  }

  const std::size_t nobj = p.objects.size();
  std::vector<double> ready(nobj, 0.0), out_end(nobj, 0.0);
  std::vector<double> op_end(g.ops.size(), 0.0);
  double tc = 0, td = 0, th = 0;
  const double bwd = d.d2h_bandwidth, bwh = d.h2d_bandwidth;
  double c_f = 0, c_b = 0, c_r = 0;
  for (std::size_t s = 0; s < p.steps.size(); ++s) {
    const step& st = p.steps[s];
    switch (st.kind) {
      case step_kind::compute: {
        double start = tc;
        for (int obj : p.input_objects[st.op])
          if (obj >= 0) start = std::max(start, ready[obj]);
        r.stall_seconds += start - tc;
        const double dt = op_seconds(g, st.op, d, options);
        const auto& o = g.ops[st.op];
        if (o.cat == category::forward)
          c_f += dt;
        else if (o.cat == category::recompute) {
          c_r += dt;
          ++r.ops_recomputed;
          r.recomputed_flops += o.flops;
        } else
          c_b += dt;
        tc = start + dt;
        op_end[st.op] = tc;
        if (options.record_trace) r.trace.push_back({0, start, tc, st.op, -1, o.cat});
        break;
      }
      case step_kind::swap_out: {
        const auto& ob = p.objects[st.object];
        const double start = std::max(td, op_end[g.tensors[ob.tensor].producer]);
        td = start + static_cast<double>(ob.bytes) / bwd;
        out_end[st.object] = td;
        r.swapped_out_bytes += ob.bytes;
        ++r.swap_outs;
        r.d2h_busy_seconds += td - start;
        if (options.record_trace) r.trace.push_back({1, start, td, -1, st.object, category::forward});
        break;
      }
      case step_kind::swap_in: {
        const auto& ob = p.objects[st.object];
        const double start = std::max({th, tc, out_end[ob.source]});
        th = start + static_cast<double>(ob.bytes) / bwh;
        ready[st.object] = th;
        r.swapped_in_bytes += ob.bytes;
        ++r.swap_ins;
        r.h2d_busy_seconds += th - start;
        if (options.record_trace) r.trace.push_back({2, start, th, -1, st.object, category::backward});
        break;
      }
      case step_kind::free:
        if (st.fence && out_end[st.object] > tc) {
          r.stall_seconds += out_end[st.object] - tc;
          tc = out_end[st.object];
        }
        break;
    }
    if (options.record_trace) r.memory.emplace_back(tc, r.persistent_bytes + held(rep.in_use[s]));
  }
  r.step_seconds = std::max({tc, td, th});
  r.forward_seconds = c_f;
  r.backward_seconds = c_b;
  r.recompute_seconds = c_r;
  const double so = static_cast<double>(r.swapped_out_bytes) / bwd, si = static_cast<double>(r.swapped_in_bytes) / bwh;
  r.bound_seconds = std::max(c_f, so) + std::max(c_b + c_r, si);
  r.global_bound_seconds = std::max({c_f + c_b + c_r, so, si});
  return r;
}

}  // namespace toru::swap
