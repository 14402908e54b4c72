// SPDX-License-Identifier: BSD-3-Clause
// pack_lifetimes (train/src/activation_arena.hpp): hand-worked layouts, and on random lifetimes the
// two properties any valid arena has whatever the placement: tensors alive at the same time never
// share a byte, and the arena is at least the largest sum of bytes alive at one time.
#include "activation_arena.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace {

using toru::train::detail::lifetime;
using toru::train::detail::pack_lifetimes;

TEST(activation_arena, disjoint_lifetimes_share_and_overlapping_ones_do_not) {
  // a [0, 2] and b [3, 5] never meet: one 128-byte block (100 rounded to 64) holds both; c [1, 4]
  // meets both, so it sits beside them: 128 + 64 bytes.
  const auto l = pack_lifetimes({{100, 0, 2}, {100, 3, 5}, {50, 1, 4}}, 64);
  EXPECT_EQ(l.offset[0], l.offset[1]);
  EXPECT_EQ(l.bytes, 192);
  EXPECT_TRUE(l.offset[2] >= 128 || l.offset[2] + 64 <= l.offset[0]);
  // Touching ends overlap (a tensor read by the op that writes the next must not be overwritten).
  const auto t = pack_lifetimes({{64, 0, 3}, {64, 3, 6}}, 64);
  EXPECT_NE(t.offset[0], t.offset[1]);
  EXPECT_EQ(t.bytes, 128);
  EXPECT_EQ(pack_lifetimes({}, 64).bytes, 0);
}

TEST(activation_arena, random_lifetimes_never_collide_and_meet_the_live_bound) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 40), horizon = 1 + static_cast<int>(rng() % 60);
    std::vector<lifetime> items(static_cast<std::size_t>(n));
    for (auto& it : items) {
      it.first = static_cast<int>(rng() % static_cast<unsigned>(horizon));
      it.last = it.first + static_cast<int>(rng() % static_cast<unsigned>(horizon));
      it.bytes = 1 + static_cast<std::int64_t>(rng() % 5000);
    }
    const auto l = pack_lifetimes(items, 64);
    std::int64_t peak_live = 0;
    for (int time = 0; time <= 2 * horizon; ++time) {
      std::int64_t live = 0;
      for (const auto& it : items)
        if (it.first <= time && time <= it.last) live += (it.bytes + 63) / 64 * 64;
      peak_live = std::max(peak_live, live);
    }
    EXPECT_GE(l.bytes, peak_live);
    for (int i = 0; i < n; ++i) {
      const auto& a = items[static_cast<std::size_t>(i)];
      EXPECT_EQ(l.offset[static_cast<std::size_t>(i)] % 64, 0);
      EXPECT_LE(l.offset[static_cast<std::size_t>(i)] + a.bytes, l.bytes);
      for (int j = i + 1; j < n; ++j) {
        const auto& b = items[static_cast<std::size_t>(j)];
        if (a.last < b.first || b.last < a.first) continue;
        const auto a0 = l.offset[static_cast<std::size_t>(i)], b0 = l.offset[static_cast<std::size_t>(j)];
        EXPECT_TRUE(a0 + a.bytes <= b0 || b0 + b.bytes <= a0) << "trial " << trial << ": items " << i << ", " << j;
      }
    }
  }
}

}  // namespace
