// SPDX-License-Identifier: BSD-3-Clause
// bench/demo_driver.hpp (bench/support): the driver both tuner demonstrations share
// (tune/bench/tune_fft_demo, apps/toru-dns/tune_dns_demo; their targets link toru::tune): time every
// configuration (the exhaustive best), run toru::tune::tuner from a deliberately bad start as an
// application would, then re-time start, tuned and exhaustive best interleaved, so all three see the
// same noise, and print (and with --json write) the result.
//
// A workload provides `void build(std::int64_t n, const toru::tune::config&)` (throws toru::error
// where a configuration does not apply, on every rank) and `void iteration()`.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "toru/core/error.hpp"
#include "toru/tune/tuner.hpp"

namespace toru::tune::demo {

struct spec {
  std::string name;       // program name
  std::string what;       // "fft3d c2c {}^3": formatted with n, names the wisdom key and output
  std::string iteration;  // what one iteration is, for the output
  std::int64_t n = 64;    // default edge
  std::string start;      // default bad start, knob=value,...
  int reps = 5;           // default repetitions per timing
  std::vector<knob> knobs;
  std::function<bool(const config&)> redundant = [](const config&) { return false; };  // skipped in the exhaustive pass
};

inline double max_time(double t) {
  double m = 0;
  MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return m;
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

template <class Workload>
double time_config(Workload& w, std::int64_t n, const config& c, int reps) {
  w.build(n, c);
  w.iteration();
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    const auto t0 = std::chrono::steady_clock::now();
    w.iteration();
    t.push_back(max_time(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()));
  }
  return *std::min_element(t.begin(), t.end());  // noise on a shared machine only adds time
}

inline config parse_start(const std::string& s) {
  config c = nlohmann::json::object();
  std::size_t i = 0;
  while (i < s.size()) {
    const std::size_t e = std::min(s.find(',', i), s.size());
    const std::string kv = s.substr(i, e - i);
    const std::size_t eq = kv.find('=');
    if (eq == std::string::npos)
      throw CLI::ValidationError("--start", "expected knob=value[,knob=value...], got '" + kv + "'");
    const std::string k = kv.substr(0, eq), v = kv.substr(eq + 1);
    if (v == "true" || v == "false")
      c[k] = v == "true";
    else if (!v.empty() && std::all_of(v.begin(), v.end(), ::isdigit))
      c[k] = std::stoi(v);
    else
      c[k] = v;
    i = e + 1;
  }
  return c;
}

// Every configuration of the knobs, in odometer order.
inline std::vector<config> all_configs(const std::vector<knob>& knobs) {
  std::vector<config> out;
  std::vector<std::size_t> at(knobs.size(), 0);
  for (;;) {
    config c = nlohmann::json::object();
    for (std::size_t k = 0; k < knobs.size(); ++k) c[knobs[k].name] = knobs[k].values[at[k]];
    out.push_back(std::move(c));
    std::size_t k = knobs.size();
    while (k > 0 && ++at[k - 1] == knobs[k - 1].values.size()) at[--k] = 0;
    if (k == 0) return out;
  }
}

template <class Workload>
void demonstrate(const spec& s, std::int64_t n, const config& start, int reps, int samples, const std::string& wisdom,
                 const std::string& json_out) {
  int rank = 0, P = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  const std::string what = fmt::format(fmt::runtime(s.what), n);
  Workload w;
  config best_ex;
  double best_ex_t = 1e300;
  int configs = 0;
  for (const config& c : all_configs(s.knobs)) {
    if (s.redundant(c)) continue;
    double t = 0;
    try {
      t = time_config(w, n, c, reps);
    } catch (const toru::error&) {
      continue;  // not applicable here: thrown on every rank
    }
    ++configs;
    if (t < best_ex_t) {
      best_ex_t = t;
      best_ex = c;
    }
  }

  tuner t(MPI_COMM_WORLD, s.knobs, start,
          {.samples = samples, .warmup = 1, .wisdom = wisdom, .key = fmt::format("{} x{}", what, P)});
  w.build(n, t.current());
  int iterations = 0;
  const auto t0 = std::chrono::steady_clock::now();
  while (!t.done()) {
    w.iteration();
    ++iterations;
    bool changed = t.step();
    while (changed) {
      try {
        w.build(n, t.current());
        changed = false;
      } catch (const toru::error&) {
        changed = t.step_failed();
      }
    }
  }
  const double tuning_seconds = max_time(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());

  std::vector<double> ts, tt, tb;
  for (int r = 0; r < 3; ++r) {
    ts.push_back(time_config(w, n, start, reps));
    tt.push_back(time_config(w, n, t.best(), reps));
    tb.push_back(time_config(w, n, best_ex, reps));
  }
  const double st = median(ts), tu = median(tt), bx = median(tb);
  if (rank == 0) {
    fmt::print("{} on {} ranks, iteration = {}\n", what, P, s.iteration);
    fmt::print("  start      {:<70} {:9.3f} ms\n", to_text(start), st * 1e3);
    fmt::print("  tuned      {:<70} {:9.3f} ms  ({} iterations, {} candidates, {:.2f} s)\n", to_text(t.best()),
               tu * 1e3, iterations, t.report()["candidates"].size(), tuning_seconds);
    fmt::print("  exhaustive {:<70} {:9.3f} ms  ({} configurations)\n", to_text(best_ex), bx * 1e3, configs);
    fmt::print("  tuned / best = {:.3f}; measured gain (start / tuned) = {:.2f}x (tuner's own estimate {:.2f}x)\n",
               tu / bx, st / tu, t.gain());
    if (!json_out.empty()) {
      const nlohmann::json j = {{"n", n},
                                {"ranks", P},
                                {"start", start},
                                {"tuned", t.best()},
                                {"exhaustive_best", best_ex},
                                {"start_ms", st * 1e3},
                                {"tuned_ms", tu * 1e3},
                                {"best_ms", bx * 1e3},
                                {"tuned_over_best", tu / bx},
                                {"gain", st / tu},
                                {"tuner", t.report()},
                                {"iterations", iterations},
                                {"configurations", configs}};
      std::FILE* f = std::fopen(json_out.c_str(), "w");
      if (!f || std::fputs(j.dump(1).c_str(), f) < 0) fmt::print(stderr, "{}: cannot write {}\n", s.name, json_out);
      if (f) std::fclose(f);
    }
  }
}

template <class Workload>
int run(int argc, char** argv, spec s) {
  MPI_Init(&argc, &argv);
  int rank = 0, P = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  CLI::App app{s.name + ": the tuner recovering the best configuration from a bad start"};
  std::int64_t n = s.n;
  std::string start_text = s.start, wisdom, json_out;
  int reps = s.reps, samples = 5;
  app.add_option("--n", n, "grid edge")->check(CLI::Range(std::int64_t{2}, std::int64_t{1} << 20));
  app.add_option("--start", start_text, "the bad start: knob=value,...");
  app.add_option("--reps", reps, "repetitions per configuration in the exhaustive and final timings")
      ->check(CLI::Range(1, 1000000));
  app.add_option("--samples", samples, "tuner samples per candidate")->check(CLI::Range(1, 1000000));
  app.add_option("--wisdom", wisdom, "wisdom file the tuner writes");
  app.add_option("--json", json_out, "write the result as JSON to this file (rank 0)");
  config start;
  try {
    app.parse(argc, argv);
    start = parse_start(start_text);
  } catch (const CLI::ParseError& e) {
    const int rc = rank == 0 ? app.exit(e) : 2;
    MPI_Finalize();
    return rc;
  }
  try {
    demonstrate<Workload>(s, n, start, reps, samples, wisdom, json_out);
  } catch (const std::exception& e) {  // the same on every rank: the workloads throw collectively
    if (rank == 0) fmt::print(stderr, "{}: {}\n", s.name, e.what());
    MPI_Finalize();
    return 1;
  }
  MPI_Finalize();  // after the workload's plans and communicators are gone
  return 0;
}

}  // namespace toru::tune::demo
