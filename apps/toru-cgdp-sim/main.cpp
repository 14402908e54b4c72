// SPDX-License-Identifier: BSD-3-Clause
// toru-cgdp-sim: the CGDP cost model (toru/train/cgdp_cost.hpp) fed with the swap planner's FLOP
// counts at a device rate, for the networks and the 4-GPU node of the published results
// (docs/train.md, "CGDP: the published results on paper"). Every assumption is a flag.
//
//   toru-cgdp-sim                                   # the table: both links, four networks
//   toru-cgdp-sim --model vgg16 --link nvlink2 --json
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "common/cli.hpp"
#include "toru/core/error.hpp"
#include "toru/swap/device.hpp"
#include "toru/swap/models.hpp"
#include "toru/train/cgdp.hpp"
#include "toru/train/cgdp_cost.hpp"

namespace {

namespace tt = toru::train;
using json = nlohmann::ordered_json;

struct settings {
  std::vector<std::string> models{"alexnet", "googlenet", "vgg16", "resnet152"};
  std::vector<std::string> links{"pcie3", "nvlink2"};
  int gpus = 4;
  std::int64_t batch_alexnet = 128, batch_googlenet = 64, batch_vgg16 = 32, batch_resnet152 = 32;  // per GPU
  double efficiency = 0.5;           // achieved fraction of the preset's fp32 rate in framework kernels (2017)
  double host_memory_gbs = 100;      // host memory bandwidth (POWER8/9 or dual Xeon, STREAM-like)
  double gpu_gpu_gbs_pcie = 10;      // ring/bus bandwidth between the GPUs, PCIe3 peer to peer
  double gpu_gpu_gbs_nvlink = 20;    // GPUs paired by NVLink, pairs over the CPU bus
  double pcie_share = 2;             // GPUs sharing one PCIe3 x16 uplink to the host (switch)
  double latency_us = 30;            // per allreduce bucket / per chunk sync
  bool overlapped_baseline = false;  // baseline overlaps its reduction with backward (DDP-style)
  bool json_out = false;
};

std::int64_t batch_of(const settings& s, const std::string& m) {
  if (m == "alexnet") return s.batch_alexnet;
  if (m == "googlenet") return s.batch_googlenet;
  if (m == "vgg16") return s.batch_vgg16;
  return s.batch_resnet152;
}

// Per layer: forward and backward time of the ops from one parameterised op to the next at the
// device's rate (max of compute and memory time, as swap::simulate), and the layer's weight bytes.
std::vector<tt::layer_cost> layer_costs(const toru::swap::graph& g, const toru::swap::device_spec& d, double eff) {
  std::vector<tt::layer_cost> out;
  double pending_f = 0, pending_b = 0;
  for (const auto& o : g.ops) {
    if (o.cat != toru::swap::category::forward) continue;
    std::int64_t pbytes = 0;
    for (int t : o.inputs)
      if (g.tensors[static_cast<std::size_t>(t)].kind == toru::swap::tensor_kind::parameter)
        pbytes += g.tensors[static_cast<std::size_t>(t)].bytes;
    const double f = std::max(o.flops / (eff * d.flops_fp32), o.bytes_touched / d.memory_bandwidth);
    const double b = std::max(o.backward_flops / (eff * d.flops_fp32), 2 * o.bytes_touched / d.memory_bandwidth);
    if (pbytes > 0) {
      out.push_back({.forward = f, .backward = b, .bytes = pbytes});
    } else if (out.empty()) {
      pending_f += f;
      pending_b += b;
    } else {
      out.back().forward += f;
      out.back().backward += b;
    }
  }
  if (!out.empty()) {
    out.front().forward += pending_f;
    out.front().backward += pending_b;
  }
  return out;
}

tt::machine_model node_model(const settings& s, const std::string& link, int gpus, const toru::swap::device_spec& d) {
  tt::machine_model m;
  m.workers = gpus;
  m.copies_on_worker = false;  // DMA on the GPU's link, overlapped with backward
  const double host = s.host_memory_gbs * 1e9;
  if (link == "nvlink2") {
    m.d2h_bytes_per_s = m.h2d_bytes_per_s = d.d2h_bandwidth;  // each GPU has its own CPU link
    m.allreduce_bytes_per_s = s.gpu_gpu_gbs_nvlink * 1e9;
  } else {
    m.d2h_bytes_per_s = d.d2h_bandwidth / std::min<double>(s.pcie_share, gpus);
    m.h2d_bytes_per_s = d.h2d_bandwidth / std::min<double>(s.pcie_share, gpus);
    m.allreduce_bytes_per_s = s.gpu_gpu_gbs_pcie * 1e9;
  }
  m.host_sum_bytes_per_s = host;
  m.host_update_s_per_byte = 5.0 / host;  // SGD momentum: read w, v, g; write w, v
  m.worker_update_s_per_byte = 5.0 / d.memory_bandwidth;
  m.sync_overhead_s = s.latency_us * 1e-6;
  m.allreduce_latency_s = s.latency_us * 1e-6;
  return m;
}

int run(const settings& s) {
  json rows = json::array();
  if (!s.json_out)
    fmt::print("{:<10} {:<8} {:>6} {:>8} {:>10} {:>10} {:>9} {:>7} {:>7} {:>9} {:>9}\n", "model", "link", "batch",
               "params", "allreduce", "cgdp", "chunk", "tail", "speedup", "weak ar", "weak cgdp");
  for (const auto& link : s.links) {
    toru::expect(link == "pcie3" || link == "nvlink2", "--link", "pcie3 or nvlink2", link);
    const auto dev = toru::swap::device_preset(link == "nvlink2" ? "v100-nvlink2" : "v100-pcie3");
    for (const auto& name : s.models) {
      const auto b = batch_of(s, name);
      const auto g = toru::swap::build_model(name, {.batch = b});
      const auto costs = layer_costs(g, dev, s.efficiency);
      const auto m = node_model(s, link, s.gpus, dev);
      const std::int64_t bucket = s.overlapped_baseline ? 25 << 20 : std::int64_t{1} << 62;
      const std::int64_t first = s.overlapped_baseline ? 1 << 20 : std::int64_t{1} << 62;
      auto ar = tt::predict_allreduce(costs, m, bucket, first);
      if (!s.overlapped_baseline) {
        // 2017's typical data parallelism: the whole model reduced after backward.
        double bytes = 0, b_all = 0;
        for (const auto& c : costs) {
          bytes += static_cast<double>(c.bytes);
          b_all += c.backward;
        }
        const double comm = m.allreduce_latency_s + 2.0 * (s.gpus - 1) / s.gpus * bytes / m.allreduce_bytes_per_s;
        ar.step = ar.forward + b_all + comm + ar.update;
      }
      const auto best = tt::best_uniform_chunking(costs, m, true);
      const auto m1 = node_model(s, link, 1, dev);
      const auto ar1 = tt::predict_allreduce(costs, m1, bucket, first);
      const auto cg1 = tt::best_uniform_chunking(costs, m1, true);
      const double weak_ar = ar1.step / ar.step, weak_cg = cg1.prediction.step / best.prediction.step;
      std::int64_t pbytes = 0;
      for (const auto& c : costs) pbytes += c.bytes;
      json r{{"model", name},
             {"link", link},
             {"batch_per_gpu", b},
             {"layers", costs.size()},
             {"parameter_bytes", pbytes},
             {"allreduce_s", ar.step},
             {"cgdp_s", best.prediction.step},
             {"chunk_layers", best.chunk_layers},
             {"tail_s", best.prediction.tail},
             {"speedup", ar.step / best.prediction.step},
             {"weak_scaling_allreduce", weak_ar},
             {"weak_scaling_cgdp", weak_cg}};
      rows.push_back(r);
      if (!s.json_out)
        fmt::print("{:<10} {:<8} {:>6} {:>7.0f}M {:>8.1f}ms {:>8.1f}ms {:>9} {:>5.1f}ms {:>7.2f} {:>8.0f}% {:>8.0f}%\n",
                   name, link, b, static_cast<double>(pbytes) / 4e6, 1e3 * ar.step, 1e3 * best.prediction.step,
                   tt::describe_chunking(best.sizes).size() > 9 ? fmt::format("k={}", best.chunk_layers)
                                                                : tt::describe_chunking(best.sizes),
                   1e3 * best.prediction.tail, ar.step / best.prediction.step, 100 * weak_ar, 100 * weak_cg);
    }
  }
  if (s.json_out) fmt::print("{}\n", json{{"type", "cgdp_simulation"}, {"gpus", s.gpus}, {"rows", rows}}.dump());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  settings s;
  CLI::App app{"toru-cgdp-sim: the CGDP cost model on a 4-GPU V100 node (FLOP counts at a device rate)",
               "toru-cgdp-sim"};
  app.add_option("--model", s.models, "networks (swap::build_model names)")->capture_default_str();
  app.add_option("--link", s.links, "CPU-GPU link: pcie3 (V100 PCIe, x16 per GPU) and/or nvlink2 (POWER9-style)")
      ->capture_default_str();
  app.add_option("--gpus", s.gpus, "GPUs (workers) in the node")->check(CLI::Range(1, 64))->capture_default_str();
  app.add_option("--batch-alexnet", s.batch_alexnet, "per-GPU batch")->capture_default_str();
  app.add_option("--batch-googlenet", s.batch_googlenet, "per-GPU batch")->capture_default_str();
  app.add_option("--batch-vgg16", s.batch_vgg16, "per-GPU batch")->capture_default_str();
  app.add_option("--batch-resnet152", s.batch_resnet152, "per-GPU batch")->capture_default_str();
  app.add_option("--efficiency", s.efficiency, "achieved fraction of the preset fp32 rate")
      ->check(CLI::Range(0.01, 1.0))
      ->capture_default_str();
  app.add_option("--host-memory-gbs", s.host_memory_gbs, "host memory bandwidth, GB/s")->capture_default_str();
  app.add_option("--gpu-gpu-gbs-pcie", s.gpu_gpu_gbs_pcie, "allreduce bus bandwidth between GPUs on PCIe3, GB/s")
      ->capture_default_str();
  app.add_option("--gpu-gpu-gbs-nvlink", s.gpu_gpu_gbs_nvlink, "allreduce bus bandwidth on the NVLink node, GB/s")
      ->capture_default_str();
  app.add_option("--pcie-share", s.pcie_share, "GPUs sharing one PCIe3 x16 uplink")->capture_default_str();
  app.add_option("--latency-us", s.latency_us, "per bucket / per chunk overhead, us")->capture_default_str();
  app.add_flag("--overlapped-baseline", s.overlapped_baseline,
               "baseline overlaps bucketed reductions with backward (DDP-style) instead of reducing after it");
  app.add_flag("--json", s.json_out, "one JSON object on stdout");
  return toru::apps::run_cli(app, argc, argv, [&] { return run(s); });
}
