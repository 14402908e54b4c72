// SPDX-License-Identifier: BSD-3-Clause
#include "toru/train/host_sum.hpp"

#include <algorithm>
#include <cstring>

#include "simd_clones.hpp"
#include "toru/core/error.hpp"

namespace toru::train {

TORU_SIMD_CLONES
void sum_in_order(float* out, std::span<const float* const> inputs, std::size_t len, float divisor) {
  if (inputs.empty()) throw error(errc::invalid_argument, "sum_in_order: inputs: expected at least one, got none");
  // 16 KiB of output per block: it stays in L1/L2 while every input streams through once, where
  // copy-then-add-then-divide passes would move the output through memory 2 + inputs times.
  constexpr std::size_t block = 4096;
  for (std::size_t lo = 0; lo < len; lo += block) {
    const std::size_t n = std::min(block, len - lo);
    float* __restrict o = out + lo;
    if (o != inputs[0] + lo) std::memcpy(o, inputs[0] + lo, n * sizeof(float));
    for (std::size_t r = 1; r < inputs.size(); ++r) {
      const float* __restrict g = inputs[r] + lo;
#pragma omp simd
      for (std::size_t k = 0; k < n; ++k) o[k] += g[k];
    }
    if (divisor != 1.0f)
#pragma omp simd
      for (std::size_t k = 0; k < n; ++k) o[k] /= divisor;
  }
}

}  // namespace toru::train
