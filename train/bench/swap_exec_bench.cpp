// SPDX-License-Identifier: BSD-3-Clause
// swap_exec_bench: the swap-plan executor on the host-emulated device against the planner.
//
//   swap_exec_bench step     --model resnet18 --image 32 --batch 8 --fraction 0.6 --strategy swap
//       measured step time (median of --steps) next to the planner's simulation of the same plan with
//       the measured per-op times, and the plan's peak next to the arena's.
//   swap_exec_bench maxbatch --model resnet50 --image 32 --headroom 64MiB
//       largest batch that runs without a plan / with swapping (executed: one step each), next to
//       the planner's answer; V100-like ratio of compute rate to link bandwidth.
//   swap_exec_bench hybrid   --model resnet50 --image 32 --batch 24 --headroom 16MiB --scale 5000
//       swap-only vs hybrid (vs swap-only again: the noise floor) step time on an emulated device
//       that is a V100 + NVLink2 slowed down --scale times (compute rate, memory bandwidth and link
//       alike, so the ratios are the V100's): median and range of --steps timed rounds after two
//       warm-up steps, next to the planner's prediction from the device description and from the
//       per-op times measured at this batch (the executor's calibration).
//
// The device description the planner uses is calibrated first: one step of the model at a small
// batch without a plan, least squares of per-op times against t = flops / R + c. Output: one JSON
// object per line. A benchmark, not a test (wrap in flock on a shared machine).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "toru/core/error.hpp"
#include "toru/swap/models.hpp"
#include "toru/topology/units.hpp"
#include "toru/train/device_memory.hpp"
#include "toru/train/plan_executor.hpp"

namespace tt = toru::train;
namespace ts = toru::swap;
using json = nlohmann::ordered_json;

namespace {

struct args {
  std::string mode = "step", model = "resnet18", strategy = "swap", headroom = "64MiB";
  std::int64_t image = 32, batch = 8, steps = 5, limit = 512;
  double fraction = 0.6;
  double flop_per_byte = 208.5;  // V100 + NVLink2 preset: 13.3 TFLOP/s achieved over 64 GB/s
  double link_bw = 0;            // 0: calibrated rate / flop_per_byte
  int threads = 0;
  double flops = 0.3225e9, overhead = 16.3e-3;  // predict: the device's rate and per-op overhead
  double scale = 5000;                          // hybrid: the emulated V100's slow-down
  double overhead_us = 0;                       // hybrid: V100 per-op overhead (before scaling)
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

ts::graph build(const args& a, std::int64_t batch) {
  return ts::build_model(a.model, {.batch = batch, .height = a.image, .width = a.image, .classes = 10});
}

struct data {
  std::vector<float> x;
  std::vector<std::int32_t> y;
};
data make_data(tt::model& m) {
  std::mt19937 gen(1);
  std::normal_distribution<float> nd;
  data d;
  std::int64_t n = 1;
  for (auto e : m.input_shape()) n *= e;
  d.x.resize(static_cast<std::size_t>(n));
  for (auto& v : d.x) v = nd(gen);
  d.y.resize(static_cast<std::size_t>(m.batch()));
  for (auto& v : d.y) v = static_cast<std::int32_t>(gen() % 10);
  return d;
}

tt::executor_options base_options(const ts::device_spec& dev, double bw, ts::strategy s, std::size_t budget) {
  tt::executor_options o;
  o.device = dev;
  o.strategy = s;
  o.budget = budget;
  o.link = {.d2h = {.bandwidth = bw, .latency = 10e-6}, .h2d = {.bandwidth = bw, .latency = 10e-6}};
  return o;
}

// One step without a plan at a small batch; fit t = flops / R + c over the compute ops.
ts::device_spec calibrate(const args& a) {
  const auto g = build(a, 2);
  tt::model m(g, {.threads = a.threads, .seed = 1, .defer_activations = true});
  ts::device_spec dev = ts::device_preset("v100-nvlink2");
  auto ex = tt::plan_executor::install(m, base_options(dev, 1e12, ts::strategy::none, std::size_t{1} << 40));
  const auto d = make_data(m);
  for (int i = 0; i < 2; ++i) {
    m.forward(d.x, d.y, {});
    m.backward();
  }
  // Per-op times of the last step come back through the simulation's inputs.
  const auto& p = ex->plan();
  auto r = ex->simulate_measured_ops();
  (void)r;
  std::vector<double> t, f;
  const auto& trace = ex->last_step().trace.trace;
  for (const auto& e : trace)
    if (e.queue == 0 && p.g->ops[e.op].cat != ts::category::update) {
      t.push_back(e.end - e.start);
      f.push_back(p.g->ops[e.op].flops);
    }
  // Least squares for (1/R, c).
  double sf = 0, st = 0, sff = 0, sft = 0;
  const double n = static_cast<double>(t.size());
  for (std::size_t i = 0; i < t.size(); ++i) {
    sf += f[i];
    st += t[i];
    sff += f[i] * f[i];
    sft += f[i] * t[i];
  }
  double inv_r = (n * sft - sf * st) / (n * sff - sf * sf);
  double c = (st - inv_r * sf) / n;
  if (!(inv_r > 0) || c < 0) {  // degenerate fit: one rate for everything
    inv_r = st / sf;
    c = 0;
  }
  dev.name = "emulated";
  dev.flops_fp32 = dev.flops_16 = 1.0 / inv_r;
  dev.memory_bandwidth = 1e15;  // folded into the fit
  dev.op_overhead = c;
  return dev;
}

// Installs and runs `steps` steps; returns the measurements (throws toru::error when nothing fits).
json run_plan(const args& a, const ts::device_spec& dev, double bw, ts::strategy s, std::int64_t batch,
              std::size_t budget, std::int64_t steps) {
  const auto g = build(a, batch);
  tt::model m(g, {.threads = a.threads, .seed = 1, .memory_capacity = budget, .defer_activations = true});
  auto ex = tt::plan_executor::install(m, base_options(dev, bw, s, budget));
  const auto d = make_data(m);
  std::vector<double> meas, pred, ratio;
  for (std::int64_t i = 0; i < steps; ++i) {
    m.forward(d.x, d.y, {.step = static_cast<std::uint64_t>(i)});
    m.backward();
    if (i == 0 && steps > 1) continue;  // warm-up: primitive creation, first-touch pages
    const double ms = ex->last_step().step_seconds, ps = ex->simulate_measured_ops().step_seconds;
    meas.push_back(ms);
    pred.push_back(ps);
    ratio.push_back(ms / ps);
  }
  const auto& r = ex->tuned().result;
  return {{"model", a.model},
          {"image", a.image},
          {"batch", batch},
          {"strategy", std::string(ts::to_string(ex->tuned().chosen))},
          {"budget_bytes", budget},
          {"planned_peak", ex->persistent_bytes() + ex->planned_peak()},
          {"measured_peak", ex->persistent_bytes() + ex->last_step().measured_peak},
          {"swapped_out_bytes", r.swapped_out_bytes},
          {"ops_recomputed", r.ops_recomputed},
          {"planner_step_s", r.step_seconds},
          {"measured_step_s", median(meas)},
          {"predicted_step_s_measured_ops", median(pred)},
          {"measured_over_predicted", median(ratio)},
          {"steps_timed", meas.size()}};
}

// A V100 + NVLink2 slowed down `scale` times: the planner's description and the emulated device's.
ts::device_spec scaled_v100(const args& a) {
  auto d = ts::device_preset("v100-nvlink2");
  d.name = fmt::format("v100-nvlink2/{}", a.scale);
  d.flops_fp32 /= a.scale;
  d.flops_16 /= a.scale;
  d.memory_bandwidth /= a.scale;
  d.d2h_bandwidth /= a.scale;
  d.h2d_bandwidth /= a.scale;
  d.op_overhead = a.overhead_us * 1e-6 * a.scale;
  return d;
}

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

// One strategy on the scaled V100: two warm-up steps (the second one's per-op times calibrate the
// planner), then `steps` timed rounds with the calibrated plan.
json run_emulated(const args& a, ts::strategy s, std::int64_t batch, std::size_t budget) {
  const auto dev = scaled_v100(a);
  const auto g = build(a, batch);
  tt::model m(g, {.threads = a.threads, .seed = 1, .memory_capacity = budget, .defer_activations = true});
  auto o = base_options(dev, dev.d2h_bandwidth, s, budget);
  o.emulated_compute = dev;
  o.calibrate_after = 2;
  auto ex = tt::plan_executor::install(m, o);
  const double uncalibrated = ex->tuned().result.step_seconds;
  const auto d = make_data(m);
  std::vector<double> meas, pred;
  for (std::int64_t i = 0; i < a.steps + 2; ++i) {
    m.forward(d.x, d.y, {.step = static_cast<std::uint64_t>(i)});
    m.backward();
    if (i < 2) continue;
    meas.push_back(ex->last_step().step_seconds);
    pred.push_back(ex->last_step().predicted_step_seconds);
  }
  const auto& r = ex->tuned().result;
  return {{"model", a.model},
          {"image", a.image},
          {"batch", batch},
          {"device", dev.name},
          {"requested", std::string(ts::to_string(s))},
          {"strategy", std::string(ts::to_string(ex->tuned().chosen))},
          {"budget_bytes", budget},
          {"planned_peak", ex->persistent_bytes() + ex->planned_peak()},
          {"measured_peak", ex->persistent_bytes() + ex->last_step().measured_peak},
          {"swapped_out_bytes", r.swapped_out_bytes},
          {"ops_recomputed", r.ops_recomputed},
          {"planner_step_s_device", uncalibrated},
          {"planner_step_s_calibrated", median(pred)},
          {"measured_step_s_median", median(meas)},
          {"measured_step_s_min", percentile(meas, 0)},
          {"measured_step_s_max", percentile(meas, 1)},
          {"measured_over_calibrated", median(meas) / median(pred)},
          {"calibrated", ex->calibrated()},
          {"rounds", meas.size()}};
}

std::size_t persistent_of(const args& a, std::int64_t batch) {
  const auto g = build(a, batch);
  tt::model m(g, {.threads = a.threads, .seed = 1, .defer_activations = true});
  return static_cast<std::size_t>(m.memory().in_use());
}

}  // namespace

int main(int argc, char** argv) {
  args a;
  CLI::App app{"swap_exec_bench: executed swap plans on the emulated device vs the planner"};
  app.add_option("mode", a.mode, "step, maxbatch or hybrid")
      ->check(CLI::IsMember({"step", "maxbatch", "hybrid", "predict"}));
  app.add_option("--model", a.model)->capture_default_str();
  app.add_option("--image", a.image)->capture_default_str();
  app.add_option("--batch", a.batch)->capture_default_str();
  app.add_option("--steps", a.steps)->capture_default_str();
  app.add_option("--fraction", a.fraction, "step: budget = persistent + fraction x no-plan peak")
      ->capture_default_str();
  app.add_option("--strategy", a.strategy)->capture_default_str();
  app.add_option("--headroom", a.headroom, "maxbatch/hybrid: budget = persistent state + this")->capture_default_str();
  app.add_option("--limit", a.limit, "maxbatch: largest batch tried")->capture_default_str();
  app.add_option("--flop-per-byte", a.flop_per_byte, "compute rate / link bandwidth")->capture_default_str();
  app.add_option("--link-bandwidth", a.link_bw, "bytes/s (0: calibrated rate / flop-per-byte)");
  app.add_option("--threads", a.threads);
  app.add_option("--flops", a.flops, "predict: FLOP/s")->capture_default_str();
  app.add_option("--overhead", a.overhead, "predict: seconds per op")->capture_default_str();
  app.add_option("--scale", a.scale, "hybrid, predict: the emulated V100's slow-down factor (predict: 0 = --flops)")
      ->capture_default_str();
  app.add_option("--overhead-us", a.overhead_us, "hybrid: V100 per-op overhead in us, before scaling")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  try {
    if (a.mode == "predict") {
      // The planner alone (no timing): swap-only and hybrid at this batch, for a given device.
      // --scale > 0: the scaled V100 of `hybrid`; 0: --flops, --overhead and the link ratio.
      ts::device_spec dev = ts::device_preset("v100-nvlink2");
      dev.flops_fp32 = dev.flops_16 = a.flops;
      dev.memory_bandwidth = 1e15;
      dev.op_overhead = a.overhead;
      double bw = a.link_bw > 0 ? a.link_bw : a.flops / a.flop_per_byte;
      if (a.scale > 0) {
        dev = scaled_v100(a);
        bw = dev.d2h_bandwidth;
      }
      const auto headroom = static_cast<std::size_t>(toru::topology::parse_bytes(a.headroom, "--headroom"));
      const auto budget = persistent_of(a, a.batch) + headroom;
      for (auto s : {ts::strategy::swap, ts::strategy::hybrid}) {
        tt::model m(build(a, a.batch),
                    {.threads = a.threads, .seed = 1, .memory_capacity = budget, .defer_activations = true});
        auto ex = tt::plan_executor::install(m, base_options(dev, bw, s, budget));
        const auto& r = ex->tuned().result;
        std::puts(json{{"model", a.model},
                       {"image", a.image},
                       {"batch", a.batch},
                       {"requested", std::string(ts::to_string(s))},
                       {"chosen", std::string(ts::to_string(ex->tuned().chosen))},
                       {"planner_step_s", r.step_seconds},
                       {"swapped_out_bytes", r.swapped_out_bytes},
                       {"ops_recomputed", r.ops_recomputed}}
                      .dump()
                      .c_str());
      }
      return 0;
    }
    if (a.mode == "hybrid") {
      // swap, hybrid, swap again: the two swap-only runs give the noise floor.
      const auto headroom = static_cast<std::size_t>(toru::topology::parse_bytes(a.headroom, "--headroom"));
      const auto budget = persistent_of(a, a.batch) + headroom;
      for (auto s : {ts::strategy::swap, ts::strategy::hybrid, ts::strategy::swap}) {
        std::puts(run_emulated(a, s, a.batch, budget).dump().c_str());
        std::fflush(stdout);
      }
      return 0;
    }
    const auto dev = calibrate(a);
    const double bw = a.link_bw > 0 ? a.link_bw : dev.flops_fp32 / a.flop_per_byte;
    std::puts(json{{"calibration", {{"flops", dev.flops_fp32}, {"op_overhead_s", dev.op_overhead}, {"link_bw", bw}}}}
                  .dump()
                  .c_str());
    std::fflush(stdout);
    if (a.mode == "step") {
      // Budget from the no-plan need at this batch.
      const auto g = build(a, a.batch);
      tt::model m(g, {.threads = a.threads, .seed = 1, .defer_activations = true});
      auto ex = tt::plan_executor::install(m, base_options(dev, bw, ts::strategy::none, std::size_t{1} << 40));
      const auto budget =
          static_cast<std::size_t>(ex->persistent_bytes() + a.fraction * static_cast<double>(ex->planned_peak()));
      std::puts(run_plan(a, dev, bw, ts::parse_strategy(a.strategy), a.batch, budget, a.steps).dump().c_str());
      return 0;
    }
    const auto headroom = static_cast<std::size_t>(toru::topology::parse_bytes(a.headroom, "--headroom"));
    // maxbatch: the planner's answer, then the executed one (doubling, then bisection; one step each).
    for (auto s : {ts::strategy::none, ts::strategy::swap}) {
      auto runs = [&](std::int64_t b) {
        const auto budget = persistent_of(a, b) + headroom;
        try {
          const auto j = run_plan(a, dev, bw, s, b, budget, 1);
          std::fprintf(stderr, "%s\n", j.dump().c_str());
          return true;
        } catch (const toru::error& e) {
          if (e.code() != toru::errc::out_of_memory) throw;
          // The planner refuses before executing; an arena overflow during the step would be a bug.
          if (e.message().find("too small") == std::string::npos)
            std::fprintf(stderr, "batch %lld: planned but overflowed the arena: %s\n", static_cast<long long>(b),
                         e.what());
          return false;
        }
      };
      std::int64_t lo = 0, hi = 1;
      while (hi <= a.limit && runs(hi)) {
        lo = hi;
        hi *= 2;
      }
      hi = std::min(hi, a.limit + 1);
      while (hi - lo > 1) {
        const auto mid = (lo + hi) / 2;
        (runs(mid) ? lo : hi) = mid;
      }
      std::puts(json{{"model", a.model},
                     {"image", a.image},
                     {"headroom", a.headroom},
                     {"strategy", std::string(ts::to_string(s))},
                     {"largest_batch_executed", lo}}
                    .dump()
                    .c_str());
      std::fflush(stdout);
    }
    return 0;
  } catch (const toru::error& e) {
    std::fprintf(stderr, "swap_exec_bench: %s\n", e.what());
    return 1;
  }
}
