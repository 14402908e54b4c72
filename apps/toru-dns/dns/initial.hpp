// SPDX-License-Identifier: BSD-3-Clause
// Initial conditions. Each fills the solver's spectral velocity (dealiased, divergence-free) and
// is independent of the decomposition: the same arguments give the same field on any rank count.
#pragma once

#include <cstdint>
#include <functional>

#include "dns/spectral.hpp"

namespace toru::dns {

/// A velocity given pointwise: f(x, y, z) -> (u_x, u_y, u_z).
using velocity_function = std::function<std::array<double, 3>(double, double, double)>;

/// Collective. Samples f on the grid and transforms (projected and dealiased unless raw).
void from_function(const spectral_grid& grid, const transform& t, const velocity_function& f, vector_field& u,
                   bool raw = false);

/// The Taylor-Green vortex with U0 = 1, L = 1:
///   u = sin x cos y cos z,  v = -cos x sin y cos z,  w = 0   (E = 1/8).
void taylor_green(const spectral_grid& grid, const transform& t, vector_field& u);

/// A random isotropic solenoidal field with E(k) proportional to k^4 exp(-2 (k/k_peak)^2),
/// normalized to energy 3/2 (u' = 1). Random numbers are drawn per global mode from `seed`, so the
/// field does not depend on the decomposition.
void random_isotropic(const spectral_grid& grid, const transform& t, double k_peak, std::uint64_t seed,
                      vector_field& u);

}  // namespace toru::dns
