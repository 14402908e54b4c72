// SPDX-License-Identifier: BSD-3-Clause
// The pencil layouts of the reshape-based plans (fft3d_r2r, fft3d_batch): axis `a` whole and
// contiguous, the other two split over a p0 x p1 grid of ranks.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "split.hpp"
#include "toru/core/error.hpp"
#include "toru/fft/options.hpp"

namespace toru::fft::detail {

/// This rank's (r0, r1) pencil with `axis` whole and contiguous; the lower-numbered other axis is
/// split over p0, the higher over p1.
inline box3d pencil(std::array<std::int64_t, 3> n, int axis, int p0, int p1, int r0, int r1) {
  std::array<int, 2> split{};
  for (int a = 0, k = 0; a < 3; ++a)
    if (a != axis) split[k++] = a;
  box3d b;
  b.low[axis] = 0;
  b.size[axis] = n[axis];
  b.low[split[0]] = part_start(n[split[0]], p0, r0);
  b.size[split[0]] = part_count(n[split[0]], p0, r0);
  b.low[split[1]] = part_start(n[split[1]], p1, r1);
  b.size[split[1]] = part_count(n[split[1]], p1, r1);
  b.order = {split[0], split[1], axis};
  b.row_stride = b.size[axis];
  return b;
}

/// p0 x p1 = P with p0 the largest divisor not above sqrt(P).
inline std::array<int, 2> default_pencil_grid(int P) {
  int p0 = 1;
  for (int f = 1; f * f <= P; ++f)
    if (P % f == 0) p0 = f;
  return {p0, P / p0};
}

/// Not collective (inside the plan's agreement): a forced options.grid must tile P ranks.
inline void check_pencil_grid(const options3d& opts, int P) {
  if (opts.grid[0] == 0 && opts.grid[1] == 0) return;
  expect(opts.grid[0] >= 1 && opts.grid[1] >= 1 && opts.grid[0] * opts.grid[1] == P, "options.grid",
         fmt::format("p0 x p1 = {} ranks, both >= 1", P), fmt::format("{} x {}", opts.grid[0], opts.grid[1]));
}

/// The forced grid, or the squarest.
inline std::array<int, 2> pencil_grid(const options3d& opts, int P) {
  return opts.grid[0] != 0 ? opts.grid : default_pencil_grid(P);
}

}  // namespace toru::fft::detail
