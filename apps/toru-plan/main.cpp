// SPDX-License-Identifier: BSD-3-Clause
// toru-plan: plan a training step under a device memory budget (swap, recompute, hybrid), print the
// predicted step time against the lower bound, find the largest batch or input that fits, and draw
// the step as an SVG timeline. Pure simulation: needs no GPU.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "common/cli.hpp"
#include "toru/core/error.hpp"
#include "toru/swap/models.hpp"
#include "toru/swap/onnx_import.hpp"
#include "toru/swap/timeline.hpp"
#include "toru/swap/tune.hpp"

namespace ts = toru::swap;
using json = nlohmann::json;

namespace {

constexpr double gib = 1024.0 * 1024.0 * 1024.0;

struct settings {
  std::string model, onnx, dtype = "fp32", device = "v100-nvlink2", strategy = "auto", input_shape, timeline,
                           profile = "pytorch";
  std::int64_t batch = 1;
  std::optional<std::int64_t> image;  // absent: the model's default size
  std::optional<double> memory_gib, host_gib, h2d, d2h, flops, fraction;
  bool json_out = false, max_batch = false, max_input = false, list = false, tflms = false;
};

// Parses "N", "HxW" or "DxHxW" into extents.
std::vector<std::int64_t> parse_extents(const std::string& s) {
  std::vector<std::int64_t> v;
  std::size_t start = 0;
  while (start <= s.size()) {
    const std::size_t x = s.find('x', start);
    const std::string part = s.substr(start, x == std::string::npos ? std::string::npos : x - start);
    std::size_t used = 0;
    long long n = 0;
    try {
      n = std::stoll(part, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != part.size() || part.empty() || n <= 0)
      throw toru::error(
          toru::errc::invalid_argument,
          fmt::format("--input-shape: expected positive extents like 512, 224x224 or 144x144x144, got '{}'", s));
    v.push_back(n);
    if (x == std::string::npos) break;
    start = x + 1;
  }
  return v;
}

ts::model_options model_opts(const settings& s) {
  ts::model_options o;
  o.batch = s.batch;
  o.type = ts::parse_dtype(s.dtype);
  const bool seq = ts::model_is_sequence(s.model), vol = ts::model_is_3d(s.model);
  if (vol) o.height = o.width = o.depth = 128;
  if (s.image) {
    const std::int64_t n = *s.image;
    if (n <= 0)
      throw toru::error(toru::errc::invalid_argument, fmt::format("--image: expected a positive size, got {}", n));
    if (seq)
      o.sequence = n;
    else
      o.height = o.width = n, o.depth = vol ? n : 0;
  }
  if (!s.input_shape.empty()) {
    const auto e = parse_extents(s.input_shape);
    if (seq) {
      if (e.size() != 1)
        throw toru::error(
            toru::errc::invalid_argument,
            fmt::format("--input-shape: expected a sequence length for {}, got '{}'", s.model, s.input_shape));
      o.sequence = e[0];
    } else if (vol) {
      if (e.size() != 3)
        throw toru::error(toru::errc::invalid_argument,
                          fmt::format("--input-shape: expected DxHxW for {}, got '{}'", s.model, s.input_shape));
      o.depth = e[0], o.height = e[1], o.width = e[2];
    } else {
      if (e.size() != 2)
        throw toru::error(toru::errc::invalid_argument,
                          fmt::format("--input-shape: expected HxW for {}, got '{}'", s.model, s.input_shape));
      o.height = e[0], o.width = e[1];
    }
  }
  return o;
}

// The ONNX file is read and parsed once; other batches are the same graph rebatched (--max-batch
// used to re-read and re-parse it for every candidate: minutes on a VGG-16-size file).
struct onnx_cache {
  std::optional<ts::graph> g;
};

ts::graph forward_graph(const settings& s, std::int64_t batch, onnx_cache& cache) {
  if (!s.onnx.empty()) {
    if (!cache.g) cache.g = ts::import_onnx(s.onnx, {.batch = s.batch, .values = false});
    if (batch == s.batch) return *cache.g;
    if (cache.g->batch == 0)
      throw toru::error(toru::errc::invalid_argument,
                        fmt::format("--onnx '{}': its batch is fixed at {} and baked into its shapes, so other "
                                    "batches (--max-batch) cannot be planned; re-export it with a dynamic batch axis",
                                    s.onnx, s.batch));
    return ts::rebatch(*cache.g, batch);
  }
  auto o = model_opts(s);
  o.batch = batch;
  return ts::build_model(s.model, o);
}

ts::device_spec device(const settings& s) {
  ts::device_spec d = ts::device_preset(s.device);
  auto positive = [](double v, const char* what) {
    if (!(v > 0))
      throw toru::error(toru::errc::invalid_argument, fmt::format("{}: expected a positive value, got {}", what, v));
  };
  if (s.memory_gib)
    positive(*s.memory_gib, "--memory"), d.memory_bytes = static_cast<std::int64_t>(*s.memory_gib * gib);
  if (s.host_gib)
    positive(*s.host_gib, "--host-memory"), d.host_memory_bytes = static_cast<std::int64_t>(*s.host_gib * gib);
  if (s.h2d) positive(*s.h2d, "--h2d"), d.h2d_bandwidth = *s.h2d * 1e9;
  if (s.d2h) positive(*s.d2h, "--d2h"), d.d2h_bandwidth = *s.d2h * 1e9;
  if (s.flops) positive(*s.flops, "--flops"), d.flops_fp32 = d.flops_16 = *s.flops * 1e12;
  if (s.memory_gib || s.h2d || s.d2h || s.flops) d.name += " (custom)";
  ts::validate(d);
  return d;
}

void write_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  std::error_code ec;
  {
    std::ofstream out(tmp, std::ios::binary);
    if (!out)
      throw toru::error(toru::errc::io, fmt::format("--timeline: expected a writable path, cannot write '{}'", path));
    out << text;
    if (!out) {
      std::filesystem::remove(tmp, ec);
      throw toru::error(toru::errc::io, fmt::format("--timeline: write to '{}' failed", path));
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);  // leave nothing behind
    throw toru::error(toru::errc::io, fmt::format("--timeline: cannot write '{}': {}", path, ec.message()));
  }
}

json plan_json(const ts::tuned_plan& t) {
  const auto& r = t.result;
  const auto& o = t.p.options;
  json j = {{"strategy", std::string(ts::to_string(t.chosen))},
            {"requested_strategy", std::string(ts::to_string(t.requested))},
            {"peak_bytes", r.peak_bytes},
            {"budget_bytes", r.budget_bytes},
            {"persistent_bytes", r.persistent_bytes},
            {"host_peak_bytes", r.host_peak_bytes},
            {"step_seconds", r.step_seconds},
            {"bound_seconds", r.bound_seconds},
            {"global_bound_seconds", r.global_bound_seconds},
            {"percent_of_bound", r.percent_of_bound()},
            {"forward_seconds", r.forward_seconds},
            {"backward_seconds", r.backward_seconds},
            {"recompute_seconds", r.recompute_seconds},
            {"stall_seconds", r.stall_seconds},
            {"swapped_bytes", r.swapped_out_bytes},
            {"swapped_out_bytes", r.swapped_out_bytes},
            {"swapped_in_bytes", r.swapped_in_bytes},
            {"swap_outs", r.swap_outs},
            {"swap_ins", r.swap_ins},
            {"recomputed_flops", r.recomputed_flops},
            {"ops_recomputed", r.ops_recomputed},
            {"recompute_units", t.recompute_units},
            {"planning_seconds", t.planning_seconds},
            {"evaluations", t.evaluations}};
  if (o.threshold != ts::swap_options::off)
    j["swap"] = {{"swapout_threshold", o.threshold},
                 {"swapin_ahead", o.ahead},
                 {"swapin_groupby", o.groupby},
                 {"sync_mode", static_cast<int>(o.sync)},
                 {"swapout_delay", o.swapout_delay},
                 {"order", o.order == ts::schedule_order::by_level ? "level" : "depth_first"},
                 {"prefetch_max_bytes", o.prefetch_max_bytes}};
  return j;
}

int run(const settings& s) {
  if (s.list) {
    fmt::print("models: {}\ndevices: {}\nonnx import: {}\n", fmt::join(ts::model_names(), ", "),
               fmt::join(ts::device_preset_names(), ", "), ts::onnx_available() ? "available" : "not built");
    return 0;
  }
  if (s.model.empty() == s.onnx.empty())
    throw toru::error(toru::errc::invalid_argument, "--model/--onnx: expected exactly one of them");
  if (s.image && *s.image <= 0)
    throw toru::error(toru::errc::invalid_argument, fmt::format("--image: expected a positive size, got {}", *s.image));
  if (s.batch <= 0)
    throw toru::error(toru::errc::invalid_argument, fmt::format("--batch: expected a positive value, got {}", s.batch));
  if (s.fraction && !(*s.fraction > 0 && *s.fraction <= 1))
    throw toru::error(toru::errc::invalid_argument,
                      fmt::format("--memory-fraction: expected (0, 1], got {}", *s.fraction));
  if (!s.timeline.empty()) {
    if (std::filesystem::is_directory(s.timeline))
      throw toru::error(toru::errc::io,
                        fmt::format("--timeline: expected a file name for the SVG, '{}' is a directory", s.timeline));
    const auto dir = std::filesystem::absolute(s.timeline).parent_path();
    if (!std::filesystem::is_directory(dir))
      throw toru::error(toru::errc::io,
                        fmt::format("--timeline: expected an existing directory, '{}' is not one", dir.string()));
  }
  const std::string name = s.onnx.empty() ? s.model : s.onnx;
  ts::tune_options to;
  to.device = device(s);
  const ts::memory_profile profile = ts::memory_profile_preset(s.profile);
  ts::training_options topt;
  ts::apply(profile, topt, to.sim);
  if (s.fraction) to.sim.memory_fraction = *s.fraction;
  to.sim.record_trace = !s.timeline.empty();
  to.tflms_search = s.tflms;
  const ts::strategy strat = ts::parse_strategy(s.strategy);
  onnx_cache cache;
  const auto fwd = forward_graph(s, s.batch, cache);  // validates the model before any search
  const auto saved = ts::saved_bytes(ts::make_training_graph(fwd, topt));
  json j = {{"model", name},
            {"device", to.device.name},
            {"batch", s.batch},
            {"dtype", s.dtype},
            {"profile", profile.name},
            {"memory_fraction", to.sim.memory_fraction},
            {"context_bytes", to.sim.context_bytes},
            {"workspace_bytes", to.sim.workspace_bytes},
            {"fragmentation", to.sim.fragmentation},
            {"parameters", fwd.parameter_count()},
            {"saved_bytes", saved},
            {"saved_bytes_per_sample", static_cast<double>(saved) / static_cast<double>(s.batch)},
            {"forward_flops", fwd.flops(ts::category::forward)}};

  if (s.max_batch) {
    const std::vector<std::pair<const char*, ts::strategy>> strats = {{"none", ts::strategy::none},
                                                                      {"swap", ts::strategy::swap},
                                                                      {"recompute", ts::strategy::recompute},
                                                                      {"hybrid", ts::strategy::hybrid}};
    if (!s.json_out)
      fmt::print("largest batch that fits, {} on {} ({} profile):\n", name, to.device.name, profile.name);
    const auto t0 = std::chrono::steady_clock::now();
    for (const auto& [k, st] : strats) {
      const auto n = ts::largest_fitting(
          [&](std::int64_t b) { return ts::make_training_graph(forward_graph(s, b, cache), topt); }, st, to);
      j[fmt::format("max_batch_{}", k)] = n;
      if (!s.json_out) fmt::print("  {:<10} {}\n", k, n);
    }
    if (j["max_batch_none"].get<std::int64_t>() > 0) {
      const double ratio = j["max_batch_swap"].get<double>() / j["max_batch_none"].get<double>();
      j["max_batch_ratio_swap"] = ratio;
      if (!s.json_out) fmt::print("  swap / none: {:.2f}x\n", ratio);
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    j["max_batch_seconds"] = secs;
    if (!s.json_out) fmt::print("  searched in {:.2f} s\n", secs);
  }
  if (s.max_input) {
    if (!s.onnx.empty())
      throw toru::error(toru::errc::invalid_argument,
                        "--max-input: expected --model (an ONNX model has fixed input extents)");
    const bool vol = ts::model_is_3d(s.model), seq = ts::model_is_sequence(s.model);
    const std::int64_t step = ts::input_multiple(s.model);
    if (!s.json_out)
      fmt::print("largest input that fits (multiples of {}), {} batch {} on {}:\n", step, name, s.batch,
                 to.device.name);
    const std::vector<std::pair<const char*, ts::strategy>> strats = {{"none", ts::strategy::none},
                                                                      {"swap", ts::strategy::swap},
                                                                      {"recompute", ts::strategy::recompute},
                                                                      {"hybrid", ts::strategy::hybrid}};
    std::int64_t base = 0;
    for (const auto& [k, st] : strats) {
      auto make = [&](std::int64_t n) {
        auto o = model_opts(s);
        if (seq)
          o.sequence = n * step;
        else
          o.height = o.width = n * step, o.depth = vol ? n * step : 0;
        return ts::make_training_graph(ts::build_model(s.model, o), topt);
      };
      std::int64_t n = 0;
      try {
        n = ts::largest_fitting(make, st, to, 1 << 12) * step;
      } catch (const toru::error&) {
        n = 0;  // smallest size too small for the model's downsampling
      }
      const double elems = std::pow(static_cast<double>(n), vol ? 3 : (seq ? 1 : 2));
      j[fmt::format("max_input_{}", k)] = n;
      j[fmt::format("max_input_elements_{}", k)] = elems;
      if (k == std::string("none")) base = n;
      if (!s.json_out)
        fmt::print("  {:<10} {} ({:.3g} {})\n", k, n, elems, vol ? "voxels" : (seq ? "tokens" : "pixels"));
    }
    if (base > 0) {
      const double ratio = j["max_input_elements_swap"].get<double>() / j["max_input_elements_none"].get<double>();
      j["max_input_ratio_swap"] = ratio;
      if (!s.json_out)
        fmt::print("  swap / none: {:.2f}x in {}\n", ratio, vol ? "voxels" : (seq ? "tokens" : "pixels"));
    }
  }
  if (!s.max_batch && !s.max_input) {
    const auto t = ts::tune(ts::make_training_graph(fwd, topt), strat, to);
    const auto& r = t.result;
    j.update(plan_json(t));
    if (!s.json_out) {
      fmt::print("{} batch {} {} on {} ({:.2f} GiB, {:.0f}% usable)\n", name, s.batch, s.dtype, to.device.name,
                 to.device.memory_bytes / gib, 100 * to.sim.memory_fraction);
      fmt::print("  memory profile  {} (context {:.2f} GiB, workspace {:.2f} GiB, fragmentation {:.0f}%)\n",
                 profile.name, to.sim.context_bytes / gib, to.sim.workspace_bytes / gib, 100 * to.sim.fragmentation);
      fmt::print("  saved tensors   {:.2f} MiB per sample\n", static_cast<double>(saved) / s.batch / (1 << 20));
      fmt::print("  strategy        {} (asked: {})\n", ts::to_string(t.chosen), ts::to_string(t.requested));
      fmt::print("  peak memory     {:.2f} GiB of {:.2f} GiB budget (persistent {:.2f} GiB)\n", r.peak_bytes / gib,
                 r.budget_bytes / gib, r.persistent_bytes / gib);
      fmt::print("  swapped         {:.2f} GiB out, {:.2f} GiB in ({} swap-outs, {} swap-ins), host peak {:.2f} GiB\n",
                 r.swapped_out_bytes / gib, r.swapped_in_bytes / gib, r.swap_outs, r.swap_ins, r.host_peak_bytes / gib);
      fmt::print("  recomputed      {} ops in {} units, {:.3g} GFLOP\n", r.ops_recomputed, t.recompute_units.size(),
                 r.recomputed_flops / 1e9);
      fmt::print(
          "  step time       {:.4g} s (compute fwd {:.4g} s, bwd {:.4g} s, recompute {:.4g} s, stalls {:.4g} s)\n",
          r.step_seconds, r.forward_seconds, r.backward_seconds, r.recompute_seconds, r.stall_seconds);
      fmt::print(
          "  lower bound     {:.4g} s = max(C_f, S_out/BW_d2h) + max(C_b + R, S_in/BW_h2d); {:.0f}% of bound "
          "(bound / step time)\n",
          r.bound_seconds, r.percent_of_bound());
      if (t.p.options.threshold != ts::swap_options::off)
        fmt::print("  swap parameters threshold {} ahead {} groupby {} sync {} delay {} order {}\n",
                   t.p.options.threshold, t.p.options.ahead, t.p.options.groupby, static_cast<int>(t.p.options.sync),
                   t.p.options.swapout_delay,
                   t.p.options.order == ts::schedule_order::by_level ? "level" : "depth-first");
      fmt::print("  planned in      {:.3f} s ({} simulations)\n", t.planning_seconds, t.evaluations);
    }
    if (!s.timeline.empty()) {
      write_atomically(s.timeline, ts::timeline_svg(t.p, r,
                                                    fmt::format("{} batch {} on {}: {} plan", name, s.batch,
                                                                to.device.name, ts::to_string(t.chosen))));
      if (!s.json_out) fmt::print("  timeline        {}\n", s.timeline);
      j["timeline"] = s.timeline;
    }
  }
  if (s.json_out) fmt::print("{}\n", j.dump(2));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"toru-plan: fit a training step into device memory by swapping and recomputation (simulated)",
               "toru-plan"};
  settings s;
  app.add_option("--model", s.model, "Built-in model: " + fmt::format("{}", fmt::join(ts::model_names(), ", ")));
  app.add_option("--onnx", s.onnx, "Forward model in ONNX format (a loss is added on its first output)");
  app.add_option("--batch", s.batch, "Batch size (default 1)");
  app.add_option("--image", s.image, "Square image size (cube for unet3d, sequence length for transformer)");
  app.add_option("--input-shape", s.input_shape, "Input extents: HxW, DxHxW (unet3d) or S (transformer)");
  app.add_option("--dtype", s.dtype, "fp32, fp16 or bf16 (default fp32)");
  app.add_option("--device", s.device, "Preset: " + fmt::format("{}", fmt::join(ts::device_preset_names(), ", ")));
  app.add_option("--memory", s.memory_gib, "Device memory in GiB (overrides the preset)");
  app.add_option("--host-memory", s.host_gib, "Host memory for swapped tensors in GiB (overrides the preset)");
  app.add_option("--h2d", s.h2d, "Host-to-device bandwidth in GB/s (overrides the preset)");
  app.add_option("--d2h", s.d2h, "Device-to-host bandwidth in GB/s (overrides the preset)");
  app.add_option("--flops", s.flops, "Achieved compute rate in TFLOP/s (overrides the preset)");
  app.add_option("--memory-fraction", s.fraction, "Usable fraction of device memory (default: the profile's)");
  app.add_option("--profile", s.profile,
                 "Memory profile: pytorch (default), toru (the trainer's emulated device) or tflms (the published "
                 "setting: 90% usable, nothing else)");
  app.add_option("--strategy", s.strategy, "none, swap, recompute, hybrid or auto (default auto)");
  app.add_flag("--tflms", s.tflms, "With --strategy swap: TFLMS v2's own parameter search (the published baseline)");
  app.add_flag("--max-batch", s.max_batch, "Largest batch that fits for each strategy");
  app.add_flag("--max-input", s.max_input, "Largest input size that fits for each strategy");
  app.add_option("--timeline", s.timeline, "Write an SVG of memory and the three queues over one step");
  app.add_flag("--json", s.json_out, "Print JSON instead of the summary");
  app.add_flag("--list", s.list, "List models and device presets");
  return toru::apps::run_cli(app, argc, argv, [&] { return run(s); });
}
