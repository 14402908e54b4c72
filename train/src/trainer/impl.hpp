// SPDX-License-Identifier: BSD-3-Clause
// The trainer's state, shared by its files: trainer.cpp (building, the step, run), select.cpp (the
// engine choice: probes, calibration, chunk search), evaluate.cpp, checkpoint.cpp, explain.cpp.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "calibrate.hpp"
#include "engine.hpp"
#include "toru/comm/communicator.hpp"
#include "toru/train/trainer.hpp"

namespace toru::train {

struct trainer::impl {
  impl(const trainer_options& options, MPI_Comm world);

  trainer_options o;
  comm::communicator comm;
  MPI_Comm mpi = MPI_COMM_NULL;
  int rank = 0, nranks = 1;
  std::string model_name;

  std::optional<train::model> m;
  std::shared_ptr<plan_executor> executor;
  std::unique_ptr<dataset> train_set, test_set;
  std::optional<sample_order> order;
  schedule_options so;
  std::int64_t total_steps = 0, local = 0;
  std::int64_t micro = 0;          // samples per micro-batch on this rank (local / o.accumulate)
  std::vector<float> accumulated;  // gradient accumulation: the sum over a step's earlier micro-batches
  std::vector<float> images;
  std::vector<std::int32_t> labels;

  std::optional<data_parallel> dp;  // the allreduce engine's, and evaluation's buffer average
  std::unique_ptr<detail::engine> eng;
  std::vector<model_layer> layers;
  int chunk_layers = 0;
  std::string chunk_log;
  std::optional<machine_model> machine;
  detail::layer_timer timer;
  std::vector<chunk_stats> chunk_sums;  // explain: per chunk, summed over the timed steps

  std::int64_t step = 0;
  std::filesystem::path last_checkpoint, resumed_from;
  std::vector<step_timing> times;

  /// How errors name option `field`.
  std::string name(std::string_view field) const;
  bool on_device() const { return m->space() == memory_space::device; }
  double lr(std::int64_t s) const { return learning_rate(o.optimizer.lr, so, s); }

  void build();  // trainer.cpp: agreement, data, model (collective)
  /// Forward of micro-batch j of the local batch in images/labels (the whole of it when
  /// o.accumulate is 1); first_sample is the local batch's first global sample index.
  forward_result forward_micro(std::int64_t j, bool training, std::int64_t step, std::int64_t first_sample);
  void choose_engine();  // select.cpp (collective)
  double probe(std::int64_t k);
  std::int64_t timing_skip() const;  // steps at the start of times left out of medians
};

namespace detail {
double median(std::vector<double> v);
/// Runs `f` on this rank; if it throws on any rank, every rank throws the lowest failing rank's error.
void agree(MPI_Comm comm, std::string_view what, const std::function<void()>& f);
}  // namespace detail

}  // namespace toru::train
