// SPDX-License-Identifier: BSD-3-Clause
// Poisson in a channel: -lap u = f, periodic in x and z (x_i = i / n0, z_l = l / n2 on [0, 1)),
// Neumann walls du/dy = 0 at y = 0 and 1 (cell-centred y_j = (j + 1/2) / n1), y wall-normal as in
// channel-flow DNS. The real-data mixed transform (r2c along z, DCT-II along y, the DFT along x)
// diagonalises it: mode (k0, k1, k2) has eigenvalue (2 pi k0')^2 + (pi k1)^2 + (2 pi k2)^2, k0' the
// signed frequency of k0 (k2 runs over the Hermitian half 0..n2/2); the mean, which the walls and
// periodicity leave free, is fixed at zero. Checked against the exact solution
// u = cos(4 pi x) cos(2 pi y) sin(6 pi z); exits 1 if wrong.
//   poisson_channel [n0 n1 n2]
#include <mpi.h>

#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <numbers>
#include <vector>

#include <toru/fft/fft3d_mixed.hpp>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::array<std::int64_t, 3> n{24, 17, 30};
  if (argc == 4)
    for (int a = 0; a < 3; ++a) n[a] = std::atoll(argv[a + 1]);
  constexpr double pi = std::numbers::pi;
  auto exact = [&](const std::array<std::int64_t, 3>& g) {
    const double x = static_cast<double>(g[0]) / n[0], y = (g[1] + 0.5) / n[1], z = static_cast<double>(g[2]) / n[2];
    return std::cos(4 * pi * x) * std::cos(2 * pi * y) * std::sin(6 * pi * z);
  };
  auto signed_frequency = [&](std::int64_t k, int axis) {
    return static_cast<double>(2 * k <= n[axis] ? k : k - n[axis]);
  };
  int status = 0;
  try {
    using toru::fft::periodic;
    toru::fft::fft3d_mixed_r2c<double> plan(MPI_COMM_WORLD, n, {periodic, toru::fft::r2r_kind::dct2, periodic},
                                            {.output = toru::fft::order::transposed});
    std::vector<double> f(2 * plan.alloc_size());  // reals, rows padded to 2*(n2/2+1)
    std::vector<std::complex<double>> u(plan.alloc_size());
    const double lap = 16 * pi * pi + 4 * pi * pi + 36 * pi * pi;  // -lap of the exact solution, over it
    toru::fft::for_each_point(plan.inbox(), [&](const auto& g, std::int64_t i) { f[i] = lap * exact(g); });
    plan.forward(f.data(), u.data());
    toru::fft::for_each_point(plan.outbox(), [&](const auto& k, std::int64_t i) {
      const double k0 = 2 * pi * signed_frequency(k[0], 0), k1 = pi * static_cast<double>(k[1]),
                   k2 = 2 * pi * static_cast<double>(k[2]);
      const double eig = k0 * k0 + k1 * k1 + k2 * k2;
      u[i] = eig == 0 ? 0 : u[i] / eig;  // the free constant: zero mean
    });
    plan.backward(u.data(), f.data(), toru::fft::scale::full);
    double err = 0;
    toru::fft::for_each_point(plan.inbox(),
                              [&](const auto& g, std::int64_t i) { err = std::max(err, std::abs(f[i] - exact(g))); });
    MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0)
      std::printf("poisson_channel %lldx%lldx%lld on a %dx%d grid: max error %.2e\n", static_cast<long long>(n[0]),
                  static_cast<long long>(n[1]), static_cast<long long>(n[2]), plan.grid()[0], plan.grid()[1], err);
    status = err < 1e-10 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "poisson_channel (rank %d): error: %s\n", rank, e.what());
    status = 2;
  }
  MPI_Finalize();
  return status;
}
