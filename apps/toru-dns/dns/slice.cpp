#include "dns/slice.hpp"

#include <fftw3.h>

#include "toru/core/error.hpp"
#include "toru/core/mpi.hpp"

namespace toru::dns {

std::vector<float> plane_z0(const spectral_grid& grid, const scalar_field& u_hat, int root) {
  const std::int64_t n = grid.n();
  const auto nn = static_cast<std::size_t>(n * n);
  std::vector<cpx> plane(nn), sum;
  const auto& w = grid.weight();
  for_box(grid.spec(), [&](const std::array<std::int64_t, 3>& g, std::int64_t off) {
    const auto o = static_cast<std::size_t>(off);
    if (w[o] != 0) plane[static_cast<std::size_t>(g[0] * n + g[1])] += w[o] * u_hat[o];
  });
  const bool is_root = mpi_rank(grid.comm()) == root;
  if (is_root) sum.resize(nn);
  check_mpi(MPI_Reduce(plane.data(), sum.data(), static_cast<int>(2 * nn), MPI_DOUBLE, MPI_SUM, root, grid.comm()),
            "MPI_Reduce");
  if (!is_root) return {};
  // u(x, y, 0) = Re sum_{kx, ky} P(kx, ky) exp(i (kx x + ky y)): FFTW's unnormalised backward transform.
  auto* io = reinterpret_cast<fftw_complex*>(sum.data());
  const fftw_plan p = fftw_plan_dft_2d(static_cast<int>(n), static_cast<int>(n), io, io, FFTW_BACKWARD, FFTW_ESTIMATE);
  if (!p) throw error(errc::fftw, "plane_z0: FFTW could not plan the 2-D inverse transform");
  fftw_execute(p);
  fftw_destroy_plan(p);
  std::vector<float> out(nn);
  for (std::size_t i = 0; i < nn; ++i) out[i] = static_cast<float>(sum[i].real());
  return out;
}

}  // namespace toru::dns
