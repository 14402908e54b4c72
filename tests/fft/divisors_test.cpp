// SPDX-License-Identifier: BSD-3-Clause
// The six-step factor choice (fft/src/divisors.cpp) against brute force, and on the 64-bit sizes
// whose trial division took seconds to minutes (they must now take milliseconds).
#include <gtest/gtest.h>

#include <cstdint>

#include "divisors.hpp"

namespace {

using toru::fft::detail::largest_divisor_up_to_sqrt;
using toru::fft::detail::prime_factors;

TEST(Divisors, MatchBruteForce) {
  for (std::int64_t n = 1; n <= 20000; ++n) {
    std::int64_t best = 1;
    for (std::int64_t d = 1; d * d <= n; ++d)
      if (n % d == 0) best = d;
    ASSERT_EQ(largest_divisor_up_to_sqrt(n), best) << "n = " << n;
    std::uint64_t product = 1;
    for (std::uint64_t p : prime_factors(static_cast<std::uint64_t>(n))) {
      for (std::uint64_t d = 2; d * d <= p; ++d) ASSERT_NE(p % d, 0u) << p << " is not prime (n = " << n << ")";
      product *= p;
    }
    ASSERT_EQ(product, static_cast<std::uint64_t>(n));
  }
}

TEST(Divisors, LargeSizes) {
  // LLONG_MAX = 7^2 * 73 * 127 * 337 * 92737 * 649657.
  EXPECT_EQ(largest_divisor_up_to_sqrt(INT64_MAX), 2323823089);
  // The Mersenne prime 2^61 - 1: no divisor but 1.
  EXPECT_EQ(largest_divisor_up_to_sqrt((std::int64_t{1} << 61) - 1), 1);
  // Two primes just below 2^31 (Pollard rho's worst case here), and the square of one.
  EXPECT_EQ(largest_divisor_up_to_sqrt(std::int64_t{2147483629} * 2147483647), 2147483629);
  EXPECT_EQ(largest_divisor_up_to_sqrt(std::int64_t{2147483647} * 2147483647), 2147483647);
  // Powers of two.
  EXPECT_EQ(largest_divisor_up_to_sqrt(std::int64_t{1} << 62), std::int64_t{1} << 31);
  EXPECT_EQ(largest_divisor_up_to_sqrt(std::int64_t{1} << 61), std::int64_t{1} << 30);
}

}  // namespace
