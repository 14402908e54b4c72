// SPDX-License-Identifier: BSD-3-Clause
#include "activation_arena.hpp"

#include <algorithm>
#include <numeric>

namespace toru::train::detail {

arena_layout pack_lifetimes(const std::vector<lifetime>& items, std::int64_t align) {
  arena_layout out;
  out.offset.assign(items.size(), 0);
  auto up = [align](std::int64_t b) { return (b + align - 1) / align * align; };
  std::vector<std::size_t> order(items.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  // Largest first; ties by first use, so the layout does not depend on the sort's stability.
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (items[a].bytes != items[b].bytes) return items[a].bytes > items[b].bytes;
    if (items[a].first != items[b].first) return items[a].first < items[b].first;
    return a < b;
  });
  std::vector<std::size_t> placed;
  std::vector<std::pair<std::int64_t, std::int64_t>> busy;  // [offset, end) of placed items alive at the same time
  for (std::size_t i : order) {
    const lifetime& it = items[i];
    busy.clear();
    for (std::size_t j : placed)
      if (items[j].first <= it.last && it.first <= items[j].last)
        busy.emplace_back(out.offset[j], out.offset[j] + up(items[j].bytes));
    std::sort(busy.begin(), busy.end());
    std::int64_t at = 0;
    const std::int64_t need = up(it.bytes);
    for (const auto& [b0, b1] : busy) {
      if (b0 >= at + need) break;  // the gap before this block fits
      at = std::max(at, b1);
    }
    out.offset[i] = at;
    out.bytes = std::max(out.bytes, at + need);
    placed.push_back(i);
  }
  return out;
}

}  // namespace toru::train::detail
