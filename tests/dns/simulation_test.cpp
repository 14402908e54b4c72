// SPDX-License-Identifier: BSD-3-Clause
// The run's driver (dns/simulation.hpp) through the library: every step is reported, the first
// with the Taylor-Green vortex's analytic energy and dissipation; a restart from the checkpoint of
// step k run to step n matches the uninterrupted n-step run bit for bit (events, checkpoint file,
// series.jsonl); bad and rank-dependent options fail on every rank with the option's name.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "dns/simulation.hpp"
#include "dns_test_util.hpp"
#include "toru/core/error.hpp"

namespace toru::dns {
namespace {

using test::temp_dir;
using test::world_rank;

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

std::vector<std::string> lines(const std::string& path) {
  std::ifstream f(path);
  std::vector<std::string> out;
  for (std::string l; std::getline(f, l);) out.push_back(l);
  return out;
}

constexpr double nu_test = 0.01;

// 16^3 Taylor-Green at Re 100, CFL time step (so restart must carry dt and t exactly).
run_options base(const std::string& out) { return {.n = 16, .re = 1 / nu_test, .t_end = 100, .out = out}; }

std::vector<step_event> run_collecting(simulation& sim, run_summary* summary = nullptr) {
  std::vector<step_event> events;
  sim.on_step([&](const step_event& e) { events.push_back(e); });
  const run_summary s = sim.run();
  if (summary) *summary = s;
  return events;
}

bool same_record(const step_record& a, const step_record& b) {
  return a.step == b.step && a.t == b.t && a.dt == b.dt && a.energy == b.energy && a.eps == b.eps && a.umax == b.umax &&
         a.divmax == b.divmax;
}

TEST(DnsSimulation, ReportsEveryStepFromTheAnalyticInitialState) {
  const std::string dir = temp_dir();
  run_options o = base(dir);
  o.steps = 5;
  o.dt = 0.01;
  simulation sim(MPI_COMM_WORLD, o);
  run_summary sum;
  const auto ev = run_collecting(sim, &sum);
  ASSERT_EQ(ev.size(), 6u);  // states 0..5
  // Taylor-Green: u = sin x cos y cos z, v = -cos x sin y cos z: E = 1/8, and every mode has
  // |k|^2 = 3, so Z = 3 E and eps = 2 nu Z = 3/4 nu.
  EXPECT_NEAR(ev[0].record.energy, 0.125, 1e-14);
  EXPECT_NEAR(ev[0].record.eps, 0.75 * nu_test, 1e-15);
  EXPECT_EQ(ev[0].record.t, 0.0);
  EXPECT_EQ(ev[0].record.dt, 0.0);
  EXPECT_LT(ev[0].record.divmax, 1e-12);
  for (std::size_t i = 0; i < ev.size(); ++i) {
    EXPECT_EQ(ev[i].record.step, static_cast<std::int64_t>(i));
    EXPECT_EQ(ev[i].steps_run, static_cast<std::int64_t>(i));
    EXPECT_TRUE(ev[i].stats_due);
    EXPECT_EQ(ev[i].done, i + 1 == ev.size());
    if (i > 0) {
      EXPECT_EQ(ev[i].record.dt, 0.01);
      EXPECT_NEAR(ev[i].record.t, 0.01 * static_cast<double>(i), 1e-15);
      // Early on the vortex decays as dE/dt = -eps: the energy lost over a step is eps dt to
      // second order (eps changes by O(dt) over the step).
      const double lost = ev[i - 1].record.energy - ev[i].record.energy;
      const double mean_eps = 0.5 * (ev[i - 1].record.eps + ev[i].record.eps);
      EXPECT_NEAR(lost, mean_eps * 0.01, 1e-3 * mean_eps * 0.01);
      EXPECT_GT(ev[i].step_seconds, 0.0);
      EXPECT_GE(ev[i].wall_s, ev[i - 1].wall_s);
    }
  }
  EXPECT_TRUE(sim.done());
  EXPECT_THROW(sim.step(), toru::error);
  EXPECT_EQ(sum.steps_run, 5);
  EXPECT_TRUE(same_record(sum.last, ev.back().record));
  EXPECT_EQ(sum.checkpoint, "");
  if (world_rank() == 0) {
    EXPECT_EQ(lines(dir + "/series.jsonl").size(), 6u);
    for (const auto& p : sum.plots) EXPECT_TRUE(std::filesystem::exists(p)) << p;
    ASSERT_EQ(sum.spectra.size(), 1u);
    EXPECT_TRUE(std::filesystem::exists(sum.spectra[0]));
  }
}

TEST(DnsSimulation, RestartMatchesTheUninterruptedRunBitForBit) {
  const std::string a = temp_dir(), b = temp_dir();
  constexpr std::int64_t k = 3, n = 7;
  run_options o = base(a);
  o.steps = n;
  o.checkpoint_every = k;
  simulation full(MPI_COMM_WORLD, o);
  run_summary full_sum;
  const auto full_ev = run_collecting(full, &full_sum);
  ASSERT_EQ(full_ev.size(), static_cast<std::size_t>(n + 1));
  EXPECT_EQ(full_sum.checkpoint, a + "/checkpoint-7.bin");

  // Only what the checkpoint does not hold is given: n, re and the scheme come from it.
  simulation rest(MPI_COMM_WORLD,
                  {.restart = a + "/checkpoint-3.bin", .t_end = 100, .steps = n - k, .out = b, .checkpoint_every = k});
  EXPECT_EQ(*rest.options().n, 16);
  EXPECT_EQ(*rest.options().re, 1 / nu_test);
  EXPECT_EQ(rest.solution().step(), k);
  run_summary rest_sum;
  const auto rest_ev = run_collecting(rest, &rest_sum);
  ASSERT_EQ(rest_ev.size(), static_cast<std::size_t>(n - k + 1));
  for (std::size_t i = 0; i < rest_ev.size(); ++i)
    EXPECT_TRUE(same_record(rest_ev[i].record, full_ev[static_cast<std::size_t>(k) + i].record))
        << "step " << rest_ev[i].record.step;
  EXPECT_EQ(rest_sum.digest, full_sum.digest);
  EXPECT_EQ(rest_sum.checkpoint, b + "/checkpoint-7.bin");

  if (world_rank() == 0) {
    const std::string ca = slurp(a + "/checkpoint-7.bin"), cb = slurp(b + "/checkpoint-7.bin");
    EXPECT_GT(ca.size(), 4096u);
    EXPECT_TRUE(ca == cb) << "the restarted run's final checkpoint differs from the uninterrupted run's";
    const auto la = lines(a + "/series.jsonl"), lb = lines(b + "/series.jsonl");
    ASSERT_EQ(la.size(), static_cast<std::size_t>(n + 1));
    EXPECT_EQ(std::vector<std::string>(la.begin() + k, la.end()), lb);
  }

  // save() at step n writes the same checkpoint as the loop did.
  full.save(b + "/saved.bin");
  if (world_rank() == 0) {
    EXPECT_TRUE(slurp(b + "/saved.bin") == slurp(a + "/checkpoint-7.bin"));
  }
}

// The same error text on every rank: the lowest rank's, gathered to check.
std::string agreed_error(const std::function<void()>& f) {
  std::string what;
  try {
    f();
  } catch (const toru::error& e) {
    what = e.message();
  }
  std::string first(512, '\0');
  if (world_rank() == 0) std::strncpy(first.data(), what.c_str(), 511);
  MPI_Bcast(first.data(), 512, MPI_CHAR, 0, MPI_COMM_WORLD);
  EXPECT_EQ(what, std::string(first.c_str())) << "ranks disagree";
  return what;
}

TEST(DnsSimulation, BadOptionsFailOnEveryRankNamingTheOption) {
  const std::string dir = temp_dir();
  auto make = [&](run_options o) { return [o] { simulation sim(MPI_COMM_WORLD, o); }; };
  run_options o = base(dir);
  o.cfl = 0;
  EXPECT_NE(agreed_error(make(o)).find("run_options.cfl"), std::string::npos);
  o = base(dir);
  o.stats_every = 0;
  EXPECT_NE(agreed_error(make(o)).find("run_options.stats_every"), std::string::npos);
  o = base(dir);
  o.n = 2;
  EXPECT_NE(agreed_error(make(o)).find("run_options.n"), std::string::npos);
  o = base(dir);
  o.spectra_at = {1, -2};
  EXPECT_NE(agreed_error(make(o)).find("run_options.spectra_at"), std::string::npos);
  // An option only the last rank gets wrong fails everywhere, naming that rank's option.
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  o = base(dir);
  if (world_rank() == size - 1) o.dt = -1;
  EXPECT_NE(agreed_error(make(o)).find("run_options.dt"), std::string::npos);
  if (size > 1) {
    o = base(dir);
    if (world_rank() == 1) o.steps = 9;
    EXPECT_NE(agreed_error(make(o)).find("run_options.steps"), std::string::npos);
  }
  o = base(dir);
  o.restart = dir + "/no-such-checkpoint.bin";
  EXPECT_NE(agreed_error(make(o)).find("no-such-checkpoint.bin"), std::string::npos);
}

}  // namespace
}  // namespace toru::dns
