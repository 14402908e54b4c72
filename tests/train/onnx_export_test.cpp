// SPDX-License-Identifier: BSD-3-Clause
// Trained weights back to ONNX (trainer::export_onnx): a CNN with batch norm exported by PyTorch
// (onnx_export.py cli) trains a few steps over the ranks and is exported. The exported file, imported
// by toru again, holds exactly the trained weights and the rank-averaged running statistics and
// gives the trained model's eval logits; onnx.checker accepts it, and PyTorch's SmallCnn loaded with
// its initializers gives the same logits (onnx_export_check.py). Bad exports fail on every rank.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "mpi_test.hpp"
#include "toru/core/error.hpp"
#include "toru/swap/models.hpp"
#include "toru/swap/onnx_import.hpp"
#include "toru/train/onnx_export.hpp"
#include "toru/train/trainer.hpp"
#include "util.hpp"

namespace toru::train::test {
namespace {

namespace fs = std::filesystem;

constexpr std::int64_t size = 12, batch = 8;

// A folder every rank agrees on (rank 0's pid) with cnn.onnx, written once for the suite by rank 0
// (PyTorch's export takes seconds).
class onnx_export : public ::testing::Test {
 protected:
  static fs::path& dir() {
    static fs::path d;
    return d;
  }
  static bool& ok() {
    static bool v = false;
    return v;
  }
  static void SetUpTestSuite() {
    if (!onnx_export_available()) return;
    long id = static_cast<long>(::getpid());
    MPI_Bcast(&id, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    dir() = fs::temp_directory_path() / ("toru-onnx-export-test-" + std::to_string(id));
    int rc = 0;
    if (toru::test::rank() == 0) {
      fs::create_directories(dir());
      rc = std::system(
          fmt::format("/usr/bin/python3 {} {} {} {} cli", TORU_ONNX_EXPORT, dir().string(), 4, size).c_str());
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    ok() = rc == 0;
  }
  static void TearDownTestSuite() {
    MPI_Barrier(MPI_COMM_WORLD);
    if (toru::test::rank() == 0 && !dir().empty()) fs::remove_all(dir());
  }
  void SetUp() override {
    if (!onnx_export_available()) GTEST_SKIP() << "toru was built without ONNX (libonnx-dev)";
    ASSERT_TRUE(ok()) << "onnx_export.py cli failed";
  }
};

trainer_options options(const fs::path& onnx) {
  return {.onnx = onnx,
          .data = data_source::synthetic,
          .synthetic_samples = 32,
          .batch = batch,
          .steps = 3,
          .optimizer = {.kind = optimizer_kind::adamw, .lr = 1e-2},
          .threads = 1,
          .seed = 3,
          .eval = false};
}

// The logits (the loss op's first input) of an eval forward.
std::vector<float> eval_logits(model& m, const std::vector<float>& x) {
  const auto& g = m.graph();
  std::string logits;
  for (const auto& o : g.ops)
    if (o.type == "loss") logits = g.tensors[o.inputs[0]].name;
  const std::vector<std::int32_t> labels(static_cast<std::size_t>(m.batch()), 0);
  m.forward(x, labels, {.training = false});
  return m.read_tensor(logits);
}

TEST_F(onnx_export, trained_weights_round_trip_through_toru_onnx_checker_and_pytorch) {
  const int nranks = toru::test::nranks();
  trainer t(options(dir() / "cnn.onnx"), MPI_COMM_WORLD);
  const auto w0 = t.weights();
  t.run();
  const auto out = dir() / "trained.onnx";
  t.export_onnx(out);
  const auto w = t.weights();
  ASSERT_NE(w, w0);
  // The running statistics averaged over the ranks (the export's are in rank order: to rounding).
  const auto b = t.model().buffer_data();
  std::vector<float> stats(b.begin(), b.end());
  MPI_Allreduce(MPI_IN_PLACE, stats.data(), static_cast<int>(stats.size()), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  for (auto& v : stats) v /= static_cast<float>(nranks);

  // toru imports the exported file: the trained parameters exactly, the averaged statistics.
  const std::int64_t local = t.model().batch();
  model back(swap::import_onnx(out.string(), {.batch = local}), {.seed = 99});
  const auto p = back.parameter_data();
  EXPECT_TRUE(std::vector<float>(p.begin(), p.end()) == w) << "exported parameters differ from the trained ones";
  const auto bb = back.buffer_data();
  ASSERT_EQ(bb.size(), stats.size());
  EXPECT_LT(rel_error(std::vector<float>(bb.begin(), bb.end()), stats), 1e-6);

  // Its eval forward is the trained model's (with the averaged statistics).
  const auto x = random_floats(static_cast<std::size_t>(local * size * size), 5);
  std::copy(bb.begin(), bb.end(), t.model().buffer_data().begin());
  t.model().parameters_changed();
  const auto trained = eval_logits(t.model(), x);
  const auto logits = eval_logits(back, x);
  EXPECT_LT(rel_error(logits, trained), 1e-6);

  // onnx.checker and PyTorch on the exported file (rank 0; the verdict goes to every rank).
  int rc = 0;
  if (toru::test::rank() == 0) {
    write_raw<float>(dir() / "x.bin", x);
    write_raw<float>(dir() / "toru-logits.bin", logits);
    const auto cmd =
        fmt::format("/usr/bin/python3 {} {} {} {} {} {} {} 2>&1", TORU_ONNX_EXPORT_CHECK, (dir() / "cnn.onnx").string(),
                    out.string(), (dir() / "x.bin").string(), (dir() / "toru-logits.bin").string(), local, size);
    rc = std::system(cmd.c_str());
  }
  MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
  EXPECT_EQ(rc, 0) << "onnx_export_check.py failed (its message is above)";
}

TEST_F(onnx_export, refused_on_every_rank) {
  {  // A model built by name has no ONNX file to write into.
    trainer t({.model = "mlp",
               .data = data_source::synthetic,
               .synthetic_samples = 16,
               .image = 28,
               .batch = 8,
               .steps = 1,
               .threads = 1,
               .eval = false},
              MPI_COMM_WORLD);
    try {
      t.export_onnx(dir() / "x.onnx");
      ADD_FAILURE() << "no error";
    } catch (const toru::error& e) {
      EXPECT_EQ(e.code(), errc::invalid_argument);
      EXPECT_NE(e.message().find("options.onnx: expected the ONNX model"), std::string::npos) << e.message();
    }
  }
  {  // An unwritable destination: rank 0's io error on every rank.
    trainer t(options(dir() / "cnn.onnx"), MPI_COMM_WORLD);
    try {
      t.export_onnx(dir() / "no-such-dir" / "x.onnx");
      ADD_FAILURE() << "no error";
    } catch (const toru::error& e) {
      EXPECT_EQ(e.code(), errc::io);
      EXPECT_NE(e.message().find("no-such-dir"), std::string::npos) << e.message();
    }
  }
  // The library call refuses another model's file, naming the parameter it lacks.
  model m(swap::build_model("mlp", {.batch = 2, .height = 12, .width = 12}), {});
  try {
    export_onnx(dir() / "cnn.onnx", m, m.parameter_data(), m.buffer_data(), dir() / "y.onnx");
    ADD_FAILURE() << "no error";
  } catch (const toru::error& e) {
    EXPECT_EQ(e.code(), errc::invalid_argument);
    EXPECT_NE(e.message().find("expected an initializer for the model's parameter"), std::string::npos) << e.message();
  }
}

}  // namespace
}  // namespace toru::train::test
