// SPDX-License-Identifier: BSD-3-Clause
// Poisson with Neumann walls: -lap u = f on the unit cube, du/dn = 0 on every face, on a
// cell-centred grid (x_i = (i + 1/2) / n). DCT-II along each axis diagonalises the problem: mode
// (k0, k1, k2) is cos(pi k0 x) cos(pi k1 y) cos(pi k2 z), with eigenvalue pi^2 |k|^2. The forward
// r2r transform, a division, and the backward (DCT-III, scaled by the logical size) solve it;
// the mean of u, which Neumann walls leave free, is fixed at zero.
// Checked against the exact solution u = cos(pi x) cos(2 pi y) cos(3 pi z); exits 1 if wrong.
//   poisson_neumann [n0 n1 n2]
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numbers>
#include <vector>

#include <toru/fft/fft3d_r2r.hpp>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::array<std::int64_t, 3> n{24, 17, 30};
  if (argc == 4)
    for (int a = 0; a < 3; ++a) n[a] = std::atoll(argv[a + 1]);
  constexpr double pi = std::numbers::pi;
  auto exact = [&](const std::array<std::int64_t, 3>& g) {
    const double x = (g[0] + 0.5) / n[0], y = (g[1] + 0.5) / n[1], z = (g[2] + 0.5) / n[2];
    return std::cos(pi * x) * std::cos(2 * pi * y) * std::cos(3 * pi * z);
  };
  int status = 0;
  try {
    using toru::fft::r2r_kind;
    toru::fft::fft3d_r2r<double> plan(MPI_COMM_WORLD, n, {r2r_kind::dct2, r2r_kind::dct2, r2r_kind::dct2},
                                      {.output = toru::fft::order::transposed});
    std::vector<double> f(plan.alloc_size()), u(plan.alloc_size());
    const double lap = pi * pi * (1 + 4 + 9);  // -lap of the exact solution, over it
    toru::fft::for_each_point(plan.inbox(), [&](const auto& g, std::int64_t i) { f[i] = lap * exact(g); });
    plan.forward(f.data(), u.data());
    toru::fft::for_each_point(plan.outbox(), [&](const auto& k, std::int64_t i) {
      const double k2 = pi * pi * static_cast<double>(k[0] * k[0] + k[1] * k[1] + k[2] * k[2]);
      u[i] = k2 == 0 ? 0 : u[i] / k2;  // the free constant: zero mean
    });
    plan.backward(u.data(), f.data(), toru::fft::scale::full);
    double err = 0;
    toru::fft::for_each_point(plan.inbox(),
                              [&](const auto& g, std::int64_t i) { err = std::max(err, std::abs(f[i] - exact(g))); });
    MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0)
      std::printf("poisson_neumann %lldx%lldx%lld on a %dx%d grid: max error %.2e\n", static_cast<long long>(n[0]),
                  static_cast<long long>(n[1]), static_cast<long long>(n[2]), plan.grid()[0], plan.grid()[1], err);
    status = err < 1e-10 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "poisson_neumann (rank %d): error: %s\n", rank, e.what());
    status = 2;
  }
  MPI_Finalize();
  return status;
}
