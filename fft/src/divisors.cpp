// SPDX-License-Identifier: BSD-3-Clause
#include "divisors.hpp"

#include <algorithm>
#include <numeric>

namespace toru::fft::detail {

namespace {

__extension__ using u128 = unsigned __int128;

std::uint64_t mul_mod(std::uint64_t a, std::uint64_t b, std::uint64_t m) {
  return static_cast<std::uint64_t>(static_cast<u128>(a) * b % m);
}

std::uint64_t pow_mod(std::uint64_t a, std::uint64_t e, std::uint64_t m) {
  std::uint64_t r = 1;
  for (a %= m; e; e >>= 1, a = mul_mod(a, a, m))
    if (e & 1) r = mul_mod(r, a, m);
  return r;
}

// Deterministic for every 64-bit n with these twelve bases.
bool is_prime(std::uint64_t n) {
  if (n < 2) return false;
  constexpr std::uint64_t bases[] = {2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37};
  for (std::uint64_t p : bases)
    if (n % p == 0) return n == p;
  std::uint64_t d = n - 1;
  int s = 0;
  for (; d % 2 == 0; d /= 2) ++s;
  for (std::uint64_t a : bases) {
    std::uint64_t x = pow_mod(a, d, n);
    if (x == 1 || x == n - 1) continue;
    bool composite = true;
    for (int r = 1; r < s && composite; ++r) {
      x = mul_mod(x, x, n);
      if (x == n - 1) composite = false;
    }
    if (composite) return false;
  }
  return true;
}

// A non-trivial factor of an odd composite n (Brent's variant, products of 128 steps per gcd).
std::uint64_t rho(std::uint64_t n) {
  for (std::uint64_t c = 1;; ++c) {
    auto f = [&](std::uint64_t x) { return (mul_mod(x, x, n) + c) % n; };
    std::uint64_t y = 2, x = 2, ys = 2, q = 1, g = 1;
    constexpr std::uint64_t m = 128;
    for (std::uint64_t r = 1; g == 1; r *= 2) {
      x = y;
      for (std::uint64_t i = 0; i < r; ++i) y = f(y);
      for (std::uint64_t k = 0; k < r && g == 1; k += m) {
        ys = y;
        for (std::uint64_t i = 0; i < std::min(m, r - k); ++i) {
          y = f(y);
          q = mul_mod(q, x > y ? x - y : y - x, n);
        }
        g = std::gcd(q, n);
      }
    }
    if (g == n) {
      do {
        ys = f(ys);
        g = std::gcd(x > ys ? x - ys : ys - x, n);
      } while (g == 1);
    }
    if (g != n) return g;
  }
}

void factor_into(std::uint64_t n, std::vector<std::uint64_t>& out) {
  if (n == 1) return;
  if (is_prime(n)) {
    out.push_back(n);
    return;
  }
  const std::uint64_t d = rho(n);
  factor_into(d, out);
  factor_into(n / d, out);
}

}  // namespace

std::vector<std::uint64_t> prime_factors(std::uint64_t n) {
  std::vector<std::uint64_t> out;
  for (std::uint64_t p : {2u, 3u, 5u, 7u})
    while (n % p == 0) {
      out.push_back(p);
      n /= p;
    }
  factor_into(n, out);
  std::sort(out.begin(), out.end());
  return out;
}

std::int64_t largest_divisor_up_to_sqrt(std::int64_t n) {
  const auto un = static_cast<std::uint64_t>(n);
  // Every divisor from the prime powers; a 64-bit n has at most 103680 of them.
  std::vector<std::uint64_t> divisors{1};
  const std::vector<std::uint64_t> primes = prime_factors(un);
  for (std::size_t i = 0; i < primes.size();) {
    std::size_t j = i;
    while (j < primes.size() && primes[j] == primes[i]) ++j;
    const std::size_t count = divisors.size();
    std::uint64_t power = 1;
    for (std::size_t e = i; e < j; ++e) {
      power *= primes[i];
      for (std::size_t k = 0; k < count; ++k) divisors.push_back(divisors[k] * power);
    }
    i = j;
  }
  std::uint64_t best = 1;
  for (std::uint64_t d : divisors)
    if (static_cast<u128>(d) * d <= un) best = std::max(best, d);
  return static_cast<std::int64_t>(best);
}

}  // namespace toru::fft::detail
