// SPDX-License-Identifier: BSD-3-Clause
#include "dns/initial.hpp"

#include <cmath>
#include <numbers>

namespace toru::dns {
namespace {

std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Uniform in [-1, 1) from a 64-bit hash.
double uniform(std::uint64_t h) { return static_cast<double>(h >> 11) * 0x1.0p-52 - 1.0; }

}  // namespace

void from_function(const spectral_grid& grid, const transform& t, const velocity_function& f, vector_field& u,
                   bool raw) {
  auto r = grid.make_real_vector();
  const double h = 2 * std::numbers::pi / static_cast<double>(grid.n());
  for_box(grid.real(), [&](const std::array<std::int64_t, 3>& g, std::int64_t at) {
    const auto v = f(h * static_cast<double>(g[0]), h * static_cast<double>(g[1]), h * static_cast<double>(g[2]));
    for (int a = 0; a < 3; ++a) r[a][static_cast<std::size_t>(at)] = v[a];
  });
  const double norm = 1.0 / std::pow(static_cast<double>(grid.n()), 3);
  for (int a = 0; a < 3; ++a) {
    t.forward(r[a].data(), u[a].data());
    for (auto& x : u[a]) x *= norm;
  }
  if (!raw) grid.project(u);
}

void taylor_green(const spectral_grid& grid, const transform& t, vector_field& u) {
  from_function(
      grid, t,
      [](double x, double y, double z) -> std::array<double, 3> {
        return {std::sin(x) * std::cos(y) * std::cos(z), -std::cos(x) * std::sin(y) * std::cos(z), 0.0};
      },
      u);
}

void random_isotropic(const spectral_grid& grid, const transform& t, double k_peak, std::uint64_t seed,
                      vector_field& u) {
  const std::int64_t n = grid.n();
  const auto nh = static_cast<std::uint64_t>(n / 2 + 1);
  for_box(grid.spec(), [&](const std::array<std::int64_t, 3>& g, std::int64_t at) {
    const auto i = static_cast<std::size_t>(at);
    const double k = std::sqrt(grid.k2()[i]);
    // Amplitude per mode: E(k) spread over the shell's ~4 pi k^2 modes.
    const double amp =
        k > 0 ? std::sqrt(std::pow(k, 4) * std::exp(-2 * (k / k_peak) * (k / k_peak)) / (4 * std::numbers::pi * k * k))
              : 0.0;
    const std::uint64_t index =
        (static_cast<std::uint64_t>(g[0]) * static_cast<std::uint64_t>(n) + static_cast<std::uint64_t>(g[1])) * nh +
        static_cast<std::uint64_t>(g[2]);
    for (std::uint64_t a = 0; a < 3; ++a) {
      const std::uint64_t h = mix(mix(seed) ^ (index * 3 + a));
      u[a][i] = amp * cpx{uniform(h), uniform(mix(h))};
    }
  });
  // The half spectrum drawn above is not Hermitian on the k_z = 0 plane; a round trip through
  // the grid keeps the real part of the field, which is.
  auto r = grid.make_real_vector();
  const double norm = 1.0 / std::pow(static_cast<double>(n), 3);
  for (int a = 0; a < 3; ++a) {
    t.backward(u[a].data(), r[a].data());
    t.forward(r[a].data(), u[a].data());
    for (auto& x : u[a]) x *= norm;
  }
  grid.project(u);
  const double e = grid.stats(u).energy;
  const double s = e > 0 ? std::sqrt(1.5 / e) : 0.0;
  for (auto& c : u)
    for (auto& x : c) x *= s;
}

}  // namespace toru::dns
