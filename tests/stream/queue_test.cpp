// SPDX-License-Identifier: BSD-3-Clause
// The producer's queue: under latest_wins / drop_newest it never waits for the consumer (with a
// consumer that takes nothing every push returns, and every frame offered is accounted for exactly
// once: queued, dropped or refused; asserted by counting, not by timing); under block it loses
// nothing to a slow consumer, counts the wait, and gives up on a stuck one after the timeout.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <thread>

#include "toru/stream/frame_queue.hpp"

namespace ts = toru::stream;

namespace {
ts::frame_view frame_of(const std::vector<std::int32_t>& v, std::int64_t step) {
  return ts::make_frame<std::int32_t>("f", step, 0, {static_cast<std::int64_t>(v.size())}, v);
}
std::int32_t first_value(const ts::frame_queue::item& it) {
  std::int32_t x;
  std::memcpy(&x, it.view.data.data(), sizeof x);
  return x;
}
}  // namespace

TEST(StreamQueue, StalledConsumerDropNewest) {
  ts::frame_queue q(3, 4096, ts::full_policy::drop_newest);
  std::vector<std::int32_t> v(100);
  int queued = 0, dropped = 0;
  for (int i = 0; i < 1000; ++i) {
    v[0] = i;
    const auto r = q.push(frame_of(v, i));
    queued += r == ts::push_result::queued;
    dropped += r == ts::push_result::dropped;
  }
  EXPECT_EQ(queued, 3);
  EXPECT_EQ(dropped, 997);
  const auto c = q.counters();
  EXPECT_EQ(c.offered, 1000u);
  EXPECT_EQ(c.queued, 3u);
  EXPECT_EQ(c.dropped, 997u);
  for (int i = 0; i < 3; ++i) {  // the first three, in order
    auto it = q.take(0);
    ASSERT_TRUE(it);
    EXPECT_EQ(first_value(*it), i);
    EXPECT_EQ(it->view.step, i);
    q.done(*it);
  }
  EXPECT_FALSE(q.take(0));
}

TEST(StreamQueue, StalledConsumerLatestWinsKeepsTheNewest) {
  ts::frame_queue q(2, 4096, ts::full_policy::latest_wins);
  std::vector<std::int32_t> v(10);
  for (int i = 0; i < 501; ++i) {
    v[0] = i;
    const auto r = q.push(frame_of(v, i));
    EXPECT_EQ(r, i < 2 ? ts::push_result::queued : ts::push_result::replaced_oldest);
  }
  EXPECT_EQ(q.counters().dropped, 499u);
  auto a = q.take(0), b = q.take(0);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(first_value(*a), 499);
  EXPECT_EQ(first_value(*b), 500);
}

TEST(StreamQueue, ConsumerHoldingTheOnlySlot) {
  ts::frame_queue q(1, 64, ts::full_policy::latest_wins);
  std::vector<std::int32_t> v(4);
  ASSERT_EQ(q.push(frame_of(v, 0)), ts::push_result::queued);
  auto held = q.take(0);  // the encoder is busy with it
  ASSERT_TRUE(held);
  EXPECT_EQ(q.push(frame_of(v, 1)), ts::push_result::dropped);  // nothing to replace, and no waiting
  q.done(*held);
  EXPECT_EQ(q.push(frame_of(v, 2)), ts::push_result::queued);
}

TEST(StreamQueue, OversizeRefused) {
  ts::frame_queue q(2, 40, ts::full_policy::latest_wins);
  std::vector<std::int32_t> v(11);
  EXPECT_EQ(q.push(frame_of(v, 0)), ts::push_result::refused_oversize);
  EXPECT_EQ(q.counters().refused, 1u);
  EXPECT_EQ(q.size(), 0u);
}

TEST(StreamQueue, ConcurrentSlowConsumerEveryFrameAccountedFor) {
  ts::frame_queue q(2, 1 << 16, ts::full_policy::latest_wins);
  std::atomic<bool> done{false};
  std::vector<std::int32_t> seen;
  std::thread consumer([&] {
    while (true) {
      auto it = q.take(10);
      if (!it) {
        if (done) return;
        continue;
      }
      seen.push_back(first_value(*it));
      std::this_thread::sleep_for(std::chrono::microseconds(200));  // slower than the producer
      q.done(*it);
    }
  });
  std::vector<std::int32_t> v(1000);
  const int n = 5000;
  for (int i = 0; i < n; ++i) {
    v[0] = i;
    q.push(frame_of(v, i));
  }
  done = true;
  consumer.join();
  const auto c = q.counters();
  EXPECT_EQ(c.offered, static_cast<std::uint64_t>(n));
  EXPECT_EQ(c.taken + c.dropped, c.queued);  // every queued frame was taken or replaced
  EXPECT_EQ(seen.size(), c.taken);
  EXPECT_GT(c.dropped, 0u);                                                       // the consumer was slower
  for (std::size_t i = 1; i < seen.size(); ++i) ASSERT_LT(seen[i - 1], seen[i]);  // order kept
  EXPECT_EQ(seen.back(), n - 1);  // the newest frame always gets through
}

// block (recorded streams): a consumer slower than the producer loses nothing; the producer waits
// for it and the wait is counted.
TEST(StreamQueue, BlockLosesNothingWithASlowConsumer) {
  ts::frame_queue q(2, 1 << 16, ts::full_policy::block, 10);
  std::vector<std::int32_t> seen;
  std::thread consumer([&] {
    while (auto it = q.take(1000)) {
      seen.push_back(first_value(*it));
      std::this_thread::sleep_for(std::chrono::microseconds(300));  // slower than the producer
      q.done(*it);
    }
  });
  std::vector<std::int32_t> v(1000);
  const int n = 500;
  for (int i = 0; i < n; ++i) {
    v[0] = i;
    ASSERT_EQ(q.push(frame_of(v, i)), ts::push_result::queued) << i;
  }
  while (q.size() > 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  q.close();
  consumer.join();
  const auto c = q.counters();
  EXPECT_EQ(c.offered, static_cast<std::uint64_t>(n));
  EXPECT_EQ(c.queued, static_cast<std::uint64_t>(n));
  EXPECT_EQ(c.dropped, 0u);
  ASSERT_EQ(seen.size(), static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) ASSERT_EQ(seen[static_cast<std::size_t>(i)], i);  // every frame, in order
  // 500 pushes into 2 slots against a 0.3 ms consumer: most had to wait, about 0.3 ms each.
  EXPECT_GT(c.blocked, static_cast<std::uint64_t>(n / 2));
  EXPECT_GT(c.blocked_s, 0.3e-3 * n / 4);
  EXPECT_EQ(c.block_timeouts, 0u);
}

// A recorder that stops (a hung disk) costs the producer one timeout, not one per frame: after it,
// frames are dropped at once (counted) until the consumer frees a slot, then blocking resumes.
TEST(StreamQueue, BlockGivesUpOnAStuckConsumer) {
  ts::frame_queue q(1, 4096, ts::full_policy::block, 0.2);
  std::vector<std::int32_t> v(10);
  v[0] = 0;
  ASSERT_EQ(q.push(frame_of(v, 0)), ts::push_result::queued);
  auto held = q.take(0);  // the consumer takes the frame and then hangs
  ASSERT_TRUE(held);
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(q.push(frame_of(v, 1)), ts::push_result::dropped);  // waits 0.2 s, then gives up
  const auto waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_GE(waited, 0.19);
  for (int i = 2; i < 100; ++i) ASSERT_EQ(q.push(frame_of(v, i)), ts::push_result::dropped);
  const auto total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(total, waited + 0.15);  // no further waits while stuck
  auto c = q.counters();
  EXPECT_EQ(c.dropped, 99u);
  EXPECT_EQ(c.block_timeouts, 99u);
  EXPECT_EQ(c.blocked, 1u);
  q.done(*held);  // the recorder recovers: frames are queued again, and the producer waits again
  v[0] = 100;
  EXPECT_EQ(q.push(frame_of(v, 100)), ts::push_result::queued);
  std::thread release([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    auto it = q.take(1000);
    if (it) q.done(*it);
  });
  v[0] = 101;
  EXPECT_EQ(q.push(frame_of(v, 101)), ts::push_result::queued);  // waited for the release, not dropped
  release.join();
  c = q.counters();
  EXPECT_EQ(c.blocked, 2u);
  EXPECT_EQ(c.dropped, 99u);
  auto last = q.take(0);
  ASSERT_TRUE(last);
  EXPECT_EQ(first_value(*last), 101);
}
