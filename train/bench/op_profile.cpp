// SPDX-License-Identifier: BSD-3-Clause
// train_op_profile: where a training step's time goes, per op type (forward and backward) and the
// optimizer's update, from the model's own per-op times (model::op_times) over several steps; run
// it at 1 and at 2 threads to see which kinds of op do not scale. Also the process's resident memory
// after each phase (graph, model, first step, end: VmRSS, and VmHWM the peak), to place a peak that
// a whole trainer's run reports. A diagnostic, not a test.
//
//   train_op_profile --model resnet50 --batch 8 --image 224 --threads 2 --steps 4 [--json]
//   train_op_profile --onnx vit.onnx --batch 8 --threads 1
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <random>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "toru/core/error.hpp"
#include "toru/swap/models.hpp"
#include "toru/swap/onnx_import.hpp"
#include "toru/train/model.hpp"
#include "toru/train/optimizer.hpp"

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const auto n = v.size();
  return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// VmRSS and VmHWM of this process in MiB (Linux).
std::pair<double, double> rss_mib() {
  std::ifstream f("/proc/self/status");
  double rss = 0, hwm = 0;
  for (std::string line; std::getline(f, line);) {
    if (line.rfind("VmRSS:", 0) == 0) rss = std::stod(line.substr(6)) / 1024;
    if (line.rfind("VmHWM:", 0) == 0) hwm = std::stod(line.substr(6)) / 1024;
  }
  return {rss, hwm};
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Per op type times of a training step (forward, backward) and of the optimizer's update"};
  std::string name = "resnet50", onnx;
  std::int64_t batch = 8, image = 224;
  int threads = 1, steps = 4, warmup = 2;
  bool json = false;
  app.add_option("--model", name, "built-in model (toru-plan --list-models)")->capture_default_str();
  app.add_option("--onnx", onnx, "an ONNX file instead of --model")->check(CLI::ExistingFile);
  app.add_option("--batch", batch, "batch size")->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--image", image, "image height and width (built-in models)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--threads", threads, "oneDNN/OpenMP threads")->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--steps", steps, "timed steps (the medians are over these)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--warmup", warmup, "untimed steps first")->check(CLI::NonNegativeNumber)->capture_default_str();
  app.add_flag("--json", json, "print JSON instead of the table");
  CLI11_PARSE(app, argc, argv);
  try {
    const auto g = onnx.empty() ? toru::swap::build_model(name, {.batch = batch, .height = image, .width = image})
                                : toru::swap::import_onnx(onnx, {.batch = batch});
    std::vector<std::pair<std::string, std::pair<double, double>>> memory{{"graph", rss_mib()}};
    toru::train::model m(g, {.threads = threads, .seed = 1, .in_place_relu = true, .share_activations = true});
    memory.push_back({"model", rss_mib()});
    std::int64_t per_sample = 1;
    const auto shape = m.input_shape();
    for (std::size_t i = 1; i < shape.size(); ++i) per_sample *= shape[i];
    std::mt19937 rng(7);
    std::normal_distribution<float> pixel;
    std::vector<float> input(static_cast<std::size_t>(m.batch() * per_sample));
    for (auto& x : input) x = pixel(rng);
    std::vector<std::int32_t> labels(static_cast<std::size_t>(m.batch()));
    for (auto& l : labels) l = static_cast<std::int32_t>(rng() % static_cast<unsigned>(m.classes()));
    // Momentum SGD, with the gradient's norm that every step reports (from the update's pass, as the trainer).
    toru::train::optimizer opt({.kind = toru::train::optimizer_kind::momentum, .lr = 1e-4}, m.parameter_count());
    opt.set_threads(threads);

    std::map<std::string, std::vector<double>> fwd, bwd;  // op type -> per-step sums
    std::vector<double> step_s, update_s, fwd_total, bwd_total;
    for (int s = 0; s < warmup + steps; ++s) {
      const auto t0 = std::chrono::steady_clock::now();
      m.forward(input, labels, {.step = static_cast<std::uint64_t>(s)});
      const double f = seconds_since(t0);
      m.backward();
      const double b = seconds_since(t0) - f;
      const auto t1 = std::chrono::steady_clock::now();
      double norm = 0;
      opt.step(m.parameter_data(), m.gradient_data(), 1e-4, &norm);
      m.parameters_changed();
      const double u = seconds_since(t1);
      if (s == 0) memory.push_back({"first step", rss_mib()});
      if (s < warmup) continue;
      step_s.push_back(seconds_since(t0));
      update_s.push_back(u);
      fwd_total.push_back(f);
      bwd_total.push_back(b);
      std::map<std::string, std::pair<double, double>> sums;
      for (const auto& t : m.op_times()) {
        auto& e = sums[g.ops[static_cast<std::size_t>(t.op)].type];
        e.first += t.forward_seconds;
        e.second += t.backward_seconds;
      }
      for (const auto& [type, fb] : sums) {
        fwd[type].push_back(fb.first);
        bwd[type].push_back(fb.second);
      }
    }
    struct row {
      std::string type;
      double f, b;
    };
    std::vector<row> rows;
    for (const auto& [type, v] : fwd) rows.push_back({type, median(v), median(bwd[type])});
    std::sort(rows.begin(), rows.end(), [](const row& a, const row& b) { return a.f + a.b > b.f + b.b; });
    const double step = median(step_s);
    memory.push_back({"end", rss_mib()});
    if (json) {
      nlohmann::json j{{"model", onnx.empty() ? name : onnx},
                       {"batch", batch},
                       {"threads", threads},
                       {"steps", steps},
                       {"step_s", step},
                       {"forward_s", median(fwd_total)},
                       {"backward_s", median(bwd_total)},
                       {"update_s", median(update_s)}};
      for (const auto& r : rows) j["ops"].push_back({{"type", r.type}, {"forward_s", r.f}, {"backward_s", r.b}});
      for (const auto& [when, mem] : memory)
        j["memory_mib"].push_back({{"after", when}, {"rss", mem.first}, {"peak", mem.second}});
      std::cout << j.dump(1) << "\n";
      return 0;
    }
    fmt::print(
        "{} batch {} threads {}: step {:.1f} ms (forward {:.1f}, backward {:.1f}, update {:.1f}), median of {}\n",
        onnx.empty() ? name : onnx, batch, threads, 1e3 * step, 1e3 * median(fwd_total), 1e3 * median(bwd_total),
        1e3 * median(update_s), steps);
    fmt::print("{:<16} {:>10} {:>10} {:>8}\n", "op type", "fwd ms", "bwd ms", "% step");
    for (const auto& r : rows)
      fmt::print("{:<16} {:>10.1f} {:>10.1f} {:>7.1f}%\n", r.type, 1e3 * r.f, 1e3 * r.b, 100 * (r.f + r.b) / step);
    fmt::print("resident MiB (peak so far):");
    for (const auto& [when, mem] : memory) fmt::print(" {} {:.0f} ({:.0f}),", when, mem.first, mem.second);
    fmt::print("\n");
    return 0;
  } catch (const toru::error& e) {
    std::fprintf(stderr, "train_op_profile: %s\n", e.what());
    return 1;
  }
}
