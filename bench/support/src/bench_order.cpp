// SPDX-License-Identifier: BSD-3-Clause
#include "bench/bench_order.hpp"

#include <algorithm>

namespace toru::apps {

std::size_t balanced_cycle(std::size_t n) { return n % 2 == 0 ? n : 2 * n; }

std::vector<std::size_t> balanced_order(std::size_t n, long long rep) {
  if (n == 0) return {};
  const auto cycle = static_cast<long long>(balanced_cycle(n));
  const auto r = static_cast<std::size_t>(((rep % cycle) + cycle) % cycle);
  // Williams' first row 0, 1, n-1, 2, n-2, ...: the differences between neighbours are all distinct
  // mod n, so its n shifts put every ordered pair side by side once; for odd n the reversed shifts
  // make up the pairs the differences miss.
  std::vector<std::size_t> order(n);
  for (std::size_t j = 1; j < n; ++j) order[j] = j % 2 == 1 ? (j + 1) / 2 : n - j / 2;
  for (auto& k : order) k = (k + r) % n;
  if (r >= n) std::reverse(order.begin(), order.end());
  return order;
}

}  // namespace toru::apps
