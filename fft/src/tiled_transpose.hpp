// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The element transpose under every transpose_step (packing and the node window's write), in a
// header of its own so that fft_transpose_bench times this code and not a copy of it.
#include <algorithm>
#include <cstdint>
#include <cstring>

namespace toru::fft::detail {

/// dst[a * dst_stride + j] = src[j * src_stride + a] for j < rows, a < cols, in 8 x 8 tiles so that
/// both sides move whole cache lines.
template <class C>
void transpose_tiled(const C* src, std::int64_t src_stride, C* dst, std::int64_t dst_stride, std::int64_t rows,
                     std::int64_t cols) {
  constexpr std::int64_t tile = 8;
  for (std::int64_t jb = 0; jb < rows; jb += tile) {
    const std::int64_t je = std::min(rows, jb + tile);
    for (std::int64_t ab = 0; ab < cols; ab += tile) {
      const std::int64_t ae = std::min(cols, ab + tile);
      for (std::int64_t a = ab; a < ae; ++a) {
        C* d = dst + a * dst_stride;
        for (std::int64_t j = jb; j < je; ++j) d[j] = src[j * src_stride + a];
      }
    }
  }
}

// Rows ahead whose runs a staged gather prefetches: each row is pages away from the last, where
// the hardware's prefetchers do not follow.
inline constexpr std::int64_t staged_prefetch_rows = 16;

/// transpose_tiled where the source rows lie far apart (a stride of pages: the 1D direct window's
/// columns across every rank's rows): each row's run of `cols` points is copied whole into `stage`
/// (rows x cols points), the runs a few rows ahead prefetched, and the stage transposed in cache.
/// Strided 8 x 8 tiles straight from such rows ran at a third of a copy's speed.
template <class C>
void transpose_gathered(const C* src, std::int64_t src_stride, C* dst, std::int64_t dst_stride, std::int64_t rows,
                        std::int64_t cols, C* stage) {
  const auto run = static_cast<std::size_t>(cols) * sizeof(C);
  for (std::int64_t j = 0; j < rows; ++j) {
    if (j + staged_prefetch_rows < rows) {
      const auto* ahead = reinterpret_cast<const char*>(src + (j + staged_prefetch_rows) * src_stride);
      for (std::size_t b = 0; b < run; b += 64) __builtin_prefetch(ahead + b);
    }
    std::memcpy(static_cast<void*>(stage + j * cols), src + j * src_stride, run);
  }
  transpose_tiled(stage, cols, dst, dst_stride, rows, cols);
}

/// transpose_tiled where the destination rows lie far apart: transposed into `stage` (cols x rows
/// points) in cache, then each destination row's run of `rows` points copied whole.
template <class C>
void transpose_scattered(const C* src, std::int64_t src_stride, C* dst, std::int64_t dst_stride, std::int64_t rows,
                         std::int64_t cols, C* stage) {
  transpose_tiled(src, src_stride, stage, rows, rows, cols);
  const auto run = static_cast<std::size_t>(rows) * sizeof(C);
  for (std::int64_t a = 0; a < cols; ++a) std::memcpy(static_cast<void*>(dst + a * dst_stride), stage + a * rows, run);
}

}  // namespace toru::fft::detail
