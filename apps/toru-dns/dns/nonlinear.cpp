// SPDX-License-Identifier: BSD-3-Clause
#include "dns/nonlinear.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "toru/core/mpi.hpp"

namespace toru::dns {

nonlinear_term::nonlinear_term(const spectral_grid& grid, const transform& t)
    : grid_(grid), t_(t), u_(grid.make_real_vector()), w_(grid.make_real_vector()), scratch_(grid.make_scalar()) {}

void nonlinear_term::backward(const scalar_field& in, real_field& out) {
  // The transform may overwrite its input; the solver's fields must survive.
  if (&in != &scratch_) std::copy(in.begin(), in.end(), scratch_.begin());
  const auto t0 = std::chrono::steady_clock::now();
  t_.backward(scratch_.data(), out.data());
  clock_.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void nonlinear_term::forward(real_field& in, scalar_field& out) {
  const auto t0 = std::chrono::steady_clock::now();
  t_.forward(in.data(), out.data());
  clock_.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

velocity_extremes nonlinear_term::evaluate(const vector_field& u, vector_field& out) {
  const auto& kx = grid_.kx();
  const auto& ky = grid_.ky();
  const auto& kz = grid_.kz();
  const std::size_t size = static_cast<std::size_t>(grid_.alloc());
  const cpx I{0, 1};

  for (int a = 0; a < 3; ++a) backward(u[a], u_[a]);
  // omega_hat = i k x u_hat, one component at a time through the scratch buffer.
  for (int a = 0; a < 3; ++a) {
    const int b = (a + 1) % 3, c = (a + 2) % 3;
    const real_field* k[3] = {&kx, &ky, &kz};
    for (std::size_t i = 0; i < size; ++i) scratch_[i] = I * ((*k[b])[i] * u[c][i] - (*k[c])[i] * u[b][i]);
    backward(scratch_, w_[a]);
  }

  // u x omega on the grid, into w_ (each point reads its six values before writing three).
  velocity_extremes ext;
  double umax2 = 0;
  for_box(grid_.real(), [&](const std::array<std::int64_t, 3>&, std::int64_t at) {
    const auto i = static_cast<std::size_t>(at);
    const double ux = u_[0][i], uy = u_[1][i], uz = u_[2][i];
    const double wx = w_[0][i], wy = w_[1][i], wz = w_[2][i];
    w_[0][i] = uy * wz - uz * wy;
    w_[1][i] = uz * wx - ux * wz;
    w_[2][i] = ux * wy - uy * wx;
    umax2 = std::max(umax2, ux * ux + uy * uy + uz * uz);
    ext.sum_abs = std::max(ext.sum_abs, std::abs(ux) + std::abs(uy) + std::abs(uz));
  });
  double local[2] = {umax2, ext.sum_abs}, global[2];
  check_mpi(MPI_Allreduce(local, global, 2, MPI_DOUBLE, MPI_MAX, grid_.comm()), "MPI_Allreduce");
  ext.umax = std::sqrt(global[0]);
  ext.sum_abs = global[1];

  for (int a = 0; a < 3; ++a) forward(w_[a], out[a]);
  // Normalize, dealias and project in one pass.
  const auto& mask = grid_.mask();
  const auto& inv_k2 = grid_.inv_k2();
  for (std::size_t i = 0; i < size; ++i) {
    const cpx nx = out[0][i] * mask[i], ny = out[1][i] * mask[i], nz = out[2][i] * mask[i];
    const cpx kdotn = (kx[i] * nx + ky[i] * ny + kz[i] * nz) * inv_k2[i];
    const double keep = inv_k2[i] > 0 ? 1.0 : 0.0;  // the mean (k = 0) of u x omega is 0 but for round-off
    out[0][i] = keep * (nx - kx[i] * kdotn);
    out[1][i] = keep * (ny - ky[i] * kdotn);
    out[2][i] = keep * (nz - kz[i] * kdotn);
  }
  return ext;
}

}  // namespace toru::dns
