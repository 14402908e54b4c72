// SPDX-License-Identifier: BSD-3-Clause
// toru::train::trainer through the library: a run stopped past an epoch boundary, saved, and
// resumed by a new trainer ends with the uninterrupted run's weights, bit for bit (every engine;
// a model with batch norm, whose buffers differ per rank); progress events; bad options and a
// mismatched checkpoint are the same toru::error on every rank, naming the option.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "mpi_test.hpp"
#include "toru/core/agreement.hpp"
#include "toru/core/error.hpp"
#include "toru/train/trainer.hpp"

namespace {

using namespace toru::train;
namespace fs = std::filesystem;

constexpr std::int64_t total = 10;  // 4 steps per epoch: the run crosses two epoch boundaries
constexpr std::int64_t stop = 6;    // saved in epoch 1, two steps past its start

trainer_options options(const std::string& model, engine_kind engine, optimizer_kind opt = optimizer_kind::adam) {
  return {.model = model,
          .data = data_source::synthetic,
          .synthetic_samples = 48,
          .image = 12,
          .batch = 12,  // divisible by 1, 2 and 3 ranks
          .steps = total,
          .optimizer = {.kind = opt, .lr = 1e-3, .weight_decay = opt == optimizer_kind::adamw ? 0.05 : 1e-4},
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
  optimizer_kind opt = optimizer_kind::adam;
};

class TrainerResume : public ::testing::TestWithParam<param> {};

TEST_P(TrainerResume, AcrossAnEpochBoundaryEqualsTheUninterruptedRun) {
  const auto [model, engine, opt] = GetParam();
  temp_dir dir;

  // The reference: one trainer, run() from step 0 to the end, with its events counted.
  auto o = options(model, engine, opt);
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
    trainer t(options(model, engine, opt), MPI_COMM_WORLD);
    for (std::int64_t k = 0; k < stop; ++k) t.step();
    saved = t.save(dir.path);
    EXPECT_EQ(saved, dir.path / "checkpoint-6.toru");
    at_stop = t.weights();
  }
  EXPECT_NE(at_stop, straight);
  {
    trainer t(options(model, engine, opt), MPI_COMM_WORLD);
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
    auto r = options(model, engine, opt);
    r.checkpoint = dir.path;
    r.resume = true;
    trainer t(r, MPI_COMM_WORLD);
    EXPECT_EQ(t.resumed_from(), saved);
    t.run();
    EXPECT_TRUE(t.weights() == straight);
    // The digest reads the weights in place (CGDP: after the helpers' master copy came back).
    EXPECT_EQ(t.weights_digest(), static_cast<std::uint64_t>(toru::digest(std::string_view(
                                      reinterpret_cast<const char*>(straight.data()), straight.size() * 4))));
    EXPECT_TRUE(buffers(t) == straight_buffers);
    EXPECT_EQ(t.last_checkpoint(), dir.path / "checkpoint-10.toru");
  }
  // A checkpoint of another seed is refused on every rank, naming the option; nothing changes.
  {
    auto other = options(model, engine, opt);
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
                                           param{"fashion-cnn", engine_kind::allreduce},
                                           // AdamW's moments travel in the checkpoint (and CGDP's helpers hold them).
                                           param{"mlp", engine_kind::allreduce, optimizer_kind::adamw},
                                           param{"mlp", engine_kind::cgdp, optimizer_kind::adamw}),
                         [](const auto& p) {
                           std::string n = std::string(p.param.model) + "_" + std::string(to_string(p.param.engine));
                           if (p.param.opt != optimizer_kind::adam) n += "_" + std::string(to_string(p.param.opt));
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
    bad = o;
    if (rank == nranks - 1) bad.accumulate = 2;
    expect_refused(bad, toru::errc::mismatch, "accumulate");
    bad = o;
    if (rank == 0) bad.clip_grad_norm = 1.0;
    expect_refused(bad, toru::errc::mismatch, "clip_grad_norm");
  }

  // Gradient clipping, accumulation and label smoothing: bad values name the option.
  for (double max_norm : {0.0, -1.0, std::nan("")}) {
    bad = o;
    bad.clip_grad_norm = max_norm;
    expect_refused(bad, toru::errc::invalid_argument, "options.clip_grad_norm: expected a max_norm > 0");
  }
  bad = o;
  bad.clip_grad_norm = 1.0;
  bad.engine = engine_kind::cgdp;
  bad.chunk_layers = 1;
  expect_refused(bad, toru::errc::invalid_argument, "options.clip_grad_norm: expected options.engine allreduce");
  bad = o;
  bad.accumulate = 0;
  expect_refused(bad, toru::errc::invalid_argument, "options.accumulate: expected micro-batches per step >= 1, got 0");
  bad = o;
  bad.accumulate = 5;  // 12 is not divisible by ranks x 5
  expect_refused(bad, toru::errc::invalid_argument, "options.batch: expected a global batch divisible by the");
  bad = o;
  bad.accumulate = 2;
  bad.engine = engine_kind::cgdp_sum;
  bad.chunk_layers = 1;
  expect_refused(bad, toru::errc::invalid_argument, "options.accumulate: expected options.engine allreduce");
  for (double eps : {-0.1, 1.0, std::nan("")}) {
    bad = o;
    bad.label_smoothing = eps;
    expect_refused(bad, toru::errc::invalid_argument, "options.label_smoothing: expected a value in [0, 1)");
  }
}

// Norm-wise relative difference ||a - b|| / ||b||.
double rel_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double d = 0, n = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    d += (static_cast<double>(a[i]) - b[i]) * (static_cast<double>(a[i]) - b[i]);
    n += static_cast<double>(b[i]) * b[i];
  }
  return std::sqrt(d / n);
}

// Gradient accumulation: k micro-batches of b samples per rank give the weights of one batch of k b
// (the model has no batch norm, whose statistics would differ per micro-batch), to float rounding:
// the loss of each micro-batch is its own mean, the sum of their gradients divided by k is the
// large batch's mean gradient. Through the data-parallel reduction at every rank count.
TEST(Trainer, AccumulatedMicroBatchesEqualTheLargeBatch) {
  const int nranks = toru::test::nranks();
  auto o = options("mlp", engine_kind::allreduce, optimizer_kind::momentum);
  o.optimizer.lr = 0.05;
  o.steps = 5;
  o.schedule = {};
  o.eval = true;  // evaluation runs the test batches as micro-batches too
  std::vector<step_result> big_steps;
  o.events.step = [&](const step_result& r) { big_steps.push_back(r); };
  trainer big(o, MPI_COMM_WORLD);
  const auto w0 = big.weights();
  big.run();
  const auto want = big.weights();
  const auto want_eval = big.evaluate();
  ASSERT_GT(rel_diff(w0, want), 1e-3) << "the reference run must move the weights";
  for (std::int64_t k : {2, 3, 6}) {
    if ((o.batch / nranks) % k != 0) continue;
    SCOPED_TRACE("accumulate " + std::to_string(k));
    auto a = o;
    a.accumulate = k;
    std::vector<step_result> steps;
    a.events.step = [&](const step_result& r) { steps.push_back(r); };
    trainer t(a, MPI_COMM_WORLD);
    EXPECT_EQ(t.model().batch(), o.batch / nranks / k);
    EXPECT_EQ(t.weights(), w0);
    t.run();
    const auto got = t.weights();
    EXPECT_LT(rel_diff(got, want), 1e-5);
    ASSERT_EQ(steps.size(), big_steps.size());
    for (std::size_t s = 0; s < steps.size(); ++s) {
      EXPECT_NEAR(steps[s].loss, big_steps[s].loss, 1e-5 * big_steps[s].loss) << "step " << s;
      EXPECT_EQ(steps[s].correct, big_steps[s].correct) << "step " << s;
      EXPECT_NEAR(steps[s].grad_norm, big_steps[s].grad_norm, 1e-5 * big_steps[s].grad_norm) << "step " << s;
    }
    const auto e = t.evaluate();
    EXPECT_EQ(e.samples, want_eval.samples);
    EXPECT_NEAR(e.loss, want_eval.loss, 1e-5 * want_eval.loss);
    EXPECT_NEAR(e.accuracy, want_eval.accuracy, 1e-9);
    // Without the division by k the step would be k times larger: far outside the tolerance.
  }
}

// Gradient clipping (clip_grad_norm_ semantics) on the averaged gradient: one plain SGD step with
// and without clipping; the clipped step is the unclipped one scaled by max_norm / (norm + 1e-6),
// where norm (reported in the step event) is the 2-norm of the gradient the unclipped step applied.
TEST(Trainer, ClipsTheAveragedGradientToMaxNorm) {
  auto o = options("mlp", engine_kind::allreduce, optimizer_kind::sgd);
  o.optimizer = {.kind = optimizer_kind::sgd, .lr = 1.0};
  o.schedule = {};
  o.steps = 1;
  auto run = [&](std::optional<double> clip, step_result& r) {
    auto c = o;
    c.clip_grad_norm = clip;
    c.events.step = [&](const step_result& s) { r = s; };
    trainer t(c, MPI_COMM_WORLD);
    const auto w0 = t.weights();
    t.run();
    const auto w1 = t.weights();
    std::vector<float> delta(w0.size());
    for (std::size_t i = 0; i < w0.size(); ++i) delta[i] = w0[i] - w1[i];
    return delta;
  };
  step_result plain, clipped, loose;
  const auto g = run(std::nullopt, plain);
  double norm = 0;
  for (float x : g) norm += static_cast<double>(x) * x;
  norm = std::sqrt(norm);
  ASSERT_GT(norm, 0);
  EXPECT_NEAR(plain.grad_norm, norm, 1e-4 * norm) << "the reported norm is the applied gradient's";
  const double max_norm = plain.grad_norm / 3;
  const auto gc = run(max_norm, clipped);
  EXPECT_DOUBLE_EQ(clipped.grad_norm, plain.grad_norm) << "the reported norm is the one before clipping";
  std::vector<float> want(g.size());
  for (std::size_t i = 0; i < g.size(); ++i) want[i] = static_cast<float>(g[i] * (max_norm / (norm + 1e-6)));
  EXPECT_LT(rel_diff(gc, want), 1e-4);
  // Every rank clipped the same averaged gradient by the same factor: the replicas are equal.
  auto root = gc;
  MPI_Bcast(root.data(), static_cast<int>(root.size()), MPI_FLOAT, 0, MPI_COMM_WORLD);
  EXPECT_TRUE(root == gc) << "rank " << toru::test::rank() << "'s clipped update differs from rank 0's";
  // A max_norm above the norm changes nothing.
  EXPECT_EQ(run(2 * norm, loose), g);
}

}  // namespace
