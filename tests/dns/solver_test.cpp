// SPDX-License-Identifier: BSD-3-Clause
// The DNS solver against analytic results: the nonlinear term of the Taylor-Green vortex, the
// exact viscous decay of a 2D Taylor-Green mode, divergence-free steps, and the energy
// conservation of the inviscid discretisation. Every test runs with toru (auto, slab, pencil)
// and FFTW-MPI on every rank count.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "dns/initial.hpp"
#include "dns/solver.hpp"
#include "dns_test_util.hpp"

namespace toru::dns {
namespace {

using test::fft_cases;

double max_over_ranks(double v, MPI_Comm comm = MPI_COMM_WORLD) {
  double g = 0;
  MPI_Allreduce(&v, &g, 1, MPI_DOUBLE, MPI_MAX, comm);
  return g;
}

// Physical values of a spectral vector field on this rank's grid points.
std::array<real_field, 3> to_physical(const solver& s, const vector_field& f) {
  auto r = s.grid().make_real_vector();
  for (int a = 0; a < 3; ++a) {
    scalar_field tmp = f[a];
    s.transformer().backward(tmp.data(), r[a].data());
  }
  return r;
}

// N(u) of u = (sin x cos y cos z, -cos x sin y cos z, 0): (u.grad)u = cos^2 z (sin 2x, sin 2y, 0)/2,
// whose solenoidal part is (sin 2x cos 2z, sin 2y cos 2z, -sin 2z (cos 2x + cos 2y)) / 8, and
// N = -P[(u.grad)u].
TEST(DnsSolver, NonlinearTermOfTaylorGreenIsAnalytic) {
  for (const auto& c : fft_cases()) {
    SCOPED_TRACE(c.name);
    solver s(MPI_COMM_WORLD, {.n = 16, .nu = 0, .fft = c.opts});
    taylor_green(s.grid(), s.transformer(), s.u());
    vector_field nl = s.grid().make_vector();
    const auto ext = s.nonlinear().evaluate(s.u(), nl);
    EXPECT_NEAR(ext.umax, 1.0, 1e-12);  // the grid contains the maxima (x = pi/2, y = z = 0)
    const auto r = to_physical(s, nl);
    const double h = 2 * std::numbers::pi / 16;
    double err = 0;
    for_box(s.grid().real(), [&](const std::array<std::int64_t, 3>& g, std::int64_t at) {
      const double x = h * static_cast<double>(g[0]), y = h * static_cast<double>(g[1]),
                   z = h * static_cast<double>(g[2]);
      const double want[3] = {-std::sin(2 * x) * std::cos(2 * z) / 8, -std::sin(2 * y) * std::cos(2 * z) / 8,
                              std::sin(2 * z) * (std::cos(2 * x) + std::cos(2 * y)) / 8};
      for (int a = 0; a < 3; ++a) err = std::max(err, std::abs(r[a][static_cast<std::size_t>(at)] - want[a]));
    });
    EXPECT_LT(max_over_ranks(err), 1e-14);
  }
}

// u = (sin x cos y, -cos x sin y, 0) solves Navier-Stokes with u(t) = u(0) exp(-2 nu t): its
// nonlinear term is a gradient. E(t) = exp(-4 nu t) / 4.
TEST(DnsSolver, ViscousTaylorGreenModeDecaysExactly) {
  // The decompositions agree (decomp_test): one toru, one FFTW-MPI, and toru's batched transforms.
  const auto cases = fft_cases();
  for (const auto method : {scheme::rk3, scheme::rk4})
    for (const auto& c : {cases[0], cases[3], cases[4]}) {
      SCOPED_TRACE(c.name + " " + to_string(method));
      const double nu = 0.1, dt = 0.02;
      solver s(MPI_COMM_WORLD, {.n = 16, .nu = nu, .method = method, .fft = c.opts});
      from_function(
          s.grid(), s.transformer(),
          [](double x, double y, double) -> std::array<double, 3> {
            return {std::sin(x) * std::cos(y), -std::cos(x) * std::sin(y), 0.0};
          },
          s.u());
      EXPECT_NEAR(s.grid().stats(s.u()).energy, 0.25, 1e-15);
      for (int i = 0; i < 50; ++i) s.advance(dt);
      const double t = s.t(), want = 0.25 * std::exp(-4 * nu * t);
      EXPECT_NEAR(t, 1.0, 1e-12);
      // Time error only: RK3 ~ 50 (4 nu dt)^4 / 24 = 1e-9, RK4 ~ 50 (4 nu dt)^5 / 120 = 1e-12.
      EXPECT_LT(std::abs(s.grid().stats(s.u()).energy - want) / want, method == scheme::rk3 ? 3e-9 : 1e-11);
      // The whole field, not only its energy.
      const auto r = to_physical(s, s.u());
      const double h = 2 * std::numbers::pi / 16, amp = std::exp(-2 * nu * t);
      double err = 0;
      for_box(s.grid().real(), [&](const std::array<std::int64_t, 3>& g, std::int64_t at) {
        const double x = h * static_cast<double>(g[0]), y = h * static_cast<double>(g[1]);
        const auto i = static_cast<std::size_t>(at);
        err = std::max({err, std::abs(r[0][i] - amp * std::sin(x) * std::cos(y)),
                        std::abs(r[1][i] + amp * std::cos(x) * std::sin(y)), std::abs(r[2][i])});
      });
      EXPECT_LT(max_over_ranks(err), 1e-9);
    }
}

TEST(DnsSolver, StepsStayDivergenceFree) {
  for (const auto& c : fft_cases()) {
    SCOPED_TRACE(c.name);
    solver s(MPI_COMM_WORLD, {.n = 18, .nu = 0.01, .fft = c.opts});
    random_isotropic(s.grid(), s.transformer(), 3, 42, s.u());
    for (int i = 0; i < 5; ++i) {
      const auto st = s.prepare();
      EXPECT_LT(st.field.divmax, 1e-12) << "step " << i;
      s.advance(s.cfl_dt(st, 0.5));
    }
    EXPECT_LT(s.grid().stats(s.u()).divmax, 1e-12);
    EXPECT_GT(s.grid().stats(s.u()).energy, 1.0);  // the field moved but did not vanish
  }
}

// The 2/3 rule makes N exact on the kept modes: a field of modes |k_i| <= 5 gives the same N on
// those modes on 16^3 (3 * 5 < 16: aliases removed) as on 32^3 (no aliasing possible).
TEST(DnsSolver, DealiasedNonlinearTermIsExact) {
  solver s16(MPI_COMM_WORLD, {.n = 16, .nu = 0});
  random_isotropic(s16.grid(), s16.transformer(), 3, 11, s16.u());
  const auto g16 = test::gather_natural(s16.grid(), s16.u());  // every mode, on every rank
  // N on n^3 of that field, restricted to the band |k_i| <= 5, in one order for both sizes.
  auto band_nonlinear = [&](std::int64_t n) {
    solver s(MPI_COMM_WORLD, {.n = n, .nu = 0});
    auto wrap = [](std::int64_t k, std::int64_t m) { return (k + m) % m; };
    for_box(s.grid().spec(), [&](const std::array<std::int64_t, 3>& g, std::int64_t at) {
      const std::int64_t k0 = wavenumber(g[0], n), k1 = wavenumber(g[1], n), k2 = g[2];
      const bool in_band = std::abs(k0) <= 5 && std::abs(k1) <= 5 && k2 <= 5;
      for (std::int64_t a = 0; a < 3; ++a)
        s.u()[a][static_cast<std::size_t>(at)] =
            in_band ? g16[static_cast<std::size_t>(((a * 16 + wrap(k0, 16)) * 16 + wrap(k1, 16)) * 9 + k2)] : cpx{};
    });
    vector_field nl = s.grid().make_vector();
    s.nonlinear().evaluate(s.u(), nl);
    const auto N = test::gather_natural(s.grid(), nl);
    std::vector<cpx> band;
    const std::int64_t nh = n / 2 + 1;
    for (std::int64_t a = 0; a < 3; ++a)
      for (std::int64_t k0 = -5; k0 <= 5; ++k0)
        for (std::int64_t k1 = -5; k1 <= 5; ++k1)
          for (std::int64_t k2 = 0; k2 <= 5; ++k2)
            band.push_back(N[static_cast<std::size_t>(((a * n + wrap(k0, n)) * n + wrap(k1, n)) * nh + k2)]);
    return band;
  };
  const auto n16 = band_nonlinear(16), n32 = band_nonlinear(32);
  double norm = 0;
  for (const auto& x : n32) norm = std::max(norm, std::abs(x));
  ASSERT_GT(norm, 1e-2);
  EXPECT_LT(test::rel_diff(n16, n32), 1e-13);
}

// <u, N(u)> = 0: the dealiased rotational form conserves energy exactly in space.
TEST(DnsSolver, NonlinearTermDoesNoWork) {
  for (const auto& c : fft_cases()) {
    SCOPED_TRACE(c.name);
    solver s(MPI_COMM_WORLD, {.n = 16, .nu = 0, .fft = c.opts});
    random_isotropic(s.grid(), s.transformer(), 3, 7, s.u());
    vector_field nl = s.grid().make_vector();
    s.nonlinear().evaluate(s.u(), nl);
    double local[3] = {0, 0, 0}, global[3];
    const auto& w = s.grid().weight();
    for (int a = 0; a < 3; ++a)
      for (std::size_t i = 0; i < nl[a].size(); ++i) {
        local[0] += w[i] * (std::conj(s.u()[a][i]) * nl[a][i]).real();
        local[1] += w[i] * std::norm(s.u()[a][i]);
        local[2] += w[i] * std::norm(nl[a][i]);
      }
    MPI_Allreduce(local, global, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    ASSERT_GT(global[2], 1e-2);  // N is not trivially zero
    EXPECT_LT(std::abs(global[0]) / std::sqrt(global[1] * global[2]), 1e-14);
  }
}

// Inviscid RK4 changes E only by its local truncation error: O(dt^5) in general, O(dt^6) for the
// linear part (|R(iy)|^2 = 1 - y^6/72), so halving dt divides the drift of one step by 32 to 64;
// small steps keep E to ~1e-12.
TEST(DnsSolver, InviscidRk4EnergyDriftIsFifthOrder) {
  const auto cases = fft_cases();
  for (const auto& c : {cases[0], cases[3], cases[4]}) {
    SCOPED_TRACE(c.name);
    auto drift = [&](double dt, int steps) {
      solver s(MPI_COMM_WORLD, {.n = 16, .nu = 0, .method = scheme::rk4, .fft = c.opts});
      random_isotropic(s.grid(), s.transformer(), 3, 7, s.u());
      const double e0 = s.grid().stats(s.u()).energy;
      for (int i = 0; i < steps; ++i) s.advance(dt);
      return std::abs(s.grid().stats(s.u()).energy - e0) / e0;
    };
    const double d1 = drift(0.04, 1), d2 = drift(0.02, 1);
    EXPECT_GT(d1, 1e-9);  // large enough to be truncation, not round-off
    EXPECT_GT(d1 / d2, 28);
    EXPECT_LT(d1 / d2, 70);
    EXPECT_LT(drift(1e-3, 5), 1e-12);
  }
}

TEST(DnsSolver, LinearForcingInjectsItsPower) {
  // Inviscid, so dE/dt is the forcing alone: E(t) = E0 + eps_f t (A = eps_f / 2E at every stage).
  solver s(MPI_COMM_WORLD, {.n = 16, .nu = 0, .method = scheme::rk4, .forcing = 0.3});
  random_isotropic(s.grid(), s.transformer(), 3, 7, s.u());
  const double e0 = s.grid().stats(s.u()).energy;
  for (int i = 0; i < 10; ++i) s.advance(0.005);
  EXPECT_NEAR(s.grid().stats(s.u()).energy, e0 + 0.3 * 0.05, 1e-9);
}

}  // namespace
}  // namespace toru::dns
