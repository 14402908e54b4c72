// SPDX-License-Identifier: BSD-3-Clause
#include "dns/solver.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include "toru/core/error.hpp"
#include "toru/core/mpi.hpp"

namespace toru::dns {

std::string to_string(scheme s) { return s == scheme::rk3 ? "rk3" : "rk4"; }

solver::solver(MPI_Comm comm, const solver_config& cfg) : comm_(comm), cfg_(cfg) {
  expect(cfg.n >= 4, "n", "a grid size >= 4", std::to_string(cfg.n));
  expect(cfg.nu >= 0, "nu", "a viscosity >= 0", std::to_string(cfg.nu));
  expect(cfg.forcing >= 0, "forcing", "a power >= 0", std::to_string(cfg.forcing));
  t_ = make_transform(comm, cfg.n, cfg.fft);
  grid_ = std::make_unique<spectral_grid>(comm, cfg.n, *t_);
  nl_ = std::make_unique<nonlinear_term>(*grid_, *t_);
  u_ = grid_->make_vector();
  r_ = grid_->make_vector();
  q_ = grid_->make_vector();
  if (cfg.method == scheme::rk4) u0_ = grid_->make_vector();
}

void solver::set_time(double t, std::int64_t step, double last_dt) {
  t_now_ = t;
  step_ = step;
  dt_last_ = last_dt;
}

velocity_extremes solver::rhs(const vector_field& u, vector_field& out) {
  const auto ext = nl_->evaluate(u, out);
  double a = 0;
  if (cfg_.forcing > 0) {
    const double e = grid_->stats(u).energy;
    a = e > 0 ? cfg_.forcing / (2 * e) : 0.0;
  }
  const auto& k2 = grid_->k2();
  const auto& mask = grid_->mask();
  for (int c = 0; c < 3; ++c)
    for (std::size_t i = 0; i < out[c].size(); ++i) {
      // Modes the 2/3 rule drops stay zero: N is masked, and so must be the linear terms.
      const double keep = mask[i] != 0 ? 1.0 : 0.0;
      out[c][i] += keep * (a - cfg_.nu * k2[i]) * u[c][i];
    }
  return ext;
}

step_stats solver::prepare() {
  if (!prepared_) {
    prepared_ext_ = rhs(u_, r_);
    prepared_ = true;
  }
  return {grid_->stats(u_), prepared_ext_};
}

double solver::cfl_dt(const step_stats& s, double cfl) const {
  const double dx = 2 * std::numbers::pi / static_cast<double>(cfg_.n);
  double dt = s.velocity.sum_abs > 0 ? cfl * dx / s.velocity.sum_abs : std::numeric_limits<double>::infinity();
  const double kmax = static_cast<double>(grid_->kmax());
  if (cfg_.nu > 0 && kmax > 0) dt = std::min(dt, cfl * 2.5 / (cfg_.nu * 3 * kmax * kmax));
  return std::isfinite(dt) ? dt : cfl * dx;
}

void solver::advance(double dt) {
  expect(dt > 0 && std::isfinite(dt), "dt", "a finite time step > 0", std::to_string(dt));
  if (!prepared_) prepare();
  const std::size_t size = static_cast<std::size_t>(grid_->alloc());
  if (cfg_.method == scheme::rk3) {
    // q <- A_s q + dt r(u);  u <- u + B_s q.
    static constexpr double A[3] = {0.0, -5.0 / 9.0, -153.0 / 128.0};
    static constexpr double B[3] = {1.0 / 3.0, 15.0 / 16.0, 8.0 / 15.0};
    for (int s = 0; s < 3; ++s) {
      if (s > 0) rhs(u_, r_);
      for (int c = 0; c < 3; ++c)
        for (std::size_t i = 0; i < size; ++i) {
          q_[c][i] = A[s] * q_[c][i] + dt * r_[c][i];
          u_[c][i] += B[s] * q_[c][i];
        }
    }
  } else {
    // q accumulates the weighted stages; u holds each stage's argument, u0 the start.
    static constexpr double a[4] = {0.5, 0.5, 1.0, 0.0};
    static constexpr double w[4] = {1.0 / 6.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 6.0};
    for (int c = 0; c < 3; ++c) {
      std::copy(u_[c].begin(), u_[c].end(), u0_[c].begin());
      std::fill(q_[c].begin(), q_[c].end(), cpx{});
    }
    for (int s = 0; s < 4; ++s) {
      if (s > 0) rhs(u_, r_);
      for (int c = 0; c < 3; ++c)
        for (std::size_t i = 0; i < size; ++i) {
          q_[c][i] += (w[s] * dt) * r_[c][i];
          u_[c][i] = s < 3 ? u0_[c][i] + (a[s] * dt) * r_[c][i] : u0_[c][i] + q_[c][i];
        }
    }
  }
  t_now_ += dt;
  dt_last_ = dt;
  ++step_;
  prepared_ = false;
}

}  // namespace toru::dns
