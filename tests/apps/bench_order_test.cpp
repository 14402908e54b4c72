// SPDX-License-Identifier: BSD-3-Clause
// The benchmarks' row order (bench/bench_order.hpp): every rep a permutation, and over a cycle
// every row right after every other row equally often.
#include "bench/bench_order.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <utility>

namespace {

using toru::apps::balanced_cycle;
using toru::apps::balanced_order;

TEST(bench_order, every_rep_times_each_row_once) {
  for (std::size_t n = 1; n <= 9; ++n)
    for (long long rep = -3; rep < 20; ++rep) {
      auto o = balanced_order(n, rep);
      ASSERT_EQ(o.size(), n);
      std::sort(o.begin(), o.end());
      std::vector<std::size_t> want(n);
      std::iota(want.begin(), want.end(), std::size_t{0});
      EXPECT_EQ(o, want) << "n = " << n << ", rep " << rep;
    }
}

TEST(bench_order, every_row_follows_every_other_equally_often) {
  for (std::size_t n = 2; n <= 9; ++n) {
    std::map<std::pair<std::size_t, std::size_t>, int> follows;
    for (long long rep = 0; rep < static_cast<long long>(balanced_cycle(n)); ++rep) {
      const auto o = balanced_order(n, rep);
      for (std::size_t i = 1; i < n; ++i) ++follows[{o[i - 1], o[i]}];
    }
    ASSERT_EQ(follows.size(), n * (n - 1)) << "n = " << n << ": some row never follows some other";
    const int want = n % 2 == 0 ? 1 : 2;
    for (const auto& [pair, count] : follows)
      EXPECT_EQ(count, want) << "n = " << n << ": row " << pair.second << " after row " << pair.first;
  }
}

TEST(bench_order, every_row_leads_equally_often) {
  for (std::size_t n = 1; n <= 9; ++n) {
    std::vector<int> first(n);
    for (long long rep = 0; rep < static_cast<long long>(balanced_cycle(n)); ++rep) ++first[balanced_order(n, rep)[0]];
    for (std::size_t k = 0; k < n; ++k) EXPECT_EQ(first[k], n % 2 == 0 ? 1 : 2) << "n = " << n << ", row " << k;
  }
}

TEST(bench_order, warm_ups_continue_the_cycle_backwards) {
  for (std::size_t n = 1; n <= 6; ++n) {
    const auto cycle = static_cast<long long>(balanced_cycle(n));
    for (long long rep = -2 * cycle; rep < 0; ++rep)
      EXPECT_EQ(balanced_order(n, rep), balanced_order(n, rep + cycle)) << "n = " << n << ", rep " << rep;
  }
  EXPECT_TRUE(balanced_order(0, 0).empty());
}

// Three rows and five timed reps, as toru-alltoall-bench runs mpi, auto and indirect: each of the
// other rows runs right after row 0 at least once (the seeded shuffle never put row 2 there).
TEST(bench_order, short_runs_still_mix_the_neighbours) {
  std::map<std::size_t, int> after0;
  for (long long rep = 0; rep < 5; ++rep) {
    const auto o = balanced_order(3, rep);
    for (std::size_t i = 1; i < o.size(); ++i)
      if (o[i - 1] == 0) ++after0[o[i]];
  }
  EXPECT_GE(after0[1], 1);
  EXPECT_GE(after0[2], 1);
}

}  // namespace
