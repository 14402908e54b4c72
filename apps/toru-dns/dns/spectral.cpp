// SPDX-License-Identifier: BSD-3-Clause
#include "dns/spectral.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

#include "toru/core/mpi.hpp"

namespace toru::dns {
namespace {

std::uint64_t mix(std::uint64_t x) {  // splitmix64's finalizer
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

spectral_grid::spectral_grid(MPI_Comm comm, std::int64_t n, const transform& t)
    : comm_(comm), n_(n), alloc_(t.alloc()), kmax_((n - 1) / 3), spec_(t.spec_box()), real_(t.real_box()) {
  const auto size = static_cast<std::size_t>(alloc_);
  for (auto& k : k_) k.assign(size, 0.0);
  k2_.assign(size, 0.0);
  mask_.assign(size, 0.0);
  inv_k2_.assign(size, 0.0);
  weight_.assign(size, 0.0);
  const double norm = 1.0 / (static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n));
  for_box(spec_, [&](const std::array<std::int64_t, 3>& g, std::int64_t at) {
    const auto i = static_cast<std::size_t>(at);
    const std::array<std::int64_t, 3> k{wavenumber(g[0], n), wavenumber(g[1], n), g[2]};
    for (int a = 0; a < 3; ++a) k_[a][i] = static_cast<double>(k[a]);
    const double kk = static_cast<double>(k[0] * k[0] + k[1] * k[1] + k[2] * k[2]);
    k2_[i] = kk;
    inv_k2_[i] = kk > 0 ? 1.0 / kk : 0.0;
    // 2/3 rule: a product of two modes with |k_i| <= kmax cannot alias onto |k_i| <= kmax when
    // 3 kmax < n. This also drops the Nyquist planes, whose modes have no sign.
    const bool keep = 3 * std::abs(k[0]) < n && 3 * std::abs(k[1]) < n && 3 * k[2] < n;
    mask_[i] = keep ? norm : 0.0;
    weight_[i] = (g[2] == 0 || 2 * g[2] == n) ? 1.0 : 2.0;
  });
}

vector_field spectral_grid::make_vector() const { return {make_scalar(), make_scalar(), make_scalar()}; }

std::array<real_field, 3> spectral_grid::make_real_vector() const {
  const auto size = static_cast<std::size_t>(2 * alloc_);
  return {real_field(size), real_field(size), real_field(size)};
}

field_stats spectral_grid::stats(const vector_field& u) const {
  double sums[2] = {0, 0}, maxes[2] = {0, 0};
  for (std::size_t i = 0; i < static_cast<std::size_t>(alloc_); ++i) {
    const double w = weight_[i];
    if (w == 0) continue;
    const double e = std::norm(u[0][i]) + std::norm(u[1][i]) + std::norm(u[2][i]);
    sums[0] += 0.5 * w * e;
    sums[1] += 0.5 * w * k2_[i] * e;
    const cpx div = k_[0][i] * u[0][i] + k_[1][i] * u[1][i] + k_[2][i] * u[2][i];
    maxes[0] = std::max(maxes[0], std::abs(div));
    maxes[1] = std::max(maxes[1], std::sqrt(k2_[i] * e));
  }
  double gs[2], gm[2];
  check_mpi(MPI_Allreduce(sums, gs, 2, MPI_DOUBLE, MPI_SUM, comm_), "MPI_Allreduce");
  check_mpi(MPI_Allreduce(maxes, gm, 2, MPI_DOUBLE, MPI_MAX, comm_), "MPI_Allreduce");
  return {.energy = gs[0], .enstrophy = gs[1], .divmax = gm[1] > 0 ? gm[0] / gm[1] : 0.0};
}

std::vector<double> spectral_grid::spectrum(const vector_field& u) const {
  const auto shells = static_cast<std::size_t>(std::lround(std::sqrt(3.0) * static_cast<double>(n_) / 2)) + 1;
  std::vector<double> local(shells, 0.0), global(shells, 0.0);
  for (std::size_t i = 0; i < static_cast<std::size_t>(alloc_); ++i) {
    if (weight_[i] == 0) continue;
    const auto s = std::min(shells - 1, static_cast<std::size_t>(std::lround(std::sqrt(k2_[i]))));
    local[s] += 0.5 * weight_[i] * (std::norm(u[0][i]) + std::norm(u[1][i]) + std::norm(u[2][i]));
  }
  check_mpi(MPI_Allreduce(local.data(), global.data(), static_cast<int>(shells), MPI_DOUBLE, MPI_SUM, comm_),
            "MPI_Allreduce");
  return global;
}

void spectral_grid::project(vector_field& u) const {
  for (std::size_t i = 0; i < static_cast<std::size_t>(alloc_); ++i) {
    const cpx kdotu = (k_[0][i] * u[0][i] + k_[1][i] * u[1][i] + k_[2][i] * u[2][i]) * inv_k2_[i];
    const double keep = (mask_[i] != 0 && k2_[i] > 0) ? 1.0 : 0.0;
    for (int a = 0; a < 3; ++a) u[a][i] = keep * (u[a][i] - k_[a][i] * kdotu);
  }
}

std::uint64_t spectral_grid::digest(const vector_field& u) const {
  std::uint64_t local = 0;
  const auto nh = static_cast<std::uint64_t>(n_ / 2 + 1), n = static_cast<std::uint64_t>(n_);
  for_box(spec_, [&](const std::array<std::int64_t, 3>& g, std::int64_t at) {
    const auto i = static_cast<std::size_t>(at);
    const std::uint64_t index = (static_cast<std::uint64_t>(g[0]) * n + static_cast<std::uint64_t>(g[1])) * nh +
                                static_cast<std::uint64_t>(g[2]);
    for (std::uint64_t a = 0; a < 3; ++a) {
      const std::uint64_t h = mix(index * 3 + a);
      local ^= mix(h ^ std::bit_cast<std::uint64_t>(u[a][i].real())) ^
               mix(~h ^ std::bit_cast<std::uint64_t>(u[a][i].imag()));
    }
  });
  std::uint64_t global = 0;
  check_mpi(MPI_Allreduce(&local, &global, 1, MPI_UINT64_T, MPI_BXOR, comm_), "MPI_Allreduce");
  return global;
}

}  // namespace toru::dns
