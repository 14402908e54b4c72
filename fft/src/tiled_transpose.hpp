// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The element transpose under every transpose_step (packing and the node window's write), in a
// header of its own so that fft_transpose_bench times this code and not a copy of it.
#include <algorithm>
#include <cstdint>

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

}  // namespace toru::fft::detail
