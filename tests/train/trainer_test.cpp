// SPDX-License-Identifier: BSD-3-Clause
// toru::train::trainer through the library: a run stopped past an epoch boundary, saved, and
// resumed by a new trainer ends with the uninterrupted run's weights, bit for bit (every engine;
// a model with batch norm, whose buffers differ per rank); progress events; bad options and a
// mismatched checkpoint are the same toru::error on every rank, naming the option.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "mpi_test.hpp"
#include "toru/core/error.hpp"
#include "toru/train/trainer.hpp"

namespace {

using namespace toru::train;
namespace fs = std::filesystem;

constexpr std::int64_t total = 10;  // 4 steps per epoch: the run crosses two epoch boundaries
constexpr std::int64_t stop = 6;    // saved in epoch 1, two steps past its start

trainer_options options(const std::string& model, engine_kind engine) {
  return {.model = model,
          .data = data_source::synthetic,
          .synthetic_samples = 48,
          .image = 12,
          .batch = 12,  // divisible by 1, 2 and 3 ranks
          .steps = total,
          .optimizer = {.kind = optimizer_kind::adam, .lr = 1e-3, .weight_decay = 1e-4},
          .schedule = {.kind = schedule_kind::cosine, .warmup_steps = 2},
          .threads = 1,
          .seed = 7,
          .eval = false,
          .engine = engine,
          .chunk_layers = engine == engine_kind::allreduce ? 0 : 1};
}

// A folder name every rank agrees on (rank 0's pid), removed at the end of the test.
struct temp_dir {
  fs::path path;
  temp_dir() {
    long id = static_cast<long>(::getpid());
    MPI_Bcast(&id, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    path = fs::temp_directory_path() / ("toru-trainer-test-" + std::to_string(id));
  }
  ~temp_dir() {
    MPI_Barrier(MPI_COMM_WORLD);
    if (toru::test::rank() == 0) fs::remove_all(path);
  }
};

struct param {
  const char* model;
  engine_kind engine;
};

class TrainerResume : public ::testing::TestWithParam<param> {};

TEST_P(TrainerResume, AcrossAnEpochBoundaryEqualsTheUninterruptedRun) {
  const auto [model, engine] = GetParam();
  temp_dir dir;

  // The reference: one trainer, run() from step 0 to the end, with its events counted.
  auto o = options(model, engine);
  std::vector<step_result> steps;
  std::vector<epoch_result> epochs;
  o.events.step = [&](const step_result& r) { steps.push_back(r); };
  o.events.epoch = [&](const epoch_result& e) { epochs.push_back(e); };
  std::vector<float> straight, straight_buffers;  // this rank's batch-norm statistics
  auto buffers = [](trainer& t) {
    const auto b = t.model().buffer_data();
    return std::vector<float>(b.begin(), b.end());
  };
  {
    trainer t(o, MPI_COMM_WORLD);
    ASSERT_EQ(t.engine(), engine);
    ASSERT_EQ(t.steps_per_epoch(), 4);
    ASSERT_EQ(t.total_steps(), total);
    t.run();
    straight = t.weights();
    straight_buffers = buffers(t);
  }
  ASSERT_EQ(steps.size(), static_cast<std::size_t>(total));
  for (std::size_t k = 0; k < steps.size(); ++k) {
    EXPECT_EQ(steps[k].step, static_cast<std::int64_t>(k) + 1);
    EXPECT_EQ(steps[k].epoch, static_cast<std::int64_t>(k) / 4);
    EXPECT_TRUE(std::isfinite(steps[k].loss));
  }
  ASSERT_EQ(epochs.size(), 3u);  // 4 + 4 + 2 steps
  EXPECT_EQ(epochs[2].steps, 2);

  // Stopped at step 6 (epoch 1), saved; a new trainer resumes and continues step by step.
  fs::path saved;
  std::vector<float> at_stop;
  {
    trainer t(options(model, engine), MPI_COMM_WORLD);
    for (std::int64_t k = 0; k < stop; ++k) t.step();
    saved = t.save(dir.path);
    EXPECT_EQ(saved, dir.path / "checkpoint-6.toru");
    at_stop = t.weights();
  }
  EXPECT_NE(at_stop, straight);
  {
    trainer t(options(model, engine), MPI_COMM_WORLD);
    t.resume(saved);
    EXPECT_EQ(t.steps_done(), stop);
    EXPECT_EQ(t.weights(), at_stop);
    while (t.steps_done() < t.total_steps()) t.step();
    const auto resumed = t.weights();
    ASSERT_EQ(resumed.size(), straight.size());
    EXPECT_TRUE(resumed == straight) << "resumed weights differ from the uninterrupted run's";
    EXPECT_TRUE(buffers(t) == straight_buffers) << "resumed statistics differ from the uninterrupted run's";
  }
  // The same through the options (the folder's latest checkpoint) and run().
  {
    auto r = options(model, engine);
    r.checkpoint = dir.path;
    r.resume = true;
    trainer t(r, MPI_COMM_WORLD);
    EXPECT_EQ(t.resumed_from(), saved);
    t.run();
    EXPECT_TRUE(t.weights() == straight);
    EXPECT_TRUE(buffers(t) == straight_buffers);
    EXPECT_EQ(t.last_checkpoint(), dir.path / "checkpoint-10.toru");
  }
  // A checkpoint of another seed is refused on every rank, naming the option; nothing changes.
  {
    auto other = options(model, engine);
    other.seed = 8;
    trainer t(other, MPI_COMM_WORLD);
    const auto before = t.weights();
    try {
      t.resume(saved);
      ADD_FAILURE() << "resuming a checkpoint of seed 7 with seed 8 did not throw";
    } catch (const toru::error& e) {
      EXPECT_EQ(e.code(), toru::errc::mismatch);
      EXPECT_NE(std::string(e.what()).find("options.seed 8"), std::string::npos) << e.what();
    }
    EXPECT_EQ(t.steps_done(), 0);
    EXPECT_EQ(t.weights(), before);
  }
}

INSTANTIATE_TEST_SUITE_P(Engines, TrainerResume,
                         ::testing::Values(param{"mlp", engine_kind::allreduce}, param{"mlp", engine_kind::cgdp},
                                           param{"mlp", engine_kind::cgdp_sum},
                                           param{"fashion-cnn", engine_kind::allreduce}),
                         [](const auto& p) {
                           std::string n = std::string(p.param.model) + "_" + std::string(to_string(p.param.engine));
                           for (auto& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

// Expects `o` to be refused with the same error on every rank: code and a message naming `what`.
void expect_refused(const trainer_options& o, toru::errc code, const std::string& what) {
  try {
    trainer t(o, MPI_COMM_WORLD);
    ADD_FAILURE() << "no error; expected one naming " << what;
  } catch (const toru::error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
}

TEST(Trainer, BadOptionsAreTheSameErrorOnEveryRank) {
  const int rank = toru::test::rank(), nranks = toru::test::nranks();
  auto o = options("mlp", engine_kind::allreduce);

  auto bad = o;
  bad.batch = 2 * nranks + (nranks > 1 ? 1 : -2 * nranks);  // not divisible (one rank: 0)
  expect_refused(bad, toru::errc::invalid_argument, "options.batch: expected a global batch divisible by the");

  bad = o;
  bad.model.clear();
  expect_refused(bad, toru::errc::invalid_argument, "options.model/options.onnx: expected exactly one of them");

  bad = o;
  bad.model = "nosuch";
  expect_refused(bad, toru::errc::invalid_argument, "nosuch");

  // Only the last rank's option is bad: every rank throws that rank's error.
  bad = o;
  if (rank == nranks - 1) bad.optimizer.lr = 0;
  expect_refused(bad, toru::errc::invalid_argument, "lr: expected a finite learning rate > 0, got 0");

  bad = o;
  bad.resume = true;
  expect_refused(bad, toru::errc::invalid_argument, "options.resume: expected options.checkpoint DIR");

  bad = o;
  bad.engine = engine_kind::cgdp;
  bad.chunk_layers = 7;
  expect_refused(bad, toru::errc::invalid_argument, "chunk size in 1..2 layers");

  // A program's own spelling of its options.
  bad = o;
  bad.batch = 0;
  bad.argument_name = [](std::string_view f) { return "--" + std::string(f); };
  expect_refused(bad, toru::errc::invalid_argument, "--batch: expected");

  if (nranks > 1) {  // ranks disagreeing: a mismatch naming the option
    bad = o;
    if (rank == nranks - 1) bad.seed = 99;
    expect_refused(bad, toru::errc::mismatch, "seed");
  }
}

}  // namespace
