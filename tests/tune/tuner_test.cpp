// SPDX-License-Identifier: BSD-3-Clause
// The tuner on synthetic costs (no timing: the iteration time is given), so the known best is known.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include "mpi_test.hpp"
#include "toru/core/error.hpp"
#include "toru/tune/tuner.hpp"

namespace {

using json = nlohmann::json;
using toru::tune::config;

// A cost over the FFT knobs with one best point and interactions; every rank sees it with its own
// noise (the tuner max-reduces).
double cost(const config& c, std::mt19937& rng) {
  double t = 10;
  t *= c["decomposition"] == "slab" ? 1.0 : 1.3;
  t *= c["overlap"].get<bool>() ? 0.8 : 1.0;
  const int ch = c["chunks"];
  t *= ch == 4 ? 0.9 : ch == 2 ? 0.95 : ch == 8 ? 1.2 : 1.0;
  t *= c["algorithm"] == "pairwise" ? 0.85 : c["algorithm"] == "bruck" ? 1.5 : 1.0;
  std::uniform_real_distribution<double> noise(0.0, 0.005);
  return t * (1 + noise(rng));
}

config exhaustive_best(std::mt19937& rng) {
  config best;
  double bt = 1e300;
  const auto k = toru::tune::fft_knobs();
  for (const auto& d : k[0].values)
    for (const auto& o : k[1].values)
      for (const auto& ch : k[2].values)
        for (const auto& al : k[3].values) {
          const config c = {{"decomposition", d}, {"overlap", o}, {"chunks", ch}, {"algorithm", al}};
          const double t = cost(c, rng);
          if (t < bt) bt = t, best = c;
        }
  return best;
}

TEST(TuneTuner, FindsTheKnownBestFromABadStart) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::mt19937 rng(1234 + rank);
  const config known = exhaustive_best(rng);
  const config bad = {{"decomposition", "pencil"}, {"overlap", false}, {"chunks", 8}, {"algorithm", "bruck"}};
  toru::tune::tuner t(MPI_COMM_WORLD, toru::tune::fft_knobs(), bad, {.samples = 3, .warmup = 1});
  int iterations = 0, changes = 0;
  while (!t.done() && iterations < 1000) {
    changes += t.step(cost(t.current(), rng));
    ++iterations;
  }
  ASSERT_TRUE(t.done());
  EXPECT_EQ(t.best(), known) << toru::tune::to_text(t.best());
  EXPECT_EQ(t.current(), known);
  // 1.3 * 1.2 * 1.5 against 0.8 * 0.9 * 0.85 (within the 0.5% noise).
  EXPECT_NEAR(t.gain(), (1.3 * 1.2 * 1.5) / (0.8 * 0.9 * 0.85), 0.05);
  EXPECT_GT(changes, 3);
  // Every rank took the same decisions (each rank's noise differs, so only the agreement makes them
  // equal): rank 0's chosen configuration, report and counts, byte for byte.
  const std::string mine =
      t.best().dump() + "\n" + t.report().dump() + "\n" + std::to_string(iterations) + " " + std::to_string(changes);
  int len = static_cast<int>(mine.size());
  MPI_Bcast(&len, 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::string root(static_cast<std::size_t>(len), '\0');
  if (rank == 0) root = mine;
  MPI_Bcast(root.data(), len, MPI_CHAR, 0, MPI_COMM_WORLD);
  EXPECT_EQ(mine, root) << "rank " << rank << " decided differently from rank 0";
}

TEST(TuneTuner, StopsAtTheNoiseFloor) {
  // A flat cost with 10% noise: nothing beats the start by more than the floor, so nothing changes.
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::mt19937 rng(99);
  std::uniform_real_distribution<double> noise(0.0, 0.1);
  const std::vector<toru::tune::knob> knobs = {{"a", {1, 2, 3}}, {"b", {"x", "y"}}};
  toru::tune::tuner t(MPI_COMM_WORLD, knobs, {{"a", 2}, {"b", "y"}}, {.samples = 5, .warmup = 0, .noise_floor = 0.12});
  while (!t.done()) t.step(1.0 + noise(rng));
  EXPECT_EQ(t.best(), (config{{"a", 2}, {"b", "y"}}));
  EXPECT_LT(t.report()["candidates"].size(), 6u);  // one pass: start + 3 other values
}

TEST(TuneTuner, SkipsFailedCandidatesAndPersistsWisdom) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const std::string path = (std::filesystem::temp_directory_path() / "toru_tune_wisdom_test.json").string();
  if (rank == 0) std::filesystem::remove(path);
  MPI_Barrier(MPI_COMM_WORLD);
  const std::vector<toru::tune::knob> knobs = {{"v", {1, 2, 3, 4}}};
  auto run = [&] {
    toru::tune::tuner t(MPI_COMM_WORLD, knobs, {{"v", 1}}, {.samples = 1, .warmup = 0, .wisdom = path, .key = "k"});
    while (!t.done()) {
      const int v = t.current()["v"];
      if (v == 3)
        t.step_failed();  // cannot be built here
      else
        t.step(v == 4 ? 1.0 : 5.0 - v);
    }
    return t.best()["v"].get<int>();
  };
  EXPECT_EQ(run(), 4);
  MPI_Barrier(MPI_COMM_WORLD);
  toru::tune::tuner again(MPI_COMM_WORLD, knobs, {{"v", 1}}, {.wisdom = path, .key = "k"});
  EXPECT_TRUE(again.from_wisdom());
  EXPECT_TRUE(again.done());
  EXPECT_EQ(again.current()["v"], 4);
  EXPECT_FALSE(again.step(1.0));
  if (rank == 0) std::filesystem::remove(path);
}

TEST(TuneTuner, BadArgumentsFailOnEveryRank) {
  const std::vector<toru::tune::knob> knobs = {{"v", {1, 2}}};
  EXPECT_THROW(toru::tune::tuner(MPI_COMM_WORLD, knobs, {{"v", 7}}), toru::error);
  EXPECT_THROW(toru::tune::tuner(MPI_COMM_WORLD, {{"e", {}}}, json::object()), toru::error);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  // One rank starts elsewhere: a mismatch on all ranks, not a hang.
  if (toru::test::nranks() > 1) {
    EXPECT_THROW(toru::tune::tuner(MPI_COMM_WORLD, knobs, {{"v", rank == 0 ? 1 : 2}}), toru::error);
  }
}

TEST(TuneTuner, AppliesKnobsToOptions) {
  const auto o = toru::tune::apply(
      config{{"decomposition", "pencil"}, {"overlap", false}, {"chunks", 4}, {"algorithm", "pairwise"}});
  EXPECT_EQ(o.decomp, toru::fft::decomposition::pencil);
  EXPECT_FALSE(o.overlap);
  EXPECT_EQ(o.chunks, 4);
  EXPECT_EQ(o.algorithm, toru::comm::alltoall_algorithm::pairwise);
  const auto a = toru::tune::apply(config{{"algorithm", "bruck"}, {"chunks", 2}}, toru::comm::alltoall_options{});
  EXPECT_EQ(a.algorithm, toru::comm::alltoall_algorithm::bruck);
  EXPECT_EQ(a.chunks, 2);
}

}  // namespace
