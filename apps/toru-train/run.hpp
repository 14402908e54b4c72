// SPDX-License-Identifier: BSD-3-Clause
// toru-train's training run: settings (from the command line) and the collective run.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace toru::apps::train {

struct settings {
  std::string model;                   // a swap::build_model name
  std::string onnx;                    // or an ONNX file
  std::string data = "fashion-mnist";  // or synthetic
  std::string data_dir = "/usr/share/datasets/fashion-mnist";
  bool normalize = true;
  std::int64_t synthetic_samples = 6400;
  std::int64_t image = 224;  // synthetic data: image height and width for the image models
  std::int64_t batch = 64;   // global
  std::int64_t epochs = 1;
  std::int64_t steps = 0;  // 0: epochs * steps per epoch
  double lr = 0.01;
  std::string optimizer = "sgd";
  double momentum = 0.9;
  bool nesterov = false;
  std::optional<double> weight_decay;  // unset: 0, adamw 0.01 (PyTorch's defaults)
  double label_smoothing = 0;
  std::optional<double> clip_grad_norm;  // unset: no clipping
  std::int64_t accumulate = 1;           // micro-batches per step
  std::string export_onnx;               // write the trained --onnx model here at the end
  std::string schedule = "none";
  std::int64_t step_size = 0;  // step schedule; 0: one epoch
  double gamma = 0.1;
  std::int64_t warmup = 0;
  int threads = 0;
  std::uint64_t seed = 1;
  std::string checkpoint;
  std::int64_t checkpoint_every = 0;
  bool resume = false;
  std::int64_t bucket_bytes = 25 << 20;
  std::int64_t first_bucket_bytes = 1 << 20;
  std::string reduction = "ordered";
  std::string device = "cpu";
  bool eval = true;
  bool json = false;
  bool quiet = false;
  std::int64_t warmup_steps_excluded = 3;  // summary timing excludes these first steps of the run
  // CGDP (docs/train.md): engine, chunking, cost model, runtime chunk search.
  std::string engine = "allreduce";  // allreduce, cgdp, cgdp-sum, auto
  int chunk_layers = 0;              // 0: the cost model's best (or the cache with --tune)
  std::vector<int> chunk_sizes;      // explicit chunk sizes, input side first
  bool explain = false;
  bool tune = false;
  std::string tune_cache;  // "": default_cache_file()
  std::int64_t tune_window = 5;
  double host_memory_mib = 0;  // 0: MemAvailable
  bool verbose = false;
  // Swap-plan executor on the host-emulated device (empty budget: the default schedule).
  std::string memory_budget;  // "6GiB", "512MiB", bytes
  std::string strategy = "auto";
  std::string timeline;                   // SVG of the planned and measured timelines of the last step
  std::string link_bandwidth = "12GB/s";  // each copy direction of the emulated device
  std::string link_latency = "10us";
  std::string device_flops = "20e9";  // FLOP/s the planner times plans with
};

/// Collective over comm. Returns the exit code; throws toru::error (the same on every rank) for
/// bad input or a failed run.
int run(const settings& s, MPI_Comm comm);

}  // namespace toru::apps::train
