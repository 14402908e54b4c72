// SPDX-License-Identifier: BSD-3-Clause
// Factor choice for the six-step 1D FFT: fast for every 64-bit size (a prime near 2^62 included),
// because plan validation runs it on every rank before any error can be reported.
#pragma once

#include <cstdint>
#include <vector>

namespace toru::fft::detail {

/// The prime factors of n >= 1, with multiplicity, in increasing order (Miller-Rabin and
/// Pollard-Brent rho: about n^(1/4) steps at worst, milliseconds for any 64-bit n).
std::vector<std::uint64_t> prime_factors(std::uint64_t n);

/// The largest divisor of n >= 1 that is at most sqrt(n).
std::int64_t largest_divisor_up_to_sqrt(std::int64_t n);

}  // namespace toru::fft::detail
