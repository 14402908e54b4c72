// SPDX-License-Identifier: BSD-3-Clause
// Shared helpers for the fft tests: reproducible inputs addressed by global index (so every rank
// can build the whole array without a gather), serial FFTW references, box addressing and
// global error norms.
#pragma once

#include <fftw3.h>
#include <mpi.h>

#include <array>
#include <cmath>
#include <complex>
#include <cstdint>
#include <functional>
#include <vector>

#include "toru/fft/options.hpp"

namespace toru::test {

/// A reproducible value in [-1, 1) from an index and a seed (splitmix64).
inline double noise(std::uint64_t i, std::uint64_t seed) {
  std::uint64_t z = i * 0x9E3779B97F4A7C15ull + seed * 0xBF58476D1CE4E5B9ull + 0x94D049BB133111EBull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-52 - 1.0;
}
inline std::complex<double> cnoise(std::uint64_t i, std::uint64_t seed) {
  return {noise(2 * i, seed), noise(2 * i + 1, seed)};
}

/// Calls f(i0, i1, i2, local_index) for every point of the box, in memory order.
inline void for_each(const toru::fft::box3d& b,
                     const std::function<void(std::array<std::int64_t, 3>, std::int64_t)>& f) {
  toru::fft::for_each_point(b, f);
}

inline std::int64_t flat(std::array<std::int64_t, 3> n, std::array<std::int64_t, 3> i) {
  return (i[0] * n[1] + i[1]) * n[2] + i[2];
}

/// Serial complex 3D DFT of the whole array (sign -1 forward, +1 backward).
inline std::vector<std::complex<double>> serial_dft3(std::array<std::int64_t, 3> n, std::vector<std::complex<double>> a,
                                                     int sign) {
  std::vector<std::complex<double>> out(a.size());
  fftw_plan p = fftw_plan_dft_3d(static_cast<int>(n[0]), static_cast<int>(n[1]), static_cast<int>(n[2]),
                                 reinterpret_cast<fftw_complex*>(a.data()), reinterpret_cast<fftw_complex*>(out.data()),
                                 sign, FFTW_ESTIMATE);
  fftw_execute(p);
  fftw_destroy_plan(p);
  return out;
}

/// Serial r2c 3D DFT: n0 x n1 x (n2/2+1) coefficients.
inline std::vector<std::complex<double>> serial_r2c3(std::array<std::int64_t, 3> n, std::vector<double> a) {
  std::vector<std::complex<double>> out(static_cast<std::size_t>(n[0] * n[1] * (n[2] / 2 + 1)));
  fftw_plan p = fftw_plan_dft_r2c_3d(static_cast<int>(n[0]), static_cast<int>(n[1]), static_cast<int>(n[2]), a.data(),
                                     reinterpret_cast<fftw_complex*>(out.data()), FFTW_ESTIMATE);
  fftw_execute(p);
  fftw_destroy_plan(p);
  return out;
}

/// Serial 1D DFT.
inline std::vector<std::complex<double>> serial_dft1(std::vector<std::complex<double>> a, int sign) {
  std::vector<std::complex<double>> out(a.size());
  fftw_plan p = fftw_plan_dft_1d(static_cast<int>(a.size()), reinterpret_cast<fftw_complex*>(a.data()),
                                 reinterpret_cast<fftw_complex*>(out.data()), sign, FFTW_ESTIMATE);
  fftw_execute(p);
  fftw_destroy_plan(p);
  return out;
}

/// Accumulates ||got - want||^2 and ||want||^2 locally; rel() reduces over the communicator.
struct error_norm {
  double diff = 0, ref = 0;
  template <class T>
  void add(std::complex<T> got, std::complex<double> want) {
    const std::complex<double> g(got.real(), got.imag());
    diff += std::norm(g - want);
    ref += std::norm(want);
  }
  void add(double got, double want) {
    diff += (got - want) * (got - want);
    ref += want * want;
  }
  double rel(MPI_Comm comm = MPI_COMM_WORLD) const {
    double l[2] = {diff, ref}, g[2] = {0, 0};
    MPI_Allreduce(l, g, 2, MPI_DOUBLE, MPI_SUM, comm);
    return g[1] > 0 ? std::sqrt(g[0] / g[1]) : std::sqrt(g[0]);
  }
};

/// The tolerances: 1e-12 (double) or 1e-5 (float) relative L2, scaled by log2 N.
template <class T>
double tolerance(double npoints) {
  const double base = sizeof(T) == sizeof(double) ? 1e-12 : 1e-5;
  return base * std::max(1.0, std::log2(npoints));
}

/// Runs plan.forward on reproducible input (cnoise of the global index, `seed`) and returns the
/// relative L2 error over `comm` against serial FFTW on the whole array. Collective over `comm`,
/// which must be the plan's communicator. For a plan that must still compute after a refused call.
template <class Plan>
double forward_error_against_serial(const Plan& plan, std::array<std::int64_t, 3> n, MPI_Comm comm,
                                    std::uint64_t seed = 7) {
  std::vector<std::complex<double>> all(static_cast<std::size_t>(n[0] * n[1] * n[2]));
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = cnoise(i, seed);
  const auto want = serial_dft3(n, all, -1);
  std::vector<std::complex<double>> a(plan.alloc_size()), b(plan.alloc_size());
  for_each(plan.inbox(), [&](std::array<std::int64_t, 3> g, std::int64_t i) {
    a[static_cast<std::size_t>(i)] = all[static_cast<std::size_t>(flat(n, g))];
  });
  plan.forward(a.data(), b.data());
  error_norm e;
  for_each(plan.outbox(), [&](std::array<std::int64_t, 3> g, std::int64_t i) {
    e.add(b[static_cast<std::size_t>(i)], want[static_cast<std::size_t>(flat(n, g))]);
  });
  return e.rel(comm);
}

}  // namespace toru::test
