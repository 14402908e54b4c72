// tune_fft_demo: the tuner (toru::tune::tuner) on toru's 3D FFT, started from a deliberately bad
// configuration, against the best configuration found by timing every one (exhaustive search).
//
//   mpiexec -n 4 tune_fft_demo --n 64 --start decomposition=pencil,overlap=true,chunks=8,algorithm=pairwise
//
// Prints (and with --json writes) the start's time, the tuned configuration's time, the exhaustive
// best's time, all re-measured at the end interleaved (same noise for all three), and the tuner's
// measured gain. An iteration is one forward + one backward transform.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <complex>
#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "toru/core/error.hpp"
#include "toru/fft/fft3d.hpp"
#include "toru/tune/tuner.hpp"

namespace {

using json = nlohmann::json;
using cpx = std::complex<double>;

struct bench {
  std::unique_ptr<toru::fft::fft3d<double>> plan;
  std::vector<cpx> a, b;
  void build(std::int64_t n, const toru::tune::config& c) {
    plan = std::make_unique<toru::fft::fft3d<double>>(MPI_COMM_WORLD, std::array<std::int64_t, 3>{n, n, n},
                                                      toru::tune::apply(c));
    a.assign(plan->alloc_size(), cpx(1.0, 0.5));
    b.assign(plan->alloc_size(), cpx());
  }
  void iteration() {
    plan->forward(a.data(), b.data());
    plan->backward(b.data(), a.data(), toru::fft::scale::full);
  }
};

double max_time(double t) {
  double m = 0;
  MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return m;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

double time_config(bench& b, std::int64_t n, const toru::tune::config& c, int reps) {
  b.build(n, c);
  b.iteration();
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    const auto t0 = std::chrono::steady_clock::now();
    b.iteration();
    t.push_back(max_time(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()));
  }
  return *std::min_element(t.begin(), t.end());  // noise on a shared machine only adds time
}

toru::tune::config parse_start(const std::string& s) {
  toru::tune::config c = json::object();
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

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, P = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  CLI::App app{"tune_fft_demo: the tuner recovering the best FFT configuration from a bad start"};
  std::int64_t n = 64;
  std::string start_text = "decomposition=pencil,overlap=true,chunks=8,algorithm=pairwise", wisdom, json_out;
  int reps = 7, samples = 5;
  app.add_option("--n", n, "cube edge");
  app.add_option("--start", start_text, "the bad start: knob=value,...");
  app.add_option("--reps", reps, "repetitions per configuration in the exhaustive and final timings");
  app.add_option("--samples", samples, "tuner samples per candidate");
  app.add_option("--wisdom", wisdom, "wisdom file the tuner writes");
  app.add_option("--json", json_out, "write the result as JSON to this file (rank 0)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = rank == 0 ? app.exit(e) : 2;
    MPI_Finalize();
    return rc;
  }
  const auto knobs = toru::tune::fft_knobs();
  const toru::tune::config start = parse_start(start_text);

  // Exhaustive: every configuration (overlap=false ignores chunks: one of those).
  bench b;
  toru::tune::config best_ex;
  double best_ex_t = 1e300;
  int configs = 0;
  for (const auto& d : knobs[0].values)
    for (const auto& o : knobs[1].values)
      for (const auto& ch : knobs[2].values)
        for (const auto& al : knobs[3].values) {
          if (!o.get<bool>() && ch.get<int>() != 1) continue;
          const toru::tune::config c = {{"decomposition", d}, {"overlap", o}, {"chunks", ch}, {"algorithm", al}};
          double t = 0;
          try {
            t = time_config(b, n, c, reps);
          } catch (const toru::error&) {
            continue;  // not applicable here (bruck on a variable exchange): thrown on every rank
          }
          ++configs;
          if (t < best_ex_t) {
            best_ex_t = t;
            best_ex = c;
          }
        }

  // The tuner, from the bad start, as an application would run it.
  toru::tune::tuner t(
      MPI_COMM_WORLD, knobs, start,
      {.samples = samples, .warmup = 1, .wisdom = wisdom, .key = fmt::format("fft3d c2c {}^3 x{}", n, P)});
  b.build(n, t.current());
  int iterations = 0;
  const auto t0 = std::chrono::steady_clock::now();
  while (!t.done()) {
    b.iteration();
    ++iterations;
    bool changed = t.step();
    while (changed) {
      try {
        b.build(n, t.current());
        changed = false;
      } catch (const toru::error&) {
        changed = t.step_failed();
      }
    }
  }
  const double tuning_seconds = max_time(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());

  // Final: start, tuned and exhaustive best, interleaved.
  std::vector<double> ts, tt, tb;
  for (int r = 0; r < 3; ++r) {
    ts.push_back(time_config(b, n, start, reps));
    tt.push_back(time_config(b, n, t.best(), reps));
    tb.push_back(time_config(b, n, best_ex, reps));
  }
  const double s = median(ts), tu = median(tt), be = median(tb);
  if (rank == 0) {
    fmt::print("fft3d c2c {}^3 on {} ranks, iteration = forward + backward\n", n, P);
    fmt::print("  start      {:<70} {:9.3f} ms\n", toru::tune::to_text(start), s * 1e3);
    fmt::print("  tuned      {:<70} {:9.3f} ms  ({} iterations, {} candidates, {:.2f} s)\n",
               toru::tune::to_text(t.best()), tu * 1e3, iterations, t.report()["candidates"].size(), tuning_seconds);
    fmt::print("  exhaustive {:<70} {:9.3f} ms  ({} configurations)\n", toru::tune::to_text(best_ex), be * 1e3,
               configs);
    fmt::print("  tuned / best = {:.3f}; measured gain (start / tuned) = {:.2f}x (tuner's own estimate {:.2f}x)\n",
               tu / be, s / tu, t.gain());
    if (!json_out.empty()) {
      json j = {{"n", n},
                {"ranks", P},
                {"start", start},
                {"tuned", t.best()},
                {"exhaustive_best", best_ex},
                {"start_ms", s * 1e3},
                {"tuned_ms", tu * 1e3},
                {"best_ms", be * 1e3},
                {"tuned_over_best", tu / be},
                {"gain", s / tu},
                {"tuner", t.report()},
                {"iterations", iterations},
                {"configurations", configs}};
      std::FILE* f = std::fopen(json_out.c_str(), "w");
      if (f) {
        std::fputs(j.dump(1).c_str(), f);
        std::fclose(f);
      }
    }
  }
  MPI_Finalize();
  return 0;
}
