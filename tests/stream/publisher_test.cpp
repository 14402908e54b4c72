// The publisher across ranks: tiles of uneven height (one rank with none) are gathered along
// axis 0 at the root and recorded exactly; a mismatched call fails on every rank instead of
// hanging; a bad root is rejected everywhere.
#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "toru/core/error.hpp"
#include "toru/stream/publisher.hpp"

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
std::int64_t rows_of(int r) { return r == 1 ? 0 : r + 2; }  // rank 1 holds no rows
double value(int step, std::int64_t row, std::int64_t col) { return step * 1000.0 + row * 7 + col + 0.5; }
}  // namespace

TEST(StreamPublisher, GatheredTilesAreConcatenatedAtTheRoot) {
  const int rank = rank_of(), nranks = size_of();
  long pid = ::getpid();
  MPI_Bcast(&pid, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  const auto dir = (fs::temp_directory_path() / ("toru-stream-pub-" + std::to_string(pid))).string();
  const int root = nranks - 1;  // not rank 0, to catch a hard-coded root
  std::int64_t first_row = 0, total_rows = 0;
  for (int r = 0; r < nranks; ++r) {
    (r < rank ? first_row : total_rows) += rows_of(r);
  }
  total_rows += first_row;
  const std::int64_t cols = 7;
  {
    ts::publisher pub(MPI_COMM_WORLD,
                      {.image_encoding = ts::codec::lz4, .record_dir = dir, .serve = false, .root = root});
    for (int step = 0; step < 4; ++step) {
      std::vector<double> tile(static_cast<std::size_t>(rows_of(rank) * cols));
      for (std::int64_t i = 0; i < rows_of(rank); ++i)
        for (std::int64_t j = 0; j < cols; ++j)
          tile[static_cast<std::size_t>(i * cols + j)] = value(step, first_row + i, j);
      pub.publish_gathered(ts::make_frame<double>("u", step, step * 0.5, {rows_of(rank), cols}, tile));
      if (rank == root) {
        EXPECT_TRUE(pub.flush());  // the test wants every frame, not the newest only
      }
    }
    if (rank == root) {
      ASSERT_EQ(pub.store()->size(), 4u);
      for (int step = 0; step < 4; ++step) {
        const auto msg = *pub.store()->get(step);
        std::string_view payload;
        const auto h = ts::parse_message(msg, &payload);
        EXPECT_EQ(h.step, step);
        ASSERT_EQ(h.shape, (std::vector<std::int64_t>{total_rows, cols}));
        const auto bytes = ts::decode_payload(h, payload);
        std::vector<double> got(bytes.size() / sizeof(double));
        std::memcpy(got.data(), bytes.data(), bytes.size());
        for (std::int64_t i = 0; i < total_rows; ++i)
          for (std::int64_t j = 0; j < cols; ++j)
            ASSERT_EQ(got[static_cast<std::size_t>(i * cols + j)], value(step, i, j)) << i << "," << j;
      }
    } else {
      EXPECT_EQ(pub.store(), nullptr);  // only the root records
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) fs::remove_all(dir);
}

TEST(StreamPublisher, MismatchedCallFailsOnEveryRank) {
  if (size_of() < 2) GTEST_SKIP() << "needs two ranks";
  ts::publisher pub(MPI_COMM_WORLD, {.serve = false});
  std::vector<float> v(3);
  const char* name = rank_of() == 0 ? "a" : "b";
  try {
    pub.publish_gathered(ts::make_frame<float>(name, 0, 0, {1, 3}, v));
    ADD_FAILURE() << "expected a mismatch";
  } catch (const toru::error& e) {
    EXPECT_EQ(e.code(), toru::errc::mismatch) << e.what();
  }
  // A bad tile on one rank: the same invalid_argument everywhere.
  const std::int64_t cols = rank_of() == 0 ? 4 : 3;
  try {
    pub.publish_gathered(ts::make_frame<float>("a", 0, 0, {1, cols}, v));
    ADD_FAILURE() << "expected an error";
  } catch (const toru::error& e) {
    EXPECT_TRUE(e.code() == toru::errc::invalid_argument || e.code() == toru::errc::mismatch) << e.what();
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

TEST(StreamPublisher, OversizedGatherRefusedOnEveryRank) {
  ts::publisher pub(MPI_COMM_WORLD, {.max_frame_bytes = 64, .serve = false});
  std::vector<double> v(8);  // 64 bytes per rank
  const auto r = pub.publish_gathered(ts::make_frame<double>("big", 0, 0, {1, 8}, v));
  if (size_of() > 1) {
    EXPECT_EQ(r, ts::push_result::refused_oversize);
  } else {
    EXPECT_EQ(r, ts::push_result::queued);
  }
}
