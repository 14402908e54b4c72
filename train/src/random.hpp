// SPDX-License-Identifier: BSD-3-Clause
// Counter-based random numbers: a value is a pure function of its coordinates (no generator state),
// so dropout masks and initial weights do not depend on thread count, rank count or call order.
#pragma once

#include <cstdint>

namespace toru::train::detail {

// splitmix64's finaliser: a bijective mix with full avalanche.
constexpr std::uint64_t mix64(std::uint64_t z) noexcept {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

constexpr std::uint64_t hash(std::uint64_t a, std::uint64_t b, std::uint64_t c = 0, std::uint64_t d = 0,
                             std::uint64_t e = 0) noexcept {
  return mix64(mix64(mix64(mix64(mix64(a) ^ b) ^ c) ^ d) ^ e);
}

/// Uniform in [0, 1) with 24 random bits (exact in float).
constexpr float uniform01(std::uint64_t h) noexcept { return static_cast<float>(h >> 40) * 0x1.0p-24f; }

}  // namespace toru::train::detail
