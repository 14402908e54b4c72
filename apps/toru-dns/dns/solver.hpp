// SPDX-License-Identifier: BSD-3-Clause
// The time stepper of the DNS: du_hat/dt = N(u) - nu |k|^2 u_hat + A u_hat, with N the dealiased,
// projected nonlinear term (nonlinear.hpp) and A u the optional linear forcing (Lundgren 2003;
// Rosales & Meneveau 2005) at constant power: A = eps_f / (2 E), so the forcing injects eps_f.
//
// Schemes: Williamson's low-storage RK3 (2N storage; Williamson 1980: A = 0, -5/9, -153/128,
// B = 1/3, 15/16, 8/15) and classical RK4. The time step is fixed or follows the
// CFL condition dt = C dx / max(|u_x| + |u_y| + |u_z|), capped by the viscous limit
// C 2.5 / (nu |k|^2_max) and clipped so that the run lands exactly on t_end and on requested times.
//
// Usage (collective on every call):
//   toru::dns::solver s(comm, {.n = 64, .nu = 1.0 / 1600});
//   toru::dns::taylor_green(s.grid(), s.transformer(), s.u());
//   while (s.t() < 10) { auto st = s.prepare(); s.advance(s.cfl_dt(st, 0.5)); }
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>

#include "dns/nonlinear.hpp"
#include "dns/spectral.hpp"
#include "dns/transform.hpp"

namespace toru::dns {

enum class scheme { rk3, rk4 };
std::string to_string(scheme s);

struct solver_config {
  std::int64_t n = 64;
  double nu = 1.0 / 1600;
  scheme method = scheme::rk3;
  double forcing = 0;  // power injected by linear forcing; 0 = unforced
  transform_options fft{};
};

/// The state of the current step, from the first stage's evaluation of the right-hand side.
struct step_stats {
  field_stats field;
  velocity_extremes velocity;
};

class solver {
 public:
  /// Collective over comm (which must outlive the solver).
  solver(MPI_Comm comm, const solver_config& cfg);

  const solver_config& config() const { return cfg_; }
  const spectral_grid& grid() const { return *grid_; }
  const transform& transformer() const { return *t_; }
  vector_field& u() { return u_; }
  const vector_field& u() const { return u_; }
  double t() const { return t_now_; }
  std::int64_t step() const { return step_; }
  /// The last step's dt (0 before the first step of a fresh run).
  double last_dt() const { return dt_last_; }
  void set_time(double t, std::int64_t step, double last_dt);
  /// Marks u as changed from outside (initial condition, checkpoint).
  void invalidate() { prepared_ = false; }

  /// Collective. Evaluates the right-hand side at the current state (the first stage of the next
  /// step, reused by advance) and returns the state's diagnostics.
  step_stats prepare();
  /// The CFL time step for the prepared state.
  double cfl_dt(const step_stats& s, double cfl) const;
  /// Collective. One step of size dt.
  void advance(double dt);

  /// Collective. du_hat/dt at u (the right-hand side), into out; returns the velocity extremes.
  velocity_extremes rhs(const vector_field& u, vector_field& out);
  /// N(u) alone (no viscosity, no forcing).
  nonlinear_term& nonlinear() { return *nl_; }

  double fft_seconds() const { return nl_->fft_seconds(); }

 private:
  MPI_Comm comm_;
  solver_config cfg_;
  std::unique_ptr<transform> t_;
  std::unique_ptr<spectral_grid> grid_;
  std::unique_ptr<nonlinear_term> nl_;
  vector_field u_, r_, q_, u0_;  // u0_: RK4 only
  bool prepared_ = false;
  velocity_extremes prepared_ext_;
  double t_now_ = 0, dt_last_ = 0;
  std::int64_t step_ = 0;
};

}  // namespace toru::dns
