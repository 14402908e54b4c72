// SPDX-License-Identifier: BSD-3-Clause
// The publisher across ranks: tiles of uneven, changing height (zero included) are gathered
// along axis 0 at the root without the simulation waiting and recorded bit-identical; a
// mismatched call fails on every rank instead of hanging; a bad root is rejected everywhere.
#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <random>
#include <span>
#include <thread>

#include "toru/core/error.hpp"
#include "toru/stream/publisher.hpp"
#include "toru/stream/viewer_client.hpp"

namespace ts = toru::stream;
namespace fs = std::filesystem;

namespace {
int rank_of() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int size_of() {
  int n = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}
// Uneven, changing heights, zero included (rank 1 at step 0, ...).
std::int64_t rows_of(int r, int step) { return (r * 3 + step) % 4 + (r == 0 ? 1 : 0) * (step % 2); }
// Random bit patterns (NaNs and denormals included): the recording must hold exactly these bits.
std::vector<std::uint64_t> tile_bits(int r, int step, std::int64_t n) {
  std::mt19937_64 gen(static_cast<std::uint64_t>(r * 1000 + step + 17));
  std::vector<std::uint64_t> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = gen();
  return v;
}
}  // namespace

TEST(StreamPublisher, GatheredTilesArriveBitIdenticalInTheRecording) {
  const int rank = rank_of(), nranks = size_of();
  long pid = ::getpid();
  MPI_Bcast(&pid, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  const auto dir = (fs::temp_directory_path() / ("toru-stream-pub-" + std::to_string(pid))).string();
  const int root = nranks - 1;  // not rank 0, to catch a hard-coded root
  const std::int64_t cols = 7;
  const int steps = 6;
  {
    ts::publisher pub(MPI_COMM_WORLD, {.queue_slots = 8,  // every frame, not the newest only
                                       .image_encoding = ts::codec::lz4,
                                       .record_dir = dir,
                                       .serve = false,
                                       .root = root});
    // The simulation never waits on the gather: the root's first call returns while the other
    // ranks have not called yet (they sleep).
    if (rank != root) std::this_thread::sleep_for(std::chrono::milliseconds(600));
    for (int step = 0; step < steps; ++step) {
      const auto bits = tile_bits(rank, step, rows_of(rank, step) * cols);
      const auto t0 = std::chrono::steady_clock::now();
      EXPECT_EQ(pub.publish_gathered(
                    ts::make_frame<double>("u", step, step * 0.5, {rows_of(rank, step), cols},
                                           std::span(reinterpret_cast<const double*>(bits.data()), bits.size()))),
                ts::push_result::queued);
      if (step == 0 && rank == root && nranks > 1) {
        EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 0.3);
      }
    }
    pub.complete_gathers();
    if (rank == root) {
      ASSERT_TRUE(pub.flush());
      EXPECT_EQ(pub.counters().dropped, 0u);
      ASSERT_EQ(pub.store()->size(), static_cast<std::uint64_t>(steps));
      for (int step = 0; step < steps; ++step) {
        std::vector<std::uint64_t> want;
        for (int r = 0; r < nranks; ++r) {
          const auto b = tile_bits(r, step, rows_of(r, step) * cols);
          want.insert(want.end(), b.begin(), b.end());
        }
        const auto msg = *pub.store()->get(static_cast<std::uint64_t>(step));
        std::string_view payload;
        const auto h = ts::parse_message(msg, &payload);
        EXPECT_EQ(h.step, step);
        EXPECT_EQ(h.name, "u");
        ASSERT_EQ(h.shape, (std::vector<std::int64_t>{static_cast<std::int64_t>(want.size()) / cols, cols}));
        const auto bytes = ts::decode_payload(h, payload);
        ASSERT_EQ(bytes.size(), want.size() * sizeof(std::uint64_t));
        EXPECT_TRUE(bytes.empty() || std::memcmp(bytes.data(), want.data(), bytes.size()) == 0) << "step " << step;
      }
    } else {
      EXPECT_EQ(pub.store(), nullptr);  // only the root records
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) fs::remove_all(dir);
}

// serve = true under MPI: the root alone runs the server (other ranks report no ports), and a TCP
// viewer replaying from the start receives every gathered frame, each the ranks' tiles in rank
// order, bit for bit (no recording: from the server's in-memory cache).
TEST(StreamPublisher, RootServesTheGatheredFramesToAViewer) {
  const int rank = rank_of(), nranks = size_of();
  const int root = nranks - 1;
  const std::int64_t cols = 5;
  const int steps = 5;
  ts::publisher pub(MPI_COMM_WORLD, {.queue_slots = 8,
                                     .image_encoding = ts::codec::zstd,
                                     .serve = true,
                                     .server = {.address = "127.0.0.1", .http_port = 0, .tcp_port = 0},
                                     .root = root});
  if (rank == root) {
    EXPECT_GT(pub.tcp_port(), 0);
    EXPECT_GT(pub.http_port(), 0);
    ASSERT_NE(pub.get_server(), nullptr);
  } else {
    EXPECT_EQ(pub.tcp_port(), -1);
    EXPECT_EQ(pub.http_port(), -1);
    EXPECT_EQ(pub.get_server(), nullptr);
  }
  for (int step = 0; step < steps; ++step) {
    const auto bits = tile_bits(rank, step, rows_of(rank, step) * cols);
    ASSERT_EQ(pub.publish_gathered(
                  ts::make_frame<double>("u", step, step * 0.25, {rows_of(rank, step), cols},
                                         std::span(reinterpret_cast<const double*>(bits.data()), bits.size()))),
              ts::push_result::queued);
  }
  pub.complete_gathers();
  if (rank == root) {
    ASSERT_TRUE(pub.flush());
    ASSERT_EQ(pub.counters().encoded, static_cast<std::uint64_t>(steps));
    std::vector<std::string> got;
    const auto st = ts::run_viewer({.port = pub.tcp_port(),
                                    .from = "0",
                                    .fps = 500,
                                    .policy = "catch-up",
                                    .max_frames = steps,
                                    .idle_timeout_s = 5},
                                   [&](const std::string& m, const ts::frame_header&) {
                                     got.push_back(m);
                                     return true;
                                   });
    ASSERT_EQ(got.size(), static_cast<std::size_t>(steps)) << st.stop_reason;
    for (int step = 0; step < steps; ++step) {
      std::vector<std::uint64_t> want;
      for (int r = 0; r < nranks; ++r) {
        const auto b = tile_bits(r, step, rows_of(r, step) * cols);
        want.insert(want.end(), b.begin(), b.end());
      }
      std::string_view payload;
      const auto h = ts::parse_message(got[static_cast<std::size_t>(step)], &payload);
      EXPECT_EQ(h.step, step);
      EXPECT_EQ(h.name, "u");
      ASSERT_EQ(h.shape, (std::vector<std::int64_t>{static_cast<std::int64_t>(want.size()) / cols, cols}));
      const auto bytes = ts::decode_payload(h, payload);
      ASSERT_EQ(bytes.size(), want.size() * sizeof(std::uint64_t));
      EXPECT_TRUE(bytes.empty() || std::memcmp(bytes.data(), want.data(), bytes.size()) == 0) << "step " << step;
    }
    EXPECT_GE(pub.get_server()->counters().frames_sent, static_cast<std::uint64_t>(steps));
  }
  // The viewer's run is the root's alone; nobody leaves (destroying the publisher) before it is done.
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST(StreamPublisher, MismatchedCallFailsOnEveryRank) {
  if (size_of() < 2) GTEST_SKIP() << "needs two ranks";
  ts::publisher pub(MPI_COMM_WORLD, {.serve = false});
  std::vector<float> v(3);
  const char* name = rank_of() == 0 ? "a" : "b";
  // The error is found when the call's sizes arrive: at the next gathered call, on every rank.
  EXPECT_EQ(pub.publish_gathered(ts::make_frame<float>(name, 0, 0, {1, 3}, v)), ts::push_result::queued);
  try {
    pub.complete_gathers();
    ADD_FAILURE() << "expected a mismatch";
  } catch (const toru::error& e) {
    EXPECT_EQ(e.code(), toru::errc::mismatch) << e.what();
    EXPECT_NE(std::string(e.what()).find("frame.name"), std::string::npos) << e.what();
  }
  // A bad tile on one rank: the same invalid_argument everywhere, at the next call.
  const std::int64_t cols = rank_of() == 0 ? 4 : 3;
  pub.publish_gathered(ts::make_frame<float>("a", 0, 0, {1, cols}, v));
  try {
    pub.publish_gathered(ts::make_frame<float>("a", 1, 0, {1, 3}, v));
    ADD_FAILURE() << "expected an error";
  } catch (const toru::error& e) {
    EXPECT_EQ(e.code(), toru::errc::invalid_argument) << e.what();
    EXPECT_NE(std::string(e.what()).find("rank 0's tile"), std::string::npos) << e.what();
  }
  // The pipeline is usable again afterwards.
  pub.publish_gathered(ts::make_frame<float>("a", 2, 0, {1, 3}, v));
  pub.complete_gathers();
  if (pub.is_root()) {
    ASSERT_TRUE(pub.flush());
    EXPECT_EQ(pub.counters().encoded, 1u);
  }
}

TEST(StreamPublisher, BadRootRejectedEverywhere) {
  try {
    ts::publisher pub(MPI_COMM_WORLD, {.serve = false, .root = size_of()});
    ADD_FAILURE() << "expected invalid_argument";
  } catch (const toru::error& e) {
    EXPECT_EQ(e.code(), toru::errc::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("options.root"), std::string::npos);
  }
}

TEST(StreamPublisher, OversizedGatherRefused) {
  ts::publisher pub(MPI_COMM_WORLD, {.max_frame_bytes = 64, .serve = false});
  std::vector<double> v(9);
  // A tile alone over the limit: refused at once on its rank.
  EXPECT_EQ(pub.publish_gathered(ts::make_frame<double>("big", 0, 0, {1, 9}, v)), ts::push_result::refused_oversize);
  // 64 bytes per rank: the whole frame is over the limit from two ranks on.
  EXPECT_EQ(pub.publish_gathered(ts::make_frame<double>("big", 1, 0, {1, 8}, std::span(v).first(8))),
            ts::push_result::queued);
  pub.complete_gathers();
  if (pub.is_root()) {
    ASSERT_TRUE(pub.flush());
    EXPECT_EQ(pub.counters().refused, size_of() > 1 ? 2u : 1u);
    EXPECT_EQ(pub.counters().encoded, size_of() > 1 ? 0u : 1u);
  }
}
