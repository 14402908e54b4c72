// SPDX-License-Identifier: BSD-3-Clause
// Balanced block split of n items over p parts: the first n % p parts get one more.
#pragma once

#include <cstdint>

namespace toru::fft::detail {

inline std::int64_t part_start(std::int64_t n, int p, int r) {
  const std::int64_t base = n / p, rem = n % p;
  return r * base + (r < rem ? r : rem);
}
inline std::int64_t part_count(std::int64_t n, int p, int r) { return n / p + (r < n % p ? 1 : 0); }

}  // namespace toru::fft::detail
