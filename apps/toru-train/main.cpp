// SPDX-License-Identifier: BSD-3-Clause
// toru-train: data-parallel training on toru's communicator. See docs/train.md.
//
//   mpiexec -n 2 toru-train --model fashion-cnn --epochs 5 --batch 64 --optimizer adam --lr 1e-3
//   mpiexec -n 4 toru-train --model resnet18 --data synthetic --batch 32 --steps 20 --json
//   mpiexec -n 2 toru-train --model mlp --checkpoint ckpt --checkpoint-every 100 --resume
#include <mpi.h>

#include <limits>

#include <CLI/CLI.hpp>

#include "common/cli.hpp"
#include "run.hpp"
#include "toru/core/error.hpp"

int main(int argc, char** argv) {
  toru::apps::train::settings s;
  CLI::App app{"toru-train: data-parallel training (bucketed allreduce over toru's communicator)", "toru-train"};
  auto* model = app.add_option("--model", s.model, "model name (mlp, fashion-cnn, lenet5, resnet18, resnet50, ...)");
  app.add_option("--onnx", s.onnx, "train the forward model of this ONNX file instead")->excludes(model);
  app.add_option("--data", s.data, "training data")
      ->check(CLI::IsMember({"fashion-mnist", "synthetic"}))
      ->capture_default_str();
  app.add_option("--data-dir", s.data_dir, "directory of the Fashion-MNIST *-ubyte.gz files")->capture_default_str();
  app.add_flag("!--no-normalize", s.normalize, "Fashion-MNIST: ToTensor only, no Normalize(0.2860, 0.3530)");
  app.add_option("--synthetic-samples", s.synthetic_samples, "synthetic data: samples per epoch")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--image", s.image, "synthetic data: image height and width")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--batch", s.batch, "global batch (split evenly over the ranks)")->capture_default_str();
  app.add_option("--epochs", s.epochs, "epochs")->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--steps", s.steps, "total steps (overrides --epochs; 0: epochs x steps per epoch)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--lr", s.lr, "learning rate (> 0)")->capture_default_str();
  app.add_option("--optimizer", s.optimizer, "sgd, momentum, adam or adamw (torch.optim.AdamW: decoupled weight decay)")
      ->capture_default_str();
  app.add_option("--momentum", s.momentum, "momentum coefficient (--optimizer momentum)")->capture_default_str();
  app.add_flag("--nesterov", s.nesterov, "Nesterov momentum");
  app.add_option("--weight-decay", s.weight_decay,
                 "weight decay (PyTorch's weight_decay): an L2 term in the gradient for sgd, momentum and adam, "
                 "decoupled (parameters x (1 - lr x decay)) for adamw; default 0, adamw 0.01");
  app.add_option("--label-smoothing", s.label_smoothing,
                 "softmax cross-entropy against (1 - eps) one-hot + eps / classes (CrossEntropyLoss's "
                 "label_smoothing), eps in [0, 1)")
      ->capture_default_str();
  app.add_option("--clip-grad-norm", s.clip_grad_norm,
                 "clip the averaged gradient to this global 2-norm (clip_grad_norm_, max_norm > 0; --engine "
                 "allreduce); the norm before clipping is in each step's JSON as grad_norm");
  app.add_option("--accumulate", s.accumulate,
                 "gradient accumulation: micro-batches per step; each rank runs its batch / ranks samples as this "
                 "many micro-batches and the step's gradient is their mean (--batch stays the step's global batch; "
                 "--engine allreduce)")
      ->capture_default_str();
  app.add_option("--schedule", s.schedule, "learning-rate schedule: none, step or cosine")->capture_default_str();
  app.add_option("--step-size", s.step_size, "step schedule: steps between decays (0: one epoch)");
  app.add_option("--gamma", s.gamma, "step schedule: decay factor")->capture_default_str();
  app.add_option("--warmup", s.warmup, "cosine schedule: linear warm-up steps")->capture_default_str();
  app.add_option("--threads", s.threads, "oneDNN/OpenMP threads per rank (0: the library's default)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--seed", s.seed, "seed of initialisation, shuffling and dropout")->capture_default_str();
  app.add_option("--export-onnx", s.export_onnx,
                 "after training, write the --onnx model with its initializers replaced by the trained weights and "
                 "the rank-averaged batch-norm running statistics to this ONNX file");
  app.add_option("--checkpoint", s.checkpoint, "checkpoint directory (a checkpoint is written at the end)");
  app.add_option("--checkpoint-every", s.checkpoint_every, "steps between checkpoints (0: only at the end)")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--resume", s.resume, "resume from the latest checkpoint in --checkpoint DIR");
  app.add_option("--bucket-bytes", s.bucket_bytes, "gradient bucket size in bytes")
      ->check(CLI::Range(std::int64_t{4}, std::numeric_limits<std::int64_t>::max()))
      ->capture_default_str();
  app.add_option("--first-bucket-bytes", s.first_bucket_bytes, "size of the first (output-side) bucket")
      ->check(CLI::Range(std::int64_t{4}, std::numeric_limits<std::int64_t>::max()))
      ->capture_default_str();
  app.add_option("--reduction", s.reduction,
                 "ordered (fixed rank order, bucket-size invariant) or mpi (MPI_Iallreduce)")
      ->check(CLI::IsMember({"ordered", "mpi"}))
      ->capture_default_str();
  app.add_option("--engine", s.engine,
                 "allreduce (bucketed allreduce), cgdp (host sums and updates, chunk by chunk), cgdp-sum (host "
                 "sums, workers update) or auto (the cost model picks; with --tune, measurement)")
      ->check(CLI::IsMember({"allreduce", "cgdp", "cgdp-sum", "auto"}))
      ->capture_default_str();
  app.add_option(
         "--device", s.device,
         "where the workers compute: cpu, or cuda (one GPU per rank; with --engine cgdp, gradients go to "
         "pinned host buffers and the host sums and updates; with --memory-budget, the swap plan runs on the GPU)")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  app.add_option("--chunk-layers", s.chunk_layers, "CGDP: layers per chunk (0: the cost model's best)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--chunks", s.chunk_sizes, "CGDP: explicit chunk sizes in layers, input side first (e.g. 3,3,2)")
      ->delimiter(',');
  app.add_flag("--explain", s.explain, "print the cost model's prediction next to the measurement, per chunk");
  app.add_flag("--tune", s.tune, "CGDP: search the chunk size at run time (cached per model/batch/machine)");
  app.add_option("--tune-cache", s.tune_cache,
                 "chunk-search cache: a wisdom file, section \"cgdp\" (default $TORU_CGDP_WISDOM, else "
                 "$TORU_WISDOM, else ~/.cache/toru/wisdom.json)");
  app.add_option("--tune-window", s.tune_window, "chunk search: steps per candidate (the first is warm-up)")
      ->check(CLI::Range(std::int64_t{2}, std::int64_t{1000}))
      ->capture_default_str();
  app.add_option("--host-memory", s.host_memory_mib, "CGDP: host memory budget per node in MiB (0: MemAvailable)")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--verbose", s.verbose, "CGDP: print the chunking and where helper threads were bound");
  app.add_flag("!--no-eval", s.eval, "skip the test-set evaluation after each epoch");
  app.add_option("--timing-skip", s.warmup_steps_excluded, "first steps left out of the timing summary")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--memory-budget", s.memory_budget,
                 "device memory budget (e.g. 2GiB): plan swapping/recomputation with swap/ and execute the plan on "
                 "the host-emulated device");
  app.add_option("--strategy", s.strategy, "with --memory-budget: none, swap, recompute, hybrid or auto")
      ->check(CLI::IsMember({"none", "swap", "recompute", "hybrid", "auto"}))
      ->capture_default_str();
  app.add_option("--timeline", s.timeline, "with --memory-budget: SVG of the planned and the measured last step");
  app.add_option("--link-bandwidth", s.link_bandwidth, "with --memory-budget: emulated copy bandwidth per direction")
      ->capture_default_str();
  app.add_option("--link-latency", s.link_latency, "with --memory-budget: emulated latency per copy")
      ->capture_default_str();
  app.add_option("--device-flops", s.device_flops, "with --memory-budget: FLOP/s the planner assumes")
      ->capture_default_str();
  app.add_flag("--json", s.json, "one JSON object per line on stdout: each step, each epoch, the summary");
  app.add_flag("--quiet", s.quiet, "no progress output");

  int provided = 0;
  // CGDP's helper threads reduce across nodes (their own communicators): MPI_THREAD_MULTIPLE.
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  toru::set_error_rank(rank);
  const int rc = toru::apps::run_cli(
      app, argc, argv, [&] { return toru::apps::train::run(s, MPI_COMM_WORLD); }, size > 1 ? rank : -1);
  MPI_Finalize();
  return rc;
}
