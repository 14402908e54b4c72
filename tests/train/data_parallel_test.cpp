// SPDX-License-Identifier: BSD-3-Clause
// The data-parallel engine's reduction on synthetic gradients: the ordered reduction equals the
// rank-order serial sum bit for bit for every bucket size, every readiness order and odd rank
// counts; MPI_Iallreduce mode agrees to rounding.
#include "toru/train/data_parallel.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "mpi_test.hpp"
#include "toru/core/error.hpp"
#include "toru/core/events.hpp"

namespace {

using namespace toru::train;

// Slots of awkward sizes (primes, a large one, a one-element one), contiguous like a model's.
std::vector<parameter_slot> make_slots(bool gaps = false) {
  const std::int64_t counts[] = {7, 1, 1031, 13, 4099, 3, 257, 1, 61};
  std::vector<parameter_slot> slots;
  std::int64_t offset = 0;
  for (std::size_t i = 0; i < std::size(counts); ++i) {
    slots.push_back({.name = "p" + std::to_string(i),
                     .shape = {counts[i]},
                     .offset = offset,
                     .count = counts[i],
                     .first_forward_op = static_cast<int>(i)});
    offset += counts[i] + (gaps ? 5 : 0);
  }
  return slots;
}

std::int64_t extent(const std::vector<parameter_slot>& slots) { return slots.back().offset + slots.back().count; }

// Rank r's gradient: values of very different magnitudes, so association changes the rounding.
std::vector<float> gradient(int r, std::int64_t n, unsigned step) {
  std::mt19937 rng(1000u * static_cast<unsigned>(r) + step);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> g(static_cast<std::size_t>(n));
  for (auto& x : g) x = u(rng) * std::pow(10.0f, static_cast<float>(rng() % 7) - 3);
  return g;
}

std::vector<float> serial_average(std::int64_t n, int nranks, unsigned step) {
  std::vector<float> sum = gradient(0, n, step);
  for (int r = 1; r < nranks; ++r) {
    const auto g = gradient(r, n, step);
    for (std::int64_t k = 0; k < n; ++k) sum[static_cast<std::size_t>(k)] += g[static_cast<std::size_t>(k)];
  }
  for (auto& x : sum) x /= static_cast<float>(nranks);
  return sum;
}

std::vector<float> run(const toru::comm::communicator& comm, const std::vector<parameter_slot>& slots,
                       const data_parallel_options& o, unsigned step, bool shuffled_ready) {
  data_parallel dp(comm, slots, memory_space::host, o);
  auto g = gradient(dp.rank(), extent(slots), step);
  dp.begin_step(g);
  std::vector<int> order(slots.size());
  std::iota(order.rbegin(), order.rend(), 0);  // backward order: highest slot first
  if (shuffled_ready) std::shuffle(order.begin(), order.end(), std::mt19937(static_cast<unsigned>(dp.rank()) + step));
  for (int s : order) dp.gradient_ready(s);
  dp.finish();
  return g;
}

TEST(DataParallel, BucketsFollowReverseSlotOrderWithASmallFirstBucket) {
  const auto slots = make_slots();
  const auto b = make_buckets(slots, 4 * 1100, 4 * 70);
  // Bucket 0 is capped at 70 floats: slot 8 (61) alone, slot 7 (1) fits too, slot 6 (257) does not.
  ASSERT_GE(b.size(), 3u);
  EXPECT_EQ(b[0].last_slot, 8);
  EXPECT_EQ(b[0].first_slot, 7);
  EXPECT_EQ(b[0].count, 62);
  EXPECT_EQ(b[1].last_slot, 6);
  for (std::size_t i = 1; i < b.size(); ++i) EXPECT_EQ(b[i].last_slot, b[i - 1].first_slot - 1);
  EXPECT_EQ(b.back().first_slot, 0);
  std::int64_t total = 0;
  for (const auto& x : b) {
    total += x.count;
    EXPECT_TRUE(x.contiguous);
    EXPECT_TRUE(x.count * 4 <= 4 * 1100 || x.first_slot == x.last_slot);  // only a lone slot exceeds the cap
  }
  EXPECT_EQ(total, extent(slots));
  EXPECT_THROW(make_buckets(slots, 2, 4), toru::error);
}

TEST(DataParallel, OrderedReductionIsTheRankOrderSumForEveryBucketSize) {
  toru::comm::communicator comm(MPI_COMM_WORLD);
  const int nranks = toru::test::nranks();
  for (bool gaps : {false, true}) {
    const auto slots = make_slots(gaps);
    const auto n = extent(slots);
    auto want = serial_average(n, nranks, 1);
    for (std::int64_t bytes : {4LL, 28LL, 1000LL, 4LL * 4099, 1LL << 20, 64LL << 20}) {
      for (bool shuffled : {false, true}) {
        const auto got =
            run(comm, slots, {.bucket_bytes = bytes, .first_bucket_bytes = std::min<std::int64_t>(bytes, 256)}, 1,
                shuffled);
        for (const auto& s : slots)
          for (std::int64_t k = s.offset; k < s.offset + s.count; ++k)
            ASSERT_EQ(got[static_cast<std::size_t>(k)], want[static_cast<std::size_t>(k)])
                << "bucket bytes " << bytes << " gaps " << gaps << " element " << k;
        // Gaps between slots are nobody's gradient: left alone.
        if (gaps) {
          EXPECT_EQ(got[static_cast<std::size_t>(slots[0].count)],
                    gradient(toru::test::rank(), n, 1)[static_cast<std::size_t>(slots[0].count)]);
        }
      }
    }
  }
}

TEST(DataParallel, OverlapStartsBucketsDuringBackward) {
  toru::comm::communicator comm(MPI_COMM_WORLD);
  const auto slots = make_slots();
  data_parallel dp(comm, slots, memory_space::host, {.bucket_bytes = 4 * 300, .first_bucket_bytes = 4 * 10});
  auto g = gradient(dp.rank(), extent(slots), 3);
  dp.begin_step(g);
  for (int s = static_cast<int>(slots.size()) - 1; s >= 0; --s) dp.gradient_ready(s);
  dp.finish();
  EXPECT_EQ(dp.buckets_started_in_backward(), static_cast<int>(dp.buckets().size()));
  // Two steps in a row with one engine.
  auto g2 = gradient(dp.rank(), extent(slots), 4);
  dp.begin_step(g2);
  dp.gradient_ready(8);
  dp.finish();  // the rest is started here
  EXPECT_EQ(dp.buckets_started_in_backward(), 1);
  const auto want = serial_average(extent(slots), dp.nranks(), 4);
  EXPECT_EQ(g2, want);
}

// What a profiler (tune/'s libtoru_tune_pmpi.so) sees of a step: one train.bucket mark per bucket, in
// start order with its bytes, and one train.comm_wait scope around the wait before the update.
struct recorded_event {
  int kind;
  std::string name;
  std::uint64_t bytes;
  double value;
};
std::vector<recorded_event> recorded;
void record(int kind, const char* name, const char*, std::uint64_t bytes, double value) noexcept {
  recorded.push_back({kind, name, bytes, value});
}

TEST(DataParallel, StepEmitsBucketAndWaitEvents) {
  toru::comm::communicator comm(MPI_COMM_WORLD);
  const auto slots = make_slots();
  data_parallel dp(comm, slots, memory_space::host, {.bucket_bytes = 4 * 300, .first_bucket_bytes = 4 * 10});
  auto g = gradient(dp.rank(), extent(slots), 5);
  recorded.clear();
  toru::events::set_sink(record);
  dp.begin_step(g);
  for (int s = static_cast<int>(slots.size()) - 1; s >= 0; --s) dp.gradient_ready(s);
  dp.finish();
  toru::events::set_sink(nullptr);
  std::vector<recorded_event> buckets, waits;
  for (const auto& e : recorded) (e.name == "train.bucket" ? buckets : waits).push_back(e);
  ASSERT_EQ(buckets.size(), dp.buckets().size());
  for (std::size_t i = 0; i < buckets.size(); ++i) {
    EXPECT_EQ(buckets[i].kind, static_cast<int>(toru::events::kind::mark));
    EXPECT_EQ(buckets[i].value, static_cast<double>(i));
    EXPECT_EQ(buckets[i].bytes, static_cast<std::uint64_t>(dp.buckets()[i].count) * sizeof(float));
  }
  ASSERT_EQ(waits.size(), 2u);
  EXPECT_EQ(waits[0].name, "train.comm_wait");
  EXPECT_EQ(waits[0].kind, static_cast<int>(toru::events::kind::begin));
  EXPECT_EQ(waits[1].kind, static_cast<int>(toru::events::kind::end));
}

TEST(DataParallel, MpiAllreduceModeAgreesToRounding) {
  toru::comm::communicator comm(MPI_COMM_WORLD);
  const auto slots = make_slots();
  const auto want = serial_average(extent(slots), toru::test::nranks(), 2);
  const auto got = run(comm, slots, {.bucket_bytes = 1000, .algorithm = reduction::mpi}, 2, false);
  for (std::size_t k = 0; k < want.size(); ++k)
    ASSERT_NEAR(got[k], want[k], 1e-5f * (1 + std::abs(want[k])) * static_cast<float>(toru::test::nranks())) << k;
}

TEST(DataParallel, AverageOfBuffersIsRankOrder) {
  toru::comm::communicator comm(MPI_COMM_WORLD);
  const auto slots = make_slots();
  data_parallel dp(comm, slots, memory_space::host);
  auto v = gradient(dp.rank(), 33, 9);
  dp.average(v);
  EXPECT_EQ(v, serial_average(33, dp.nranks(), 9));
}

TEST(DataParallel, DisagreeingBucketSizesFailOnEveryRank) {
  toru::comm::communicator comm(MPI_COMM_WORLD);
  if (toru::test::nranks() == 1) GTEST_SKIP() << "needs two ranks";
  const auto slots = make_slots();
  try {
    data_parallel dp(comm, slots, memory_space::host, {.bucket_bytes = 1000 + toru::test::rank()});
    ADD_FAILURE() << "no error";
  } catch (const toru::error& e) {
    EXPECT_EQ(e.code(), toru::errc::mismatch);
    EXPECT_NE(e.message().find("bucket_bytes"), std::string::npos) << e.message();
  }
}

}  // namespace
