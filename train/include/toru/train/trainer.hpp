// SPDX-License-Identifier: BSD-3-Clause
// The data-parallel trainer as a library: options in, a model trained over the ranks of a
// communicator out. What toru-train runs (apps/toru-train turns its command line into
// trainer_options and the trainer's results into text and JSON); a program of one's own can do the
// same, step by step or in one call.
//
//   toru::train::trainer t({.model = "mlp", .batch = 64, .epochs = 2,
//                           .optimizer = {.kind = toru::train::optimizer_kind::adam, .lr = 1e-3},
//                           .checkpoint = "ckpt", .checkpoint_every = 100},
//                          MPI_COMM_WORLD);                           // collective
//   while (t.steps_done() < t.total_steps()) {
//     const auto r = t.step();                                        // collective
//     if (r.step % t.steps_per_epoch() == 0) std::printf("test accuracy %.3f\n", t.evaluate().accuracy);
//   }
//   t.save("ckpt");                                                  // collective; rank 0 writes
//
// A trainer is built collectively and used collectively: every call below except the accessors
// must be made by every rank of the communicator, in the same order. Not thread-safe.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "toru/swap/tune.hpp"
#include "toru/train/cgdp.hpp"
#include "toru/train/cgdp_cost.hpp"
#include "toru/train/data.hpp"
#include "toru/train/data_parallel.hpp"
#include "toru/train/model.hpp"
#include "toru/train/optimizer.hpp"
#include "toru/train/plan_executor.hpp"

namespace toru::train {

enum class data_source { fashion_mnist, synthetic };
std::string_view to_string(data_source d) noexcept;  // "fashion-mnist", "synthetic"

/// Seconds of one step on this rank.
struct step_timing {
  double forward = 0;    // the forward pass (without CGDP's waits for weights)
  double backward = 0;   // the backward pass (CGDP: including posting gradients to the host)
  double comm_wait = 0;  // waiting for the reduction (allreduce) or for the host's weights (CGDP)
  double update = 0;     // the optimizer on the workers (allreduce engine)
  double total = 0;
};

/// One optimisation step, over all ranks.
struct step_result {
  std::int64_t step = 0;   // steps completed, this one included
  std::int64_t epoch = 0;  // the epoch this step belongs to (0-based)
  std::int64_t in_epoch = 0;
  double loss = 0;           // mean over the global batch
  double accuracy = 0;       // top-1 over the global batch
  std::int64_t correct = 0;  // top-1 hits in the global batch
  double lr = 0;             // the learning rate the step used
  // Global 2-norm of the averaged gradient before clipping (allreduce engine; NaN with CGDP, whose
  // host sums the gradient chunk by chunk).
  double grad_norm = 0;
  step_timing time;
};

/// Loss and top-1 accuracy on the test set.
struct evaluation {
  double loss = 0;
  double accuracy = 0;
  std::int64_t samples = 0;  // whole global batches of the test set
};

/// The steps of one epoch taken by run() (a resumed run's first epoch counts only its own steps).
struct epoch_result {
  std::int64_t epoch = 0;
  std::int64_t steps = 0;
  double train_loss = 0;      // mean of the steps' losses
  double train_accuracy = 0;  // over the epoch's samples
  std::optional<evaluation> test;
};

/// Progress callbacks, called on every rank (results are the same on every rank).
struct trainer_events {
  std::function<void(const step_result&)> step{};
  std::function<void(const epoch_result&)> epoch{};
  std::function<void(const std::filesystem::path&)> checkpoint{};  // a checkpoint was written
};

/// The step on the host-emulated device under a swap plan (docs/train.md, "Executing swap plans").
struct swap_plan_options {
  std::size_t budget = 0;  // device bytes; 0: no plan, the model as usual
  swap::strategy strategy = swap::strategy::automatic;
  double link_bandwidth = 12e9;  // bytes/s, each copy direction of the emulated device
  double link_latency = 10e-6;   // seconds per copy
  double device_flops = 20e9;    // FLOP/s the planner times plans with
};

struct trainer_options {
  // What to train: exactly one of a swap::build_model name and an ONNX file.
  std::string model{};
  std::filesystem::path onnx{};
  data_source data = data_source::fashion_mnist;
  std::filesystem::path data_dir = default_fashion_mnist_dir;
  bool normalize = true;                  // Fashion-MNIST: Normalize(0.2860, 0.3530) after ToTensor
  std::int64_t synthetic_samples = 6400;  // synthetic data: samples per epoch (at least one batch)
  std::int64_t image = 224;               // synthetic data: image height and width
  std::int64_t batch = 64;                // global batch per step, divisible by ranks x accumulate
  std::int64_t epochs = 1;
  std::int64_t steps = 0;  // total steps; 0: epochs x steps per epoch
  optimizer_options optimizer{};
  // Softmax cross-entropy against (1 - eps) one-hot + eps / classes (CrossEntropyLoss's
  // label_smoothing), in [0, 1). The CPU backend.
  double label_smoothing = 0;
  // Clips the averaged gradient (after the reduction, before the optimizer) to this global 2-norm
  // (torch.nn.utils.clip_grad_norm_, norm type 2); > 0; unset: no clipping. Engine allreduce.
  std::optional<double> clip_grad_norm{};
  // Gradient accumulation: each rank's share of `batch` runs as this many micro-batches of
  // batch / (ranks x accumulate) samples, whose gradients are summed and divided by their count
  // before the reduction, so a step's gradient is the mean over the global batch as with one
  // micro-batch (to float rounding). Batch-norm statistics are per micro-batch (running
  // statistics update once per micro-batch), as in PyTorch. >= 1; > 1 needs engine allreduce on
  // the CPU without a swap plan or explain.
  std::int64_t accumulate = 1;
  // step_size 0: one epoch; total_steps 0: the run's steps (cosine).
  schedule_options schedule{.step_size = 0};
  int threads = 0;         // oneDNN/OpenMP threads per rank; 0: the library's default
  std::uint64_t seed = 1;  // initialisation, shuffling and dropout
  // Checkpoints: run() writes one every `checkpoint_every` steps (0: only at the end) and at the
  // end into this folder; `resume` continues from its latest when the trainer is built.
  std::filesystem::path checkpoint{};
  std::int64_t checkpoint_every = 0;
  bool resume = false;
  bool eval = true;  // run() evaluates on the test set after each epoch
  // Engine: allreduce (bucketed, during backward), cgdp, cgdp-sum, or auto (the cost model, or
  // with `tune` measurement, picks).
  engine_kind engine = engine_kind::allreduce;
  std::int64_t bucket_bytes = 25 << 20;
  std::int64_t first_bucket_bytes = 1 << 20;
  train::reduction reduction = reduction::ordered;
  backend_kind device = backend_kind::cpu;  // cuda: only with engine cgdp (or a swap plan)
  // CGDP: layers per chunk (0: the cost model's best), or explicit sizes, input side first.
  int chunk_layers = 0;
  std::vector<int> chunk_sizes{};
  bool explain = false;          // calibrate the cost model and time the layers, for explain()
  bool tune = false;             // search the chunk size at run time (cached per model/batch/machine)
  std::string tune_cache{};      // the wisdom file of the cache; "": $TORU_CGDP_WISDOM, else toru's wisdom file
  std::int64_t tune_window = 5;  // steps per candidate
  double host_memory_mib = 0;    // host memory budget per node; 0: MemAvailable
  swap_plan_options swap_plan{};
  std::int64_t timing_skip = 3;  // first steps of a run left out of explain()'s timings
  trainer_events events{};
  // How error messages name an option (`field` as in this struct: "batch", "chunk_sizes", ...).
  // Empty: "options.<field>". A program with its own spelling (toru-train's "--batch") sets it.
  std::function<std::string(std::string_view field)> argument_name{};
};

/// The cost model's prediction beside the measurement of the steps taken (options.explain).
struct explain_report {
  machine_model machine;
  step_prediction allreduce, cgdp;           // predicted with the measured layer times
  std::vector<int> chunk_sizes;              // the chunking predicted (the engine's, or the uniform one)
  double measured_step = 0;                  // median step, slowest rank
  double op_timer_cover[2] = {1, 1};         // share of the forward and backward the op timers see
  std::vector<chunk_stats> measured_chunks;  // CGDP: per chunk, mean per step
  double prediction_error = 0;               // (predicted - measured) / measured, of the engine that ran
};

class trainer {
 public:
  /// Collective over comm. Agrees on the options (any rank's bad option is the same toru::error
  /// on every rank: invalid_argument naming the option, mismatch where ranks differ), opens the
  /// data, builds the model, chooses the engine (CGDP: probe steps, calibration, chunk search;
  /// the weights are restored afterwards) and, with options.resume, resumes from the latest
  /// checkpoint of options.checkpoint.
  trainer(const trainer_options& options, MPI_Comm comm);
  ~trainer();
  trainer(const trainer&) = delete;
  trainer& operator=(const trainer&) = delete;

  /// Collective: one optimisation step on the next global batch (forward, backward, reduction,
  /// update) and options.events.step. A non-finite loss throws on every rank, naming the step and
  /// the last checkpoint written.
  step_result step();
  /// Collective: steps to total_steps(), a checkpoint every options.checkpoint_every steps, an
  /// evaluation (options.eval) and options.events.epoch at each epoch's end, and a checkpoint at the
  /// end when options.checkpoint is set and a step was taken.
  void run();
  /// Collective: loss and accuracy on the test set, batch-norm statistics averaged over the ranks
  /// (rank order); the training state is unchanged. invalid_argument without a test set.
  evaluation evaluate();
  /// Collective: writes <dir>/checkpoint-<steps_done()>.toru (rank 0 writes; every rank returns the
  /// path, or every rank throws errc::io) and options.events.checkpoint.
  std::filesystem::path save(const std::filesystem::path& dir);
  /// Collective: continues from a checkpoint file, or a folder's latest. errc::mismatch on every
  /// rank (nothing changed) for a checkpoint of another model, rank count, batch, optimizer or seed.
  void resume(const std::filesystem::path& path);
  /// Collective (CGDP's master weights come back from the host helpers): the current weights.
  std::vector<float> weights();
  /// Collective: toru::digest (core/agreement.hpp) of the current weights' bytes, equal on every
  /// rank; reads a host model's buffer in place (no copy of the weights).
  std::uint64_t weights_digest();
  /// Collective: writes the trained model as ONNX (toru/train/onnx_export.hpp): options.onnx with
  /// its initializers replaced by the current weights and the batch-norm running statistics
  /// averaged over the ranks (rank order, as evaluate() uses them). Rank 0 writes; the same
  /// toru::error on every rank otherwise (invalid_argument without options.onnx, unsupported in a
  /// build without ONNX or for a CUDA model, io).
  void export_onnx(const std::filesystem::path& file);
  /// Collective: every rank's CGDP helper binding on rank 0, rank order (empty elsewhere and
  /// without CGDP).
  std::vector<std::string> helper_bindings();
  /// Collective: with options.explain, the cost model against the steps taken; otherwise nullopt.
  std::optional<explain_report> explain();

  const trainer_options& options() const noexcept;
  std::int64_t steps_done() const noexcept;
  std::int64_t total_steps() const noexcept;
  std::int64_t steps_per_epoch() const noexcept;
  int rank() const noexcept;
  int nranks() const noexcept;
  const std::string& model_name() const noexcept;  // the model's name or the ONNX file's
  train::model& model() noexcept;
  const dataset& train_data() const noexcept;
  const dataset* test_data() const noexcept;                      // null without options.eval
  engine_kind engine() const noexcept;                            // allreduce, cgdp or cgdp-sum (auto is resolved)
  std::vector<int> chunk_sizes() const;                           // CGDP's chunking; empty otherwise
  const std::string& engine_log() const noexcept;                 // how the chunking/engine was chosen ("" if given)
  std::size_t buckets() const noexcept;                           // the allreduce engine's gradient buckets
  const std::vector<step_timing>& timings() const noexcept;       // every step this trainer took
  const std::filesystem::path& last_checkpoint() const noexcept;  // written or resumed; "" if none
  const std::filesystem::path& resumed_from() const noexcept;     // "" unless resumed
  const plan_executor* swap_plan() const noexcept;                // null without options.swap_plan.budget

  struct impl;

 private:
  std::unique_ptr<impl> impl_;
};

}  // namespace toru::train
