#include "dns/slice.hpp"

#include <fftw3.h>

#include <algorithm>
#include <cmath>
#include <cstring>

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

slice_tap::slice_tap(const spectral_grid& grid, int root)
    : grid_(grid),
      root_(root),
      is_root_(mpi_rank(grid.comm()) == root),
      nn_(static_cast<std::size_t>(grid.n() * grid.n())),
      shells_(static_cast<std::size_t>(std::lround(std::sqrt(3.0) * static_cast<double>(grid.n()) / 2)) + 1),
      send_(2 * nn_ + shells_) {
  // The shell and plane cell of each mode never change: a sqrt per mode per streamed step was most
  // of the tap's time on the critical path.
  const std::int64_t n = grid.n();
  const auto& w = grid.weight();
  const auto& k2 = grid.k2();
  for_box(grid.spec(), [&](const std::array<std::int64_t, 3>& g, std::int64_t off) {
    const auto o = static_cast<std::size_t>(off);
    if (w[o] == 0) return;
    const auto sh = std::min(shells_ - 1, static_cast<std::size_t>(std::lround(std::sqrt(k2[o]))));
    modes_.push_back({static_cast<std::uint32_t>(o), static_cast<std::uint32_t>(g[0] * n + g[1]),
                      static_cast<std::uint32_t>(sh), w[o]});
  });
  if (!is_root_) return;
  recv_.resize(send_.size());
  work_.resize(nn_);
  auto* io = reinterpret_cast<fftw_complex*>(work_.data());
  const int ni = static_cast<int>(n);
  plan_ = fftw_plan_dft_2d(ni, ni, io, io, FFTW_BACKWARD, FFTW_ESTIMATE);
  if (!plan_) throw error(errc::fftw, "slice_tap: FFTW could not plan the 2-D inverse transform");
}

slice_tap::~slice_tap() {
  if (pending_) MPI_Wait(&req_, MPI_STATUS_IGNORE);
  if (plan_) fftw_destroy_plan(plan_);
}

void slice_tap::start(const vector_field& u, std::int64_t step, double t) {
  if (pending_) throw error(errc::internal, "slice_tap::start: the previous reduction was not collected");
  std::fill(send_.begin(), send_.end(), 0.0);
  auto* plane = reinterpret_cast<cpx*>(send_.data());
  double* ek = send_.data() + 2 * nn_;
  for (const auto& m : modes_) {
    const cpx* c[3] = {&u[0][m.offset], &u[1][m.offset], &u[2][m.offset]};
    plane[m.cell] += m.weight * *c[0];
    ek[m.shell] += 0.5 * m.weight * (std::norm(*c[0]) + std::norm(*c[1]) + std::norm(*c[2]));
  }
  check_mpi(MPI_Ireduce(send_.data(), is_root_ ? recv_.data() : nullptr, static_cast<int>(send_.size()), MPI_DOUBLE,
                        MPI_SUM, root_, grid_.comm(), &req_),
            "MPI_Ireduce");
  pending_ = true;
  step_ = step;
  t_ = t;
}

std::optional<slice_tap::frames> slice_tap::collect() {
  if (!pending_) return std::nullopt;
  check_mpi(MPI_Wait(&req_, MPI_STATUS_IGNORE), "MPI_Wait");
  pending_ = false;
  frames f;
  f.step = step_;
  f.t = t_;
  if (!is_root_) return f;
  std::memcpy(static_cast<void*>(work_.data()), recv_.data(), nn_ * sizeof(cpx));
  fftw_execute(plan_);
  f.plane.resize(nn_);
  for (std::size_t i = 0; i < nn_; ++i) f.plane[i] = static_cast<float>(work_[i].real());
  f.spectrum.assign(recv_.begin() + static_cast<std::ptrdiff_t>(2 * nn_), recv_.end());
  return f;
}

}  // namespace toru::dns
