// SPDX-License-Identifier: BSD-3-Clause
// The nonlinear term of incompressible Navier-Stokes in rotational form,
//   N(u) = P[ u x omega ],   omega = curl u,
// with P the projection onto divergence-free fields (it absorbs the pressure and |u|^2/2). The
// product is formed on the grid and dealiased by the 2/3 rule. Costs 6 backward and 3 forward
// transforms, made as three vector transforms (u, omega back; u x omega forward): batched
// (transform::batched()), one plan and one call for all three components. Since u . (u x omega) = 0 at every
// grid point, <u, N(u)> = 0 to round-off for a dealiased, divergence-free u: the spatial discretisation conserves
// energy.
#pragma once

#include "dns/spectral.hpp"

namespace toru::dns {

/// Seconds spent in transforms (transposes included) since construction.
struct fft_clock {
  double seconds = 0;
};

/// Physical-space velocity extremes of the field N(u) was evaluated at.
struct velocity_extremes {
  double umax = 0;     // max |u|
  double sum_abs = 0;  // max (|u_x| + |u_y| + |u_z|), for the CFL condition
};

class nonlinear_term {
 public:
  nonlinear_term(const spectral_grid& grid, const transform& t);

  /// Collective. out <- N(u); u is unchanged. Returns the velocity extremes (over all ranks).
  velocity_extremes evaluate(const vector_field& u, vector_field& out);

  double fft_seconds() const { return clock_.seconds; }

 private:
  // Vector fields in the transform's layout (transform::component_stride()), to and from scratch_.
  void backward(real_field& out);
  void forward(real_field& in);

  const spectral_grid& grid_;
  const transform& t_;
  // Component c of offset i: real at i * point_ + c * real_comp_, spectral at i * point_ + c * spec_comp_.
  std::size_t point_, real_comp_, spec_comp_;
  real_field u_, w_;
  scalar_field scratch_;
  fft_clock clock_;
};

}  // namespace toru::dns
