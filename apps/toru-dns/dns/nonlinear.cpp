// SPDX-License-Identifier: BSD-3-Clause
#include "dns/nonlinear.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "toru/core/mpi.hpp"

namespace toru::dns {

nonlinear_term::nonlinear_term(const spectral_grid& grid, const transform& t)
    : grid_(grid),
      t_(t),
      point_(t.batched() ? 3 : 1),
      real_comp_(t.batched() ? 1 : static_cast<std::size_t>(2 * t.component_stride())),
      spec_comp_(t.batched() ? 1 : static_cast<std::size_t>(t.component_stride())),
      u_(static_cast<std::size_t>(3 * 2 * t.component_stride())),
      w_(u_.size()),
      scratch_(static_cast<std::size_t>(3 * t.component_stride())) {}

void nonlinear_term::backward(real_field& out) {
  const auto t0 = std::chrono::steady_clock::now();
  t_.backward_vector(scratch_.data(), out.data());
  clock_.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void nonlinear_term::forward(real_field& in) {
  const auto t0 = std::chrono::steady_clock::now();
  t_.forward_vector(in.data(), scratch_.data());
  clock_.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

velocity_extremes nonlinear_term::evaluate(const vector_field& u, vector_field& out) {
  const auto& kx = grid_.kx();
  const auto& ky = grid_.ky();
  const auto& kz = grid_.kz();
  const std::size_t size = static_cast<std::size_t>(grid_.alloc());
  const cpx I{0, 1};

  const std::size_t p = point_, rc = real_comp_, sc = spec_comp_;
  // The transform may overwrite its input; the solver's fields must survive.
  for (int a = 0; a < 3; ++a)
    for (std::size_t i = 0; i < size; ++i) scratch_[i * p + a * sc] = u[a][i];
  backward(u_);
  // omega_hat = i k x u_hat.
  for (std::size_t i = 0; i < size; ++i) {
    const cpx ux = u[0][i], uy = u[1][i], uz = u[2][i];
    scratch_[i * p] = I * (ky[i] * uz - kz[i] * uy);
    scratch_[i * p + sc] = I * (kz[i] * ux - kx[i] * uz);
    scratch_[i * p + 2 * sc] = I * (kx[i] * uy - ky[i] * ux);
  }
  backward(w_);

  // u x omega on the grid, into w_ (each point reads its six values before writing three).
  velocity_extremes ext;
  double umax2 = 0;
  for_box(grid_.real(), [&](const std::array<std::int64_t, 3>&, std::int64_t at) {
    const auto i = static_cast<std::size_t>(at) * p;
    const double ux = u_[i], uy = u_[i + rc], uz = u_[i + 2 * rc];
    const double wx = w_[i], wy = w_[i + rc], wz = w_[i + 2 * rc];
    w_[i] = uy * wz - uz * wy;
    w_[i + rc] = uz * wx - ux * wz;
    w_[i + 2 * rc] = ux * wy - uy * wx;
    umax2 = std::max(umax2, ux * ux + uy * uy + uz * uz);
    ext.sum_abs = std::max(ext.sum_abs, std::abs(ux) + std::abs(uy) + std::abs(uz));
  });
  double local[2] = {umax2, ext.sum_abs}, global[2];
  check_mpi(MPI_Allreduce(local, global, 2, MPI_DOUBLE, MPI_MAX, grid_.comm()), "MPI_Allreduce");
  ext.umax = std::sqrt(global[0]);
  ext.sum_abs = global[1];

  forward(w_);
  // Normalize, dealias and project in one pass.
  const auto& mask = grid_.mask();
  const auto& inv_k2 = grid_.inv_k2();
  for (std::size_t i = 0; i < size; ++i) {
    const cpx nx = scratch_[i * p] * mask[i], ny = scratch_[i * p + sc] * mask[i],
              nz = scratch_[i * p + 2 * sc] * mask[i];
    const cpx kdotn = (kx[i] * nx + ky[i] * ny + kz[i] * nz) * inv_k2[i];
    const double keep = inv_k2[i] > 0 ? 1.0 : 0.0;  // the mean (k = 0) of u x omega is 0 but for round-off
    out[0][i] = keep * (nx - kx[i] * kdotn);
    out[1][i] = keep * (ny - ky[i] * kdotn);
    out[2][i] = keep * (nz - kz[i] * kdotn);
  }
  return ext;
}

}  // namespace toru::dns
