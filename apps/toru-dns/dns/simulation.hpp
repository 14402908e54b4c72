// SPDX-License-Identifier: BSD-3-Clause
// The driver of a DNS run (what toru-dns runs, callable): the initial condition or a restart, the
// time loop to t_end or a number of steps, and the run's outputs in one directory:
//   series.jsonl        one line per reported step (step, t, dt, E, eps, umax, divmax); a restart
//                       keeps the lines before its step and replaces the rest
//   spectrum-T.json     E(k) at the requested times and at the end
//   checkpoint-S.bin    every checkpoint_every steps and at the end (checkpoint.hpp)
//   dissipation.svg, energy.svg, spectrum.svg
// Each step is reported to an optional callback (progress lines, streaming) after its outputs.
//
// Usage (collective on every call):
//   toru::dns::simulation sim(comm, {.n = 32, .re = 400, .t_end = 2, .out = "results/tg32"});
//   sim.on_step([](const toru::dns::step_event& e) { log(e.record.step, e.record.energy); });
//   const toru::dns::run_summary s = sim.run();   // or: while (!sim.done()) sim.step(); sim.finish();
#pragma once
#include <mpi.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dns/solver.hpp"

namespace toru::dns {

// The published reference for the Taylor-Green vortex at Re = 1600 (512^3 spectral DNS, Brachet
// et al. 1983; van Rees et al. 2011): peak dissipation rate 0.0127 at t = 9.0.
inline constexpr double tg1600_peak_eps = 0.0127, tg1600_peak_t = 9.0;

enum class initial_condition { taylor_green, random };

/// What a run does. The solver's parameters left empty take the defaults, or on a restart the
/// checkpoint's values.
struct run_options {
  std::optional<std::int64_t> n{};  // grid points per axis (default 64)
  std::optional<double> re{};       // Reynolds number U0 L / nu (default 1600)
  std::optional<scheme> method{};   // default rk3
  std::optional<double> forcing{};  // power of the linear forcing (default 0 = off)
  initial_condition ic = initial_condition::taylor_green;
  std::string restart{};  // a checkpoint to start from instead of ic
  double t_end = 10;
  std::int64_t steps = -1;  // stop after this many steps of this run too (-1: no limit)
  double cfl = 0.5;
  double dt = 0;  // a fixed time step (0: the CFL condition)
  double spectrum_peak = 4;
  std::uint64_t seed = 1;
  std::string out = "results/dns";
  std::int64_t stats_every = 1;  // steps between series.jsonl lines (and reported steps)
  std::vector<double> spectra_at{};
  std::int64_t checkpoint_every = 0;  // 0: none
  transform_options fft{};
};

/// One line of series.jsonl.
struct step_record {
  std::int64_t step = 0;
  double t = 0, dt = 0, energy = 0, eps = 0, umax = 0, divmax = 0;
};

/// A step's state, before the step that follows it (its outputs are written).
struct step_event {
  step_record record;
  std::int64_t steps_run = 0;  // steps this run took before this state
  bool stats_due = false;      // a series.jsonl line (the first, every stats_every-th and the last state)
  bool done = false;           // the last state of the run
  double step_seconds = 0;     // median wall time per step so far (the slowest rank's), 0 before the first
  double wall_s = 0;           // since the simulation was made
};

struct run_summary {
  std::int64_t steps_run = 0;
  step_record last;
  double peak_eps = 0, t_peak_eps = 0;  // over series.jsonl (a restart's kept lines included)
  double time_per_step = 0, time_per_step_mean = 0, fft_time_per_step = 0, fft_share = 0;
  std::string series, checkpoint;  // checkpoint: the last written, "" if none
  std::vector<std::string> spectra;
  std::array<std::string, 3> plots;  // dissipation, energy, spectrum
  std::uint64_t digest = 0;          // spectral_grid::digest of the final field
  bool tg1600 = false;               // Taylor-Green at Re 1600 from t = 0: the plot shows the reference
};

class simulation {
 public:
  /// Collective over comm (which must outlive the simulation). Agrees on the options first: a bad
  /// or rank-dependent option throws toru::error naming it ("run_options.cfl: expected ...") on
  /// every rank. Creates `out`, reads the restart checkpoint or sets the initial condition.
  simulation(MPI_Comm comm, run_options opts);
  ~simulation();
  simulation(const simulation&) = delete;
  simulation& operator=(const simulation&) = delete;

  /// The options with n, re, method and forcing resolved (from the checkpoint on a restart).
  const run_options& options() const { return o_; }
  double nu() const { return 1.0 / *o_.re; }
  const dns::solver& solution() const { return *sol_; }

  /// Called on every rank for every step's state, after its outputs.
  void on_step(std::function<void(const step_event&)> f) { on_step_ = std::move(f); }

  /// Whether the last state was reported (run to t_end or `steps`).
  bool done() const { return done_; }
  /// Collective. Evaluates and reports the current state, writes its outputs and, unless it is the
  /// last, advances one step. Throws toru::error(errc::internal) if the solution blew up.
  step_event step();
  /// Collective. Steps until done, then finish().
  run_summary run();
  /// Collective, once, after done: the final spectrum, the plots and the summary.
  run_summary finish();
  /// Collective. A checkpoint of the current state (restart from it with run_options::restart).
  void save(const std::string& path) const;

 private:
  void write_spectrum(double t);

  MPI_Comm comm_;
  run_options o_;
  bool restart_ = false, done_ = false, finished_ = false;
  std::unique_ptr<dns::solver> sol_;
  std::chrono::steady_clock::time_point start_;
  std::function<void(const step_event&)> on_step_;
  std::vector<step_record> series_;  // rank 0
  std::ofstream series_file_;        // rank 0
  std::string series_path_, last_checkpoint_;
  std::size_t next_spectrum_ = 0;
  std::vector<std::pair<double, std::vector<double>>> spectra_;
  std::vector<std::string> spectrum_files_;
  std::vector<double> step_times_, fft_times_;
  std::int64_t steps_run_ = 0;
  step_stats st_;
};

}  // namespace toru::dns
