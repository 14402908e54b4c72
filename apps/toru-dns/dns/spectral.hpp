// SPDX-License-Identifier: BSD-3-Clause
// The spectral grid of a (2 pi)^3 periodic box: wavenumbers of this rank's modes, the 2/3-rule
// dealiasing mask, the Hermitian weights of the half spectrum, and the quadratic diagnostics.
//
// Conventions: axis 0 is x, axis 1 is y, axis 2 is z (the halved axis of the r2c transform);
// grid point (i, j, l) sits at (2 pi i/n, 2 pi j/n, 2 pi l/n). A spectral field holds
// u_hat(k) = FFT(u)(k) / n^3, so u(x) = sum_k u_hat(k) exp(i k.x) over the full spectrum and
// the mean of |u|^2 is sum_k |u_hat(k)|^2 (the half spectrum counts k_z > 0 twice).
#pragma once

#include <mpi.h>

#include <array>
#include <cstdint>
#include <vector>

#include "dns/aligned.hpp"
#include "dns/transform.hpp"

namespace toru::dns {

/// Visits every point of a box in memory order: f(global index {i0, i1, i2}, memory offset).
template <class F>
void for_box(const fft::box3d& b, F&& f) {
  const auto o = b.order;
  std::array<std::int64_t, 3> g{};
  for (std::int64_t x = 0; x < b.size[o[0]]; ++x)
    for (std::int64_t y = 0; y < b.size[o[1]]; ++y) {
      const std::int64_t row = (x * b.size[o[1]] + y) * b.row_stride;
      g[o[0]] = b.low[o[0]] + x;
      g[o[1]] = b.low[o[1]] + y;
      for (std::int64_t z = 0; z < b.size[o[2]]; ++z) {
        g[o[2]] = b.low[o[2]] + z;
        f(g, row + z);
      }
    }
}

using scalar_field = aligned_vector<cpx>;
using real_field = aligned_vector<double>;
/// Three spectral components (x, y, z), each transform::alloc() elements.
using vector_field = std::array<scalar_field, 3>;

/// Quadratic diagnostics of a spectral velocity field, reduced over the communicator.
struct field_stats {
  double energy = 0;     // E = <|u|^2>/2
  double enstrophy = 0;  // Z = <|omega|^2>/2 (eps = 2 nu Z)
  double divmax = 0;     // max |k.u_hat| / max |k||u_hat|  (0 for a zero field)
};

class spectral_grid {
 public:
  spectral_grid(MPI_Comm comm, std::int64_t n, const transform& t);

  MPI_Comm comm() const { return comm_; }
  std::int64_t n() const { return n_; }
  const fft::box3d& spec() const { return spec_; }
  const fft::box3d& real() const { return real_; }
  std::int64_t alloc() const { return alloc_; }
  /// Largest |k_i| kept by the 2/3 rule (3 |k_i| < n).
  std::int64_t kmax() const { return kmax_; }

  /// Per memory offset of the spectral box (size alloc()): wavenumber components, |k|^2, the
  /// dealiasing mask times 1/n^3 (the forward transform's normalization), the projection's 1/|k|^2
  /// (0 at k = 0) and the Hermitian weight (1 on the planes k_z = 0 and k_z = n/2, else 2; 0 on
  /// padding).
  const real_field& kx() const { return k_[0]; }
  const real_field& ky() const { return k_[1]; }
  const real_field& kz() const { return k_[2]; }
  const real_field& k2() const { return k2_; }
  const real_field& mask() const { return mask_; }
  const real_field& inv_k2() const { return inv_k2_; }
  const real_field& weight() const { return weight_; }

  vector_field make_vector() const;
  scalar_field make_scalar() const { return scalar_field(static_cast<std::size_t>(alloc_)); }
  std::array<real_field, 3> make_real_vector() const;

  /// Collective. E, Z and the divergence measure of u.
  field_stats stats(const vector_field& u) const;
  /// Collective. Shell-summed spectrum E(k), k = 0 .. round(sqrt(3) n/2); every rank gets it.
  std::vector<double> spectrum(const vector_field& u) const;
  /// Removes the part of u along k (u <- u - k (k.u)/|k|^2), dealiases (mask without 1/n^3) and
  /// zeroes the mean.
  void project(vector_field& u) const;
  /// Collective. An exact, decomposition-independent digest of the field bits (XOR of a hash of
  /// every mode's global index and value): equal digests mean bit-identical fields.
  std::uint64_t digest(const vector_field& u) const;

 private:
  MPI_Comm comm_;
  std::int64_t n_, alloc_, kmax_;
  fft::box3d spec_, real_;
  std::array<real_field, 3> k_;
  real_field k2_, mask_, inv_k2_, weight_;
};

/// The signed wavenumber of global index i on an axis of n points.
inline std::int64_t wavenumber(std::int64_t i, std::int64_t n) { return 2 * i <= n ? i : i - n; }

}  // namespace toru::dns
