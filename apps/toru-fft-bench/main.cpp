// SPDX-License-Identifier: BSD-3-Clause
// toru-fft-bench: toru's 3D and 1D FFTs against FFTW-MPI (fftw_mpi_plan_dft_3d / _1d) on the same
// data, with the same planner flags, in the same run; or, with --simulate, the 1D/3D FFT on a
// torus from the topology model and the all-to-all simulator. On one node, also against the
// shared-memory limit: FFTW's threaded transform of the whole array, threads = ranks (--peers).
//
//   mpiexec -n 4 toru-fft-bench                                  # 3D 128^3 and 1D 2^22
//   mpiexec -n 4 toru-fft-bench --n3 256 --n1 16777216 --reps 7 --json
//   toru-fft-bench --simulate --torus 8x8x16,bw=425MB/s --n1 8589934592
#include <fftw3-mpi.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <memory>
#include <numbers>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "bench/bench_order.hpp"
#include "bench/fftw_threads_peer.hpp"
#include "common/cli.hpp"
#include "toru/comm/alltoall_simulate.hpp"
#include "toru/core/error.hpp"
#include "toru/core/mpi.hpp"
#include "toru/fft/fft1d.hpp"
#include "toru/fft/fft3d.hpp"
#include "toru/topology/network_model.hpp"
#include "toru/topology/torus.hpp"
#include "trace.hpp"

namespace {

using cpx = std::complex<double>;
using json = nlohmann::json;

struct settings {
  std::vector<std::int64_t> n3{128};
  std::vector<std::int64_t> n1{std::int64_t{1} << 22};
  int reps = 7;
  int warmup = 2;
  bool measure = false;
  bool transposed = false;
  std::string decomp = "auto";
  int chunks = 0;
  toru::fft::exchange_path path = toru::fft::exchange_path::automatic;
  bool simulate = false;
  toru::comm::network_model model = toru::comm::network_model::packet;
  std::string torus;
  double node_gflops = 10;
  bool json = false;
  std::string trace;         // directory for the per-rank event traces of toru's default plan
  bool candidates = false;   // also time every other applicable candidate of toru's table, forced
  bool r2c = true;           // a 3D r2c row after each c2c row
  bool limit = false;        // --peers fftw-threads: FFTW's threaded transform on rank 0, the others parked
  std::string limit_wisdom;  // FFTW wisdom file for the limit's plans (read before, written after planning)
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The input: a few plane waves with known amplitudes, so every rank checks its own part of the
// output against the exact transform (no gather). Timing does not depend on the values.
struct wave {
  std::array<std::int64_t, 3> k;
  cpx amplitude;
};
const std::vector<wave> waves = {{{1, 2, 3}, {1.0, 0.5}}, {{5, 0, 7}, {-0.25, 2.0}}, {{0, 9, 1}, {0.75, -1.5}}};

std::array<std::int64_t, 3> wrap(std::array<std::int64_t, 3> k, std::array<std::int64_t, 3> n) {
  for (int a = 0; a < 3; ++a) k[a] %= n[a];
  return k;
}

cpx input3(std::array<std::int64_t, 3> i, std::array<std::int64_t, 3> n) {
  cpx v = 0;
  for (const auto& w : waves) {
    const auto k = wrap(w.k, n);
    double ph = 0;
    for (int a = 0; a < 3; ++a) ph += static_cast<double>(k[a] * i[a] % n[a]) / static_cast<double>(n[a]);
    v += w.amplitude * std::polar(1.0, 2 * std::numbers::pi * ph);
  }
  return v;
}
cpx spectrum3(std::array<std::int64_t, 3> k, std::array<std::int64_t, 3> n) {
  const double N = static_cast<double>(n[0] * n[1] * n[2]);
  cpx v = 0;
  for (const auto& w : waves)
    if (wrap(w.k, n) == k) v += N * w.amplitude;
  return v;
}
cpx input1(std::int64_t i, std::int64_t n) {
  cpx v = 0;
  for (const auto& w : waves) {
    const std::int64_t k = (w.k[0] * 1000 + w.k[1] * 10 + w.k[2]) % n;
    v += w.amplitude * std::polar(1.0, 2 * std::numbers::pi * static_cast<double>(k * i % n) / static_cast<double>(n));
  }
  return v;
}
cpx spectrum1(std::int64_t k, std::int64_t n) {
  cpx v = 0;
  for (const auto& w : waves)
    if ((w.k[0] * 1000 + w.k[1] * 10 + w.k[2]) % n == k) v += static_cast<double>(n) * w.amplitude;
  return v;
}

// Max over ranks of the largest |got - exact| relative to the largest exact coefficient.
double max_rel_error(double local_err, double scale) {
  double g = 0;
  MPI_Allreduce(&local_err, &g, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return g / scale;
}

// One contender of a comparison: refills its input (FFTW-MPI may overwrite it; refilled outside
// the timing for everybody) and runs one transform.
struct contender {
  std::function<void()> fill, run;
  std::vector<double> times;
  std::vector<const contender*> after;  // per timed call: the contender run just before it (or null)
  std::function<double()> self_timed;   // if set: runs instead of `run` and returns its own seconds
};

// With --trace, the run of toru's default plan records toru's events (trace.hpp), each transform
// marked with its kind, points and count (warm-up runs included); the other contenders run untraced.
std::function<void()> traced(const settings& s, const char* label, double points, std::function<void()> run) {
  if (s.trace.empty()) return run;
  return [label, points, run = std::move(run), count = 0]() mutable {
    toru_fft_bench::trace_begin();
    toru_fft_bench::trace_mark(label, static_cast<std::uint64_t>(points), count++);
    run();
    toru_fft_bench::trace_end();
  };
}

// Warm-up, then for every rep each contender once, behind a barrier, timed as the max over ranks:
// on a shared, noisy machine every contender sees the same noise. The order is balanced
// (bench/bench_order.hpp): a rotation ran each contender always right after the same one, whose
// caches (or, on the emulated torus, whose TCP connections) it inherited.
void time_interleaved(const settings& s, std::vector<contender*> cs) {
  const contender* prev = nullptr;
  for (int r = -s.warmup; r < s.reps; ++r)
    for (const std::size_t i : toru::apps::balanced_order(cs.size(), r)) {
      contender& c = *cs[i];
      c.fill();
      MPI_Barrier(MPI_COMM_WORLD);
      const auto t0 = std::chrono::steady_clock::now();
      if (!c.self_timed) c.run();
      double dt =
          c.self_timed ? c.self_timed() : std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      double mx = 0;
      MPI_Allreduce(&dt, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      if (r >= 0) {
        c.times.push_back(mx);
        c.after.push_back(prev);
      }
      prev = &c;
    }
}

// TORU_FFT_STRATEGY set to `value` (or unset: nullptr) while one plan is built, as it was after.
// The bench's own forced alternative (all-to-all, no overlap) is built with it unset: the strategy
// a user forces on the plan under test need not apply to that path.
class scoped_strategy_env {
 public:
  explicit scoped_strategy_env(const char* value) {
    if (const char* v = std::getenv(name)) saved_ = v;
    if (value)
      ::setenv(name, value, 1);
    else
      ::unsetenv(name);
  }
  ~scoped_strategy_env() {
    if (saved_)
      ::setenv(name, saved_->c_str(), 1);
    else
      ::unsetenv(name);
  }
  scoped_strategy_env(const scoped_strategy_env&) = delete;
  scoped_strategy_env& operator=(const scoped_strategy_env&) = delete;

 private:
  static constexpr const char* name = "TORU_FFT_STRATEGY";
  std::optional<std::string> saved_;
};

// --candidates: every other applicable candidate of the default plan's strategy table, built with
// TORU_FFT_STRATEGY set to its name (rank 0's value decides, set on all), each a contender timed in
// a rotation with the choice, so that the choice can be compared with the best forced alternative.
template <class Plan>
struct forced_plans {
  std::vector<std::string> names;
  std::vector<std::unique_ptr<Plan>> plans;
  std::vector<contender> runs;
  bool enabled = false;
  double chosen_s = 0;

  template <class Make, class Run>
  forced_plans(const settings& s, const Plan& chosen, Make&& make, Run&& run_one, const std::function<void()>& fill,
               std::vector<const char*> extras = {}) {
    enabled = s.candidates;
    if (!enabled) return;
    std::vector<std::string> all = chosen.candidates();
    // ESTIMATE's table leaves the direct window out (it would hold node arrays it never takes):
    // tried too, where it applies (a refusal is agreed on every rank).
    for (const char* extra : extras)
      if (std::find(all.begin(), all.end(), extra) == all.end()) all.emplace_back(extra);
    for (const std::string& name : all) {
      if (name == chosen.strategy()) continue;
      const scoped_strategy_env env(name.c_str());
      try {
        plans.push_back(make());
        names.push_back(name);
      } catch (const toru::error&) {
        if (std::find(extras.begin(), extras.end(), name) == extras.end()) throw;
      }
    }
    runs.reserve(plans.size());  // contenders are referenced by address
    for (auto& p : plans) runs.push_back({fill, [&run_one, q = p.get()] { run_one(*q); }, {}, {}, {}});
  }
  // A rotation of their own after the comparison with FFTW-MPI, with the choice timed again in it:
  // more buffers and plans in the rotation change what the others find in the caches (FFTW-MPI
  // needed several more warm-ups beside six toru plans), so the main figures stay as without them.
  void time(const settings& s, contender& choice) {
    if (!enabled) return;
    std::vector<contender*> cs{&choice};
    for (auto& r : runs) cs.push_back(&r);
    time_interleaved(s, cs);
    chosen_s = median(choice.times);
  }
  // "candidates": {name: median s} with the choice's own median, the best of them and the ratio.
  void report(json& row, const std::string& chosen) const {
    if (!enabled) return;
    json c = json::object();
    c[chosen] = chosen_s;
    std::string best = chosen;
    double best_s = chosen_s;
    for (std::size_t i = 0; i < names.size(); ++i) {
      const double t = median(runs[i].times);
      c[names[i]] = t;
      if (t < best_s) best = names[i], best_s = t;
    }
    row["candidates"] = c;
    row["best_candidate"] = best;
    row["ratio_to_best_candidate"] = chosen_s / best_s;
  }
};

// toru's default plan (timed as `on` and again as `twice`) over its calls that did not follow
// FFTW-MPI's: on the emulated torus a call right after MPI_Alltoall inherits its TCP connections'
// losses and congestion state, which a loop of toru transforms alone would not. The ratio to
// FFTW-MPI stays on all calls.
void report_not_after(json& row, const contender& on, const contender& twice, const contender& fftw) {
  std::vector<double> v;
  std::size_t calls = 0;
  for (const contender* c : {&on, &twice})
    for (std::size_t i = 0; i < c->times.size(); ++i, ++calls)
      if (c->after[i] != &fftw) v.push_back(c->times[i]);
  row["toru_not_after_fftw_median_s"] = v.empty() ? json(nullptr) : json(median(v));
  row["toru_not_after_fftw_calls"] = v.size();
  row["toru_calls"] = calls;
}

// MEASURE's plan-time figures per candidate, beside the bench's own times of them (--candidates):
// a pick that the bench finds slow shows here whether the planner's timing or the bench differed.
void report_planner(json& row, const std::vector<std::pair<std::string, double>>& seconds) {
  if (seconds.empty()) return;
  json t = json::object();
  for (const auto& [name, s] : seconds) t[name] = s;
  row["planner_seconds"] = t;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double max_over_ranks(double v) {
  double m = 0;
  MPI_Allreduce(&v, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return m;
}

// The shared-memory limit (--peers fftw-threads): FFTW's threaded transform of the whole array on
// rank 0 with as many threads as ranks, planned with the bench's flag. Every step that keeps rank 0
// busy (planning, the timed call, the check) ends in park(), so that the other ranks sleep instead
// of spinning in MPI and leave the cores to FFTW's threads. A failure on rank 0 is agreed on all.
struct limit_peer {
  std::unique_ptr<toru::apps::fftw_threads_peer> peer;  // rank 0 only
  std::vector<cpx> saved;
  contender c;
  bool enabled = false;
  bool from_wisdom = false;  // rank 0: the limit's plan came from --limit-wisdom (no plan time)

  limit_peer(const settings& s, toru::apps::peer_kind kind, std::array<std::int64_t, 3> n, int P, int rank,
             const std::function<cpx(std::int64_t)>& input) {
    enabled = s.limit;
    if (!enabled) return;
    std::exception_ptr failed;
    if (rank == 0) try {
        // The limit plans from FFTW's wisdom of nothing (or of the file alone), and the process
        // keeps none of it: its plan time is FFTW's from scratch, as toru's is, and neither toru
        // nor FFTW-MPI planned later in this run profits from the limit's plans.
        const toru::apps::fftw_wisdom_aside aside;
        const unsigned flags = s.measure ? FFTW_MEASURE : FFTW_ESTIMATE;
        if (!s.limit_wisdom.empty()) {
          // FFTW's own idiom: a plan the file already holds is made at once (FFTW_WISDOM_ONLY),
          // else planned in full and the file rewritten. FFTW's MEASURE of a 2^22 1D transform
          // took 174 s on the quiet 2-core VM; its plan time is reported only when planned.
          toru::apps::import_fftw_wisdom(s.limit_wisdom.c_str());  // a missing file holds nothing
          try {
            peer = std::make_unique<toru::apps::fftw_threads_peer>(kind, n, P, flags | FFTW_WISDOM_ONLY);
            from_wisdom = true;
          } catch (const toru::error&) {
          }
        }
        if (!peer) {
          if (s.measure && !s.json)
            fmt::print(stderr,
                       "toru-fft-bench: planning the limit with FFTW_MEASURE ({} threads; minutes for a large "
                       "1D transform; --limit-wisdom FILE keeps the plan)\n",
                       P);
          peer = std::make_unique<toru::apps::fftw_threads_peer>(kind, n, P, flags);
          if (!s.limit_wisdom.empty() && !toru::apps::export_fftw_wisdom(s.limit_wisdom.c_str()))
            throw toru::error(toru::errc::io, "--limit-wisdom: cannot write FFTW's wisdom to " + s.limit_wisdom);
        }
        saved.resize(peer->in_count());
        for (std::int64_t i = 0; i < peer->in_count(); ++i) saved[i] = input(i);
      } catch (...) {
        failed = std::current_exception();
      }
    toru::apps::park(MPI_COMM_WORLD);
    toru::validate_collectively(MPI_COMM_WORLD, [&] {
      if (failed) std::rethrow_exception(failed);
    });
    c.fill = [this, kind] {
      if (!peer) return;
      if (kind == toru::apps::peer_kind::r2c_3d)
        std::transform(saved.begin(), saved.end(), peer->in_real(), [](cpx v) { return v.real(); });
      else
        std::copy(saved.begin(), saved.end(), peer->in_complex());
    };
    c.self_timed = [this] {
      double dt = 0;
      if (peer) {
        const auto t0 = std::chrono::steady_clock::now();
        peer->execute();
        dt = seconds_since(t0);
      }
      toru::apps::park(MPI_COMM_WORLD);
      return dt;
    };
  }
  // Max relative error of rank 0's output against the exact spectrum (output index -> value).
  double check(const std::function<cpx(std::int64_t)>& exact, double scale) {
    double e = 0;
    if (peer) {
      c.fill();
      peer->execute();
      for (std::int64_t i = 0; i < peer->out_count(); ++i) e = std::max(e, std::abs(peer->out()[i] - exact(i)));
    }
    toru::apps::park(MPI_COMM_WORLD);
    return max_over_ranks(e) / scale;
  }
  // limit_* figures and toru/limit: the median of the timed calls, their range, and the range of
  // the per-rep ratios (toru's call and the limit's in the same rep, the same noise).
  void report(json& row, const contender& toru, double toru_plan_s, double err) const {
    row["toru_plan_s"] = toru_plan_s;
    if (!enabled) return;
    const auto [lo, hi] = std::minmax_element(c.times.begin(), c.times.end());
    double plan_s = peer ? peer->plan_seconds() : 0;
    int wisdom = from_wisdom;
    MPI_Bcast(&plan_s, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Bcast(&wisdom, 1, MPI_INT, 0, MPI_COMM_WORLD);
    int threads = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &threads);
    row["limit"] = "fftw-threads";
    row["limit_threads"] = threads;
    row["limit_median_s"] = median(c.times);
    row["limit_min_s"] = *lo;
    row["limit_max_s"] = *hi;
    row["limit_plan_s"] = wisdom ? json(nullptr) : json(plan_s);  // from wisdom: not planned here
    row["limit_plan_from_wisdom"] = wisdom != 0;
    ratios(row, "ratio_to_limit", toru);
    row["limit_max_rel_error"] = err;
  }
  // The same plan into its shared_out(): toru_shared_out_median_s and, with a limit,
  // shared_out_ratio_to_limit(_min, _max).
  void report_shared(json& row, const contender& shared) const {
    row["toru_shared_out_median_s"] = median(shared.times);
    if (enabled) ratios(row, "shared_out_ratio_to_limit", shared);
  }

 private:
  // key = median / median; key_min, key_max = the range of the per-rep ratios (toru's call and the
  // limit's in the same rep, the same noise).
  void ratios(json& row, const std::string& key, const contender& toru) const {
    std::vector<double> r;
    for (std::size_t i = 0; i < c.times.size() && i < toru.times.size(); ++i) r.push_back(toru.times[i] / c.times[i]);
    const auto [rlo, rhi] = std::minmax_element(r.begin(), r.end());
    row[key] = median(toru.times) / median(c.times);
    row[key + "_min"] = *rlo;
    row[key + "_max"] = *rhi;
  }
};

// The plan's shared_out(), its setup (a window lent, MEASURE's tile widths timed) reported as
// toru_shared_out_setup_s: plan time too.
template <class Plan>
cpx* timed_shared_out(Plan& plan, json& row) {
  const auto t0 = std::chrono::steady_clock::now();
  cpx* const shared = plan.shared_out();
  row["toru_shared_out_setup_s"] = max_over_ranks(seconds_since(t0));
  return shared;
}

double gflops(double n, double seconds) { return 5 * n * std::log2(n) / seconds * 1e-9; }

json bench3d(const settings& s, std::int64_t n0, int P, int rank) {
  const std::array<std::int64_t, 3> n{n0, n0, n0};
  const double N = static_cast<double>(n0 * n0 * n0);
  const unsigned flags = s.measure ? FFTW_MEASURE : FFTW_ESTIMATE;
  toru::fft::options3d opts{.decomp = s.decomp == "slab"     ? toru::fft::decomposition::slab
                                      : s.decomp == "pencil" ? toru::fft::decomposition::pencil
                                                             : toru::fft::decomposition::automatic,
                            .output = s.transposed ? toru::fft::order::transposed : toru::fft::order::natural,
                            .planner = s.measure ? toru::fft::effort::measure : toru::fft::effort::estimate,
                            .chunks = s.chunks};
  json row{{"kind", "3d"}, {"n", fmt::format("{}x{}x{}", n0, n0, n0)}, {"points", N}, {"ranks", P}};
  opts.overlap = true;
  opts.path = s.path;
  opts.comm.torus = s.torus;  // the API's way to describe the machine (TORU_TORUS is the other)
  const auto plan_t0 = std::chrono::steady_clock::now();
  toru::fft::fft3d<double> plan(MPI_COMM_WORLD, n, opts);
  const double toru_plan_s = max_over_ranks(seconds_since(plan_t0));
  // The forced alternative: all-to-all without overlap (toru's plan before the strategy table).
  opts.overlap = false;
  opts.path = toru::fft::exchange_path::alltoall;
  auto plan_serial = [&] {
    const scoped_strategy_env unset(nullptr);
    return toru::fft::fft3d<double>(MPI_COMM_WORLD, n, opts);
  }();
  std::vector<cpx> in(plan.alloc_size()), out(plan.alloc_size());
  cpx* const shared = timed_shared_out(plan, row);
  std::vector<std::byte> ws(std::max(plan.workspace_size(), plan_serial.workspace_size()));
  toru::fft::for_each_point(plan.inbox(), [&](auto g, std::int64_t i) { in[i] = input3(g, n); });
  const std::vector<cpx> saved = in;
  auto fill = [&] { std::copy(saved.begin(), saved.end(), in.begin()); };
  contender t_on{fill, traced(s, "3d", N, [&] { plan.forward(in.data(), out.data(), ws.data()); }), {}, {}, {}};
  // The same plan writing into its shared_out() (node memory: docs/fft.md, "Shared output").
  contender t_shared{fill, [&] { plan.forward(in.data(), shared, ws.data()); }, {}, {}, {}};
  contender t_off{fill, [&] { plan_serial.forward(in.data(), out.data(), ws.data()); }, {}, {}, {}};
  // The same plan as a contender of its own: the spread between the two is the noise floor.
  contender t_twice{fill, [&] { plan.forward(in.data(), out.data(), ws.data()); }, {}, {}, {}};
  row["decomposition"] = std::string(toru::fft::to_string(plan.decomp()));
  row["strategy"] = plan.strategy();
  report_planner(row, plan.planner_seconds());
  row["no_overlap_strategy"] = plan_serial.strategy();
  row["grid"] = {plan.grid()[0], plan.grid()[1]};

  // FFTW-MPI: slab over n0 (its only decomposition), same flags and output order.
  ptrdiff_t local_n0 = 0, start0 = 0, local_n1 = 0, start1 = 0;
  const unsigned mpi_flags = flags | (s.transposed ? FFTW_MPI_TRANSPOSED_OUT : 0);
  const ptrdiff_t alloc =
      fftw_mpi_local_size_3d_transposed(n0, n0, n0, MPI_COMM_WORLD, &local_n0, &start0, &local_n1, &start1);
  cpx* fin = reinterpret_cast<cpx*>(fftw_alloc_complex(std::max<ptrdiff_t>(alloc, 1)));
  cpx* fout = reinterpret_cast<cpx*>(fftw_alloc_complex(std::max<ptrdiff_t>(alloc, 1)));
  fftw_plan fp = fftw_mpi_plan_dft_3d(n0, n0, n0, reinterpret_cast<fftw_complex*>(fin),
                                      reinterpret_cast<fftw_complex*>(fout), MPI_COMM_WORLD, FFTW_FORWARD, mpi_flags);
  for (ptrdiff_t i = 0; i < local_n0; ++i)
    for (std::int64_t j = 0; j < n0; ++j)
      for (std::int64_t k = 0; k < n0; ++k) fin[(i * n0 + j) * n0 + k] = input3({start0 + i, j, k}, n);
  const std::vector<cpx> fsaved(fin, fin + local_n0 * n0 * n0);
  contender t_fftw{[&] { std::copy(fsaved.begin(), fsaved.end(), fin); }, [&] { fftw_execute(fp); }, {}, {}, {}};
  opts.overlap = true;
  opts.path = s.path;
  const auto run3 = [&](const toru::fft::fft3d<double>& p) { p.forward(in.data(), out.data(), ws.data()); };
  forced_plans<toru::fft::fft3d<double>> forced(
      s, plan, [&] { return std::make_unique<toru::fft::fft3d<double>>(MPI_COMM_WORLD, n, opts); }, run3, fill,
      {"middle layout M, direct window"});
  for (const auto& p : forced.plans)
    if (p->workspace_size() > ws.size()) ws.resize(p->workspace_size());
  limit_peer limit(s, toru::apps::peer_kind::c2c_3d, n, P, rank, [&](std::int64_t i) {
    return input3({i / (n0 * n0), i / n0 % n0, i % n0}, n);
  });
  std::vector<contender*> cs{&t_on, &t_off, &t_fftw, &t_twice, &t_shared};
  if (limit.enabled) cs.push_back(&limit.c);
  time_interleaved(s, cs);
  contender t_choice{fill, [&] { plan.forward(in.data(), out.data(), ws.data()); }, {}, {}, {}};
  forced.time(s, t_choice);
  const double limit_err = limit.enabled ? limit.check(
                                               [&](std::int64_t i) {
                                                 return spectrum3({i / (n0 * n0), i / n0 % n0, i % n0}, n);
                                               },
                                               N * 2.1)
                                         : 0;
  limit.report(row, t_on, toru_plan_s, limit_err);
  limit.report_shared(row, t_shared);

  double e = 0;
  for (cpx* o : {out.data(), shared}) {
    plan.forward(in.data(), o);
    toru::fft::for_each_point(plan.outbox(),
                              [&](auto k, std::int64_t i) { e = std::max(e, std::abs(o[i] - spectrum3(k, n))); });
  }
  const double toru_err = max_rel_error(e, N * 2.1);
  e = 0;
  if (s.transposed) {  // [n1 local][n0][n2]
    for (ptrdiff_t j = 0; j < local_n1; ++j)
      for (std::int64_t i = 0; i < n0; ++i)
        for (std::int64_t k = 0; k < n0; ++k)
          e = std::max(e, std::abs(fout[(j * n0 + i) * n0 + k] - spectrum3({i, start1 + j, k}, n)));
  } else {
    for (ptrdiff_t i = 0; i < local_n0; ++i)
      for (std::int64_t j = 0; j < n0; ++j)
        for (std::int64_t k = 0; k < n0; ++k)
          e = std::max(e, std::abs(fout[(i * n0 + j) * n0 + k] - spectrum3({start0 + i, j, k}, n)));
  }
  const double fftw_err = max_rel_error(e, N * 2.1);
  fftw_destroy_plan(fp);
  fftw_free(fin);
  fftw_free(fout);
  const double toru_t[2] = {median(t_off.times), median(t_on.times)}, fftw_t = median(t_fftw.times);
  row["toru_median_s"] = toru_t[1];
  row["toru_no_overlap_median_s"] = toru_t[0];
  row["fftw_mpi_median_s"] = fftw_t;
  row["ratio"] = toru_t[1] / fftw_t;
  row["overlap_gain"] = toru_t[0] / toru_t[1];
  row["noise_floor"] = std::abs(toru_t[1] / median(t_twice.times) - 1);
  report_not_after(row, t_on, t_twice, t_fftw);
  row["toru_gflops"] = gflops(N, toru_t[1]);
  row["fftw_mpi_gflops"] = gflops(N, fftw_t);
  forced.report(row, plan.strategy());
  row["max_rel_error"] = toru_err;
  row["fftw_mpi_max_rel_error"] = fftw_err;
  return row;
}

// The real part of the 3D input; its spectrum is the Hermitian part of the complex one's.
cpx spectrum3_real(std::array<std::int64_t, 3> k, std::array<std::int64_t, 3> n) {
  std::array<std::int64_t, 3> minus{};
  for (int a = 0; a < 3; ++a) minus[a] = (n[a] - k[a]) % n[a];
  return 0.5 * (spectrum3(k, n) + std::conj(spectrum3(minus, n)));
}

// 3D r2c: toru's plan against the shared-memory limit (FFTW-MPI's r2c is not timed here).
json bench3d_r2c(const settings& s, std::int64_t n0, int P, int rank) {
  const std::array<std::int64_t, 3> n{n0, n0, n0};
  const double N = static_cast<double>(n0 * n0 * n0);
  toru::fft::options3d opts{.decomp = s.decomp == "slab"     ? toru::fft::decomposition::slab
                                      : s.decomp == "pencil" ? toru::fft::decomposition::pencil
                                                             : toru::fft::decomposition::automatic,
                            .output = s.transposed ? toru::fft::order::transposed : toru::fft::order::natural,
                            .planner = s.measure ? toru::fft::effort::measure : toru::fft::effort::estimate,
                            .chunks = s.chunks};
  opts.overlap = true;
  opts.path = s.path;
  opts.comm.torus = s.torus;
  json row{{"kind", "3d-r2c"}, {"n", fmt::format("{}x{}x{}", n0, n0, n0)}, {"points", N}, {"ranks", P}};
  const auto plan_t0 = std::chrono::steady_clock::now();
  toru::fft::fft3d_r2c<double> plan(MPI_COMM_WORLD, n, opts);
  const double toru_plan_s = max_over_ranks(seconds_since(plan_t0));
  std::vector<double> in(2 * plan.alloc_size());
  std::vector<cpx> out(plan.alloc_size());
  cpx* const shared = timed_shared_out(plan, row);
  std::vector<std::byte> ws(plan.workspace_size());
  toru::fft::for_each_point(plan.inbox(), [&](auto g, std::int64_t i) { in[i] = input3(g, n).real(); });
  const std::vector<double> saved = in;
  auto fill = [&] { std::copy(saved.begin(), saved.end(), in.begin()); };
  contender t_on{fill, [&] { plan.forward(in.data(), out.data(), ws.data()); }, {}, {}, {}};
  contender t_twice{fill, [&] { plan.forward(in.data(), out.data(), ws.data()); }, {}, {}, {}};
  contender t_shared{fill, [&] { plan.forward(in.data(), shared, ws.data()); }, {}, {}, {}};
  row["decomposition"] = std::string(toru::fft::to_string(plan.decomp()));
  row["strategy"] = plan.strategy();
  row["grid"] = {plan.grid()[0], plan.grid()[1]};
  limit_peer limit(s, toru::apps::peer_kind::r2c_3d, n, P, rank, [&](std::int64_t i) {
    return input3({i / (n0 * n0), i / n0 % n0, i % n0}, n);
  });
  std::vector<contender*> cs{&t_on, &t_twice, &t_shared};
  if (limit.enabled) cs.push_back(&limit.c);
  time_interleaved(s, cs);
  const std::int64_t m2 = n0 / 2 + 1;
  const double limit_err = limit.enabled ? limit.check(
                                               [&](std::int64_t i) {
                                                 return spectrum3_real({i / (n0 * m2), i / m2 % n0, i % m2}, n);
                                               },
                                               N * 2.1)
                                         : 0;
  limit.report(row, t_on, toru_plan_s, limit_err);
  limit.report_shared(row, t_shared);
  double e = 0;
  for (cpx* o : {out.data(), shared}) {
    plan.forward(in.data(), o);
    toru::fft::for_each_point(plan.outbox(),
                              [&](auto k, std::int64_t i) { e = std::max(e, std::abs(o[i] - spectrum3_real(k, n))); });
  }
  const double t = median(t_on.times);
  row["toru_median_s"] = t;
  row["fftw_mpi_median_s"] = nullptr;
  row["ratio"] = nullptr;
  row["noise_floor"] = std::abs(t / median(t_twice.times) - 1);
  row["toru_gflops"] = gflops(N, t);
  row["max_rel_error"] = max_rel_error(e, N * 2.1);
  row["fftw_mpi_max_rel_error"] = nullptr;
  return row;
}

json bench1d(const settings& s, std::int64_t n, int P, int rank) {
  const double N = static_cast<double>(n);
  const unsigned flags = s.measure ? FFTW_MEASURE : FFTW_ESTIMATE;
  toru::fft::options1d opts{.output = s.transposed ? toru::fft::order::transposed : toru::fft::order::natural,
                            .planner = s.measure ? toru::fft::effort::measure : toru::fft::effort::estimate,
                            .chunks = s.chunks};
  json row{{"kind", "1d"}, {"n", n}, {"points", N}, {"ranks", P}};
  opts.overlap = true;
  opts.path = s.path;
  opts.comm.torus = s.torus;  // the API's way to describe the machine (TORU_TORUS is the other)
  const auto plan_t0 = std::chrono::steady_clock::now();
  toru::fft::fft1d<double> plan(MPI_COMM_WORLD, n, opts);
  const double toru_plan_s = max_over_ranks(seconds_since(plan_t0));
  opts.overlap = false;
  opts.path = toru::fft::exchange_path::alltoall;
  auto plan_serial = [&] {
    const scoped_strategy_env unset(nullptr);
    return toru::fft::fft1d<double>(MPI_COMM_WORLD, n, opts);
  }();
  std::vector<cpx> in(plan.alloc_size()), out(plan.alloc_size());
  std::vector<std::byte> ws(std::max(plan.workspace_size(), plan_serial.workspace_size()));
  for (std::int64_t i = 0; i < plan.in_count(); ++i) in[i] = input1(plan.in_start() + i, n);
  const std::vector<cpx> saved = in;
  auto fill = [&] { std::copy(saved.begin(), saved.end(), in.begin()); };
  contender t_on{fill, traced(s, "1d", N, [&] { plan.forward(in.data(), out.data(), ws.data()); }), {}, {}, {}};
  contender t_off{fill, [&] { plan_serial.forward(in.data(), out.data(), ws.data()); }, {}, {}, {}};
  contender t_twice{fill, [&] { plan.forward(in.data(), out.data(), ws.data()); }, {}, {}, {}};
  row["strategy"] = plan.strategy();
  report_planner(row, plan.planner_seconds());
  row["no_overlap_strategy"] = plan_serial.strategy();
  row["n1"] = plan.n1();
  row["n2"] = plan.n2();

  ptrdiff_t ni = 0, istart = 0, no = 0, ostart = 0;
  const unsigned mpi_flags = flags | (s.transposed ? FFTW_MPI_SCRAMBLED_OUT : 0);
  const ptrdiff_t alloc =
      fftw_mpi_local_size_1d(n, MPI_COMM_WORLD, FFTW_FORWARD, mpi_flags, &ni, &istart, &no, &ostart);
  cpx* fin = reinterpret_cast<cpx*>(fftw_alloc_complex(std::max<ptrdiff_t>(alloc, 1)));
  cpx* fout = reinterpret_cast<cpx*>(fftw_alloc_complex(std::max<ptrdiff_t>(alloc, 1)));
  fftw_plan fp = fftw_mpi_plan_dft_1d(n, reinterpret_cast<fftw_complex*>(fin), reinterpret_cast<fftw_complex*>(fout),
                                      MPI_COMM_WORLD, FFTW_FORWARD, mpi_flags);
  for (ptrdiff_t i = 0; i < ni; ++i) fin[i] = input1(istart + i, n);
  const std::vector<cpx> fsaved(fin, fin + ni);
  contender t_fftw{[&] { std::copy(fsaved.begin(), fsaved.end(), fin); }, [&] { fftw_execute(fp); }, {}, {}, {}};
  opts.overlap = true;
  opts.path = s.path;
  const auto run1 = [&](const toru::fft::fft1d<double>& p) { p.forward(in.data(), out.data(), ws.data()); };
  forced_plans<toru::fft::fft1d<double>> forced(
      s, plan, [&] { return std::make_unique<toru::fft::fft1d<double>>(MPI_COMM_WORLD, n, opts); }, run1, fill);
  for (const auto& p : forced.plans)
    if (p->workspace_size() > ws.size()) ws.resize(p->workspace_size());
  limit_peer limit(s, toru::apps::peer_kind::c2c_1d, {n, 1, 1}, P, rank, [&](std::int64_t i) { return input1(i, n); });
  // FFTW-MPI cannot plan some sizes (e.g. primes); toru is then timed without it
  std::vector<contender*> cs{&t_on, &t_off, &t_twice};
  if (fp) cs.push_back(&t_fftw);
  if (limit.enabled) cs.push_back(&limit.c);
  time_interleaved(s, cs);
  contender t_choice{fill, [&] { plan.forward(in.data(), out.data(), ws.data()); }, {}, {}, {}};
  forced.time(s, t_choice);
  const double limit_err = limit.enabled ? limit.check([&](std::int64_t i) { return spectrum1(i, n); }, N * 2.1) : 0;
  limit.report(row, t_on, toru_plan_s, limit_err);

  plan.forward(in.data(), out.data());
  double e = 0;
  for (std::int64_t i = 0; i < plan.out_count(); ++i) {
    std::int64_t k = plan.out_start() + i;
    if (s.transposed) k = k / plan.n2() + plan.n1() * (k % plan.n2());
    e = std::max(e, std::abs(out[i] - spectrum1(k, n)));
  }
  const double toru_err = max_rel_error(e, N * 2.1);
  double fftw_err = -1;
  if (fp) {
    if (!s.transposed) {  // FFTW's scrambled order is not documented well enough to check
      e = 0;
      for (ptrdiff_t i = 0; i < no; ++i) e = std::max(e, std::abs(fout[i] - spectrum1(ostart + i, n)));
      fftw_err = max_rel_error(e, N * 2.1);
    }
    fftw_destroy_plan(fp);
  }
  fftw_free(fin);
  fftw_free(fout);
  const double toru_t[2] = {median(t_off.times), median(t_on.times)};
  const double fftw_t = fp ? median(t_fftw.times) : 0;
  row["toru_median_s"] = toru_t[1];
  row["toru_no_overlap_median_s"] = toru_t[0];
  row["fftw_mpi_median_s"] = fp ? json(fftw_t) : json(nullptr);
  row["ratio"] = fp ? json(toru_t[1] / fftw_t) : json(nullptr);
  row["overlap_gain"] = toru_t[0] / toru_t[1];
  row["noise_floor"] = std::abs(toru_t[1] / median(t_twice.times) - 1);
  if (fp) report_not_after(row, t_on, t_twice, t_fftw);
  row["toru_gflops"] = gflops(N, toru_t[1]);
  row["fftw_mpi_gflops"] = fp ? json(gflops(N, fftw_t)) : json(nullptr);
  forced.report(row, plan.strategy());
  row["max_rel_error"] = toru_err;
  row["fftw_mpi_max_rel_error"] = fftw_err >= 0 ? json(fftw_err) : json(nullptr);
  return row;
}

// Communication-bound model on a torus, one rank per node: k all-to-alls of the whole complex
// double array (m = 16 N / P^2 bytes per pair), each simulated with the indirect algorithm; the
// local FFTs (5 N log2 N / P flops per node at --node-gflops) overlap the exchanges chunk by chunk,
// leaving one chunk's worth exposed at each end. Ceiling (docs/fft.md): 5 N log2 N / (k T_min).
json simulate_one(const settings& s, const toru::topology::torus& t, const std::string& kind, double N, int k) {
  const double P = static_cast<double>(t.size());
  const double m = 16.0 * N / (P * P);
  const auto a2a = toru::comm::simulate_alltoall(t, toru::comm::alltoall_algorithm::indirect, m, {.model = s.model});
  const double t_bound = toru::topology::alltoall_bound(t, m);
  const double flops = 5 * N * std::log2(N);
  const double compute = flops / P / (s.node_gflops * 1e9);
  const int C = std::max(1, a2a.chunks);
  // Per exchange: the slower of communication and this exchange's share of compute, plus the
  // faster one's single chunk that cannot overlap (pipeline fill/drain).
  const double per_compute = compute / k, per_comm = a2a.seconds;
  const double overlapped = k * (std::max(per_comm, per_compute) + std::min(per_comm, per_compute) / C);
  const double serial = k * (per_comm + per_compute);
  const double ceiling = flops / (k * t_bound);
  return json{{"kind", kind},
              {"n", N},
              {"ranks", t.size()},
              {"torus", t.to_string()},
              {"alltoalls", k},
              {"alltoall_simulated_s", per_comm},
              {"alltoall_bound_s", t_bound},
              {"alltoall_percent_of_bound", a2a.percent_of_bound},
              {"network_model", toru::comm::to_string(a2a.model)},
              {"chunks", C},
              {"fft_simulated_s", overlapped},
              {"fft_no_overlap_s", serial},
              {"ceiling_gflops", ceiling * 1e-9},
              {"simulated_gflops", flops / overlapped * 1e-9},
              {"percent_of_ceiling", 100 * flops / overlapped / ceiling},
              {"percent_of_ceiling_no_overlap", 100 * flops / serial / ceiling}};
}

int simulate(const settings& s) {
  if (s.torus.empty()) throw toru::error(toru::errc::invalid_argument, "--simulate needs --torus SPEC");
  const auto t = toru::topology::torus::parse(s.torus);
  json rows = json::array();
  for (auto n : s.n1) rows.push_back(simulate_one(s, t, "1d", static_cast<double>(n), s.transposed ? 2 : 3));
  for (auto n : s.n3) {
    const double N = static_cast<double>(n) * n * n;
    rows.push_back(simulate_one(s, t, "3d-slab", N, s.transposed ? 1 : 2));
  }
  if (s.json) {
    std::puts(rows.dump(2).c_str());
    return 0;
  }
  fmt::print("toru-fft-bench --simulate: torus {} ({} nodes, one rank each), {} GFlop/s per node for local FFTs\n",
             t.to_string(), t.size(), s.node_gflops);
  fmt::print("{:<8} {:>14} {:>4} {:>12} {:>12} {:>8} {:>12} {:>12} {:>9} {:>11}\n", "kind", "N", "k", "a2a sim",
             "a2a bound", "a2a %", "FFT sim", "ceiling GF/s", "% ceiling", "no overlap");
  for (const auto& r : rows)
    fmt::print("{:<8} {:>14.0f} {:>4} {:>11.4g}s {:>11.4g}s {:>7.1f}% {:>11.4g}s {:>12.4g} {:>8.1f}% {:>10.1f}%\n",
               r["kind"].get<std::string>(), r["n"].get<double>(), r["alltoalls"].get<int>(),
               r["alltoall_simulated_s"].get<double>(), r["alltoall_bound_s"].get<double>(),
               r["alltoall_percent_of_bound"].get<double>(), r["fft_simulated_s"].get<double>(),
               r["ceiling_gflops"].get<double>(), r["percent_of_ceiling"].get<double>(),
               r["percent_of_ceiling_no_overlap"].get<double>());
  return 0;
}

// --peers auto: the limit is a shared-memory transform, a peer only where all ranks share a node.
bool all_on_one_node() {
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int here = 0, all = 0;
  MPI_Comm_size(node, &here);
  MPI_Comm_size(MPI_COMM_WORLD, &all);
  MPI_Comm_free(&node);
  int same = here == all, every = 0;
  MPI_Allreduce(&same, &every, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  return every != 0;
}

int run(const settings& s) {
  int P = 0, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  fftw_mpi_init();
  json rows = json::array();
  if (rank == 0 && !s.json)
    fmt::print(
        "toru-fft-bench: {} ranks, complex double, {}, {} output, {} reps after {} warm-up (median of the "
        "max over ranks)\n",
        P, s.measure ? "FFTW_MEASURE" : "FFTW_ESTIMATE", s.transposed ? "transposed/scrambled" : "natural", s.reps,
        s.warmup);
  auto report = [&](const json& r) {
    rows.push_back(r);
    if (rank != 0 || s.json) return;
    auto num = [&](const char* key) { return !r.contains(key) || r[key].is_null() ? NAN : r[key].get<double>(); };
    std::string what = r["kind"] != "1d" ? fmt::format("3D {}{} ({} {}x{})", r["kind"] == "3d" ? "" : "r2c ",
                                                       r["n"].get<std::string>(), r["decomposition"].get<std::string>(),
                                                       r["grid"][0].get<int>(), r["grid"][1].get<int>())
                                         : fmt::format("1D {} ({}x{})", r["n"].get<std::int64_t>(),
                                                       r["n1"].get<std::int64_t>(), r["n2"].get<std::int64_t>());
    fmt::print(
        "{:<34} toru {:>9.4f} s {:>7.2f} GF/s | a2a no overlap {:>9.4f} s | FFTW-MPI {:>9.4f} s {:>7.2f} GF/s | "
        "ratio {:.3f} (noise floor {:.3f}) | {} | err {:.1e} / {}\n",
        what, num("toru_median_s"), num("toru_gflops"), num("toru_no_overlap_median_s"), num("fftw_mpi_median_s"),
        num("fftw_mpi_gflops"), num("ratio"), num("noise_floor"), r["strategy"].get<std::string>(),
        num("max_rel_error"),
        // FFTW-MPI's scrambled 1D order is not checked (its layout is not documented).
        r["fftw_mpi_max_rel_error"].is_null() ? std::string("n/a")
                                              : fmt::format("{:.1e}", num("fftw_mpi_max_rel_error")));
    if (r.contains("ratio_to_limit"))
      fmt::print(
          "{:<34} limit (FFTW {} threads, one process) {:>9.4f} s ({:.4f}-{:.4f}) | toru/limit {:.3f} "
          "({:.3f}-{:.3f}) | plan: toru {:.3f} s, FFTW threads {} | err {:.1e}\n",
          "", r["limit_threads"].get<int>(), num("limit_median_s"), num("limit_min_s"), num("limit_max_s"),
          num("ratio_to_limit"), num("ratio_to_limit_min"), num("ratio_to_limit_max"), num("toru_plan_s"),
          r["limit_plan_s"].is_null() ? std::string("n/a (from --limit-wisdom)")
                                      : fmt::format("{:.3f} s", num("limit_plan_s")),
          num("limit_max_rel_error"));
    if (r.contains("toru_shared_out_median_s"))
      fmt::print("{:<34} toru into shared_out() {:>9.4f} s{}\n", "", num("toru_shared_out_median_s"),
                 r.contains("shared_out_ratio_to_limit")
                     ? fmt::format(" | toru/limit {:.3f} ({:.3f}-{:.3f})", num("shared_out_ratio_to_limit"),
                                   num("shared_out_ratio_to_limit_min"), num("shared_out_ratio_to_limit_max"))
                     : std::string());
    if (r.contains("candidates")) {
      std::string line;
      for (const auto& [name, t] : r["candidates"].items())
        line += fmt::format("{}{} {:.4f} s", line.empty() ? "" : "; ", name, t.get<double>());
      fmt::print("{:<34} candidates: {} | best {} (choice / best {:.3f})\n", "", line,
                 r["best_candidate"].get<std::string>(), r["ratio_to_best_candidate"].get<double>());
    }
    std::fflush(stdout);
  };
  for (auto n : s.n3) {
    // FFTW-MPI 3.3 crashes planning a 1x1x1 transform (its peer in the same run): skip the size.
    if (n == 1) {
      if (rank == 0)
        fmt::print(stderr,
                   "toru-fft-bench: --n3 1 skipped: FFTW-MPI crashes planning a 1x1x1 transform (an "
                   "upstream bug), so there is no peer to compare with\n");
      continue;
    }
    report(bench3d(s, n, P, rank));
    if (s.r2c) report(bench3d_r2c(s, n, P, rank));
  }
  for (auto n : s.n1) report(bench1d(s, n, P, rank));
  if (!s.trace.empty()) toru_fft_bench::trace_write(s.trace, rank);
  bool ok = true;
  for (const auto& r : rows)
    ok = ok && r["max_rel_error"].get<double>() < 1e-10 && r.value("limit_max_rel_error", 0.0) < 1e-10;
  if (rank == 0) {
    if (s.json)
      std::puts(rows.dump(2).c_str());
    else
      fmt::print("verification: {}\n", ok ? "passed (max relative error < 1e-10)" : "FAILED");
  }
  fftw_mpi_cleanup();
  return ok ? toru::apps::exit_ok : toru::apps::exit_runtime_error;
}

}  // namespace

int main(int argc, char** argv) {
  settings s;
  CLI::App app{"toru-fft-bench: toru's parallel 3D and distributed 1D FFTs against FFTW-MPI, or simulated on a torus",
               "toru-fft-bench"};
  app.add_option("--n3", s.n3, "3D cube edges (n x n x n); empty list with --n3 0 skips 3D")->capture_default_str();
  app.add_option("--n1", s.n1, "1D sizes (complex points); --n1 0 skips 1D")->capture_default_str();
  app.add_option("--reps", s.reps, "timed repetitions")->check(CLI::Range(1, 10000))->capture_default_str();
  app.add_option("--warmup", s.warmup, "untimed repetitions first")->check(CLI::Range(0, 1000))->capture_default_str();
  app.add_flag("--measure", s.measure, "FFTW_MEASURE for both libraries (default FFTW_ESTIMATE)");
  app.add_flag("--transposed", s.transposed,
               "transposed/scrambled output for both (FFTW_MPI_TRANSPOSED_OUT / FFTW_MPI_SCRAMBLED_OUT)");
  app.add_option("--decomposition", s.decomp, "toru 3D decomposition")
      ->check(CLI::IsMember({"auto", "slab", "pencil"}))
      ->capture_default_str();
  app.add_option("--chunks", s.chunks, "toru chunks per all-to-all (0 = chosen)")->check(CLI::Range(0, 4096));
  std::string path = "auto";
  app.add_option("--path", path, "toru exchange path: auto (the plan's strategy table), window or alltoall")
      ->check(CLI::IsMember({"auto", "window", "alltoall"}))
      ->capture_default_str();
  app.add_flag("--simulate", s.simulate, "model the FFT on --torus instead of running it (no MPI traffic)");
  app.add_option("--torus", s.torus,
                 "torus spec, e.g. 8x8x16,bw=425MB/s: modelled with --simulate, else given to toru's plans "
                 "through options.comm.torus (as TORU_TORUS would)");
  std::string model = "packet";
  app.add_option("--model", model,
                 "with --simulate: packet (packet-level up to 256 nodes, the fitted tier above), fitted, or fluid")
      ->check(CLI::IsMember({"packet", "fitted", "fluid"}))
      ->capture_default_str();
  app.add_option("--node-gflops", s.node_gflops, "--simulate: local FFT rate per node, GFlop/s")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_flag("--candidates", s.candidates,
               "then time toru's choice and every other candidate of its strategy table (each forced) in a "
               "rotation of their own: reports each median and the choice's ratio to the best");
  app.add_flag("!--no-r2c", s.r2c, "skip the 3D r2c rows (toru's fft3d_r2c against the limit)");
  std::string peers = "auto";
  app.add_option("--peers", peers,
                 "fftw-threads: also time the shared-memory limit, FFTW's threaded transform of the whole array "
                 "in rank 0's process with threads = ranks (the other ranks sleep meanwhile), and print toru/limit "
                 "and both plan times; none: not; auto (default): fftw-threads when all ranks share one node")
      ->check(CLI::IsMember({"auto", "fftw-threads", "none"}))
      ->capture_default_str();
  app.add_option("--limit-wisdom", s.limit_wisdom,
                 "FFTW wisdom file for the limit's plans: read before planning, written after; a plan found "
                 "there is not planned again (its plan time reads n/a, JSON limit_plan_s null)");
  app.add_flag("--json", s.json, "print JSON (one object per size) instead of a table");
  app.add_option("--trace", s.trace,
                 "write toru's events (per chunk of every exchange) of the default plan's transforms to "
                 "DIR/trace.<rank>.csv");
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int rc = toru::apps::run_cli(
      app, argc, argv,
      [&] {
        std::erase(s.n3, 0);
        std::erase(s.n1, 0);
        for (auto n : s.n3) toru::expect(n >= 1, "--n3", "sizes >= 1", std::to_string(n));
        for (auto n : s.n1) toru::expect(n >= 1, "--n1", "sizes >= 1", std::to_string(n));
        s.model = toru::comm::network_model_from_string(model);
        s.path = path == "window"     ? toru::fft::exchange_path::window
                 : path == "alltoall" ? toru::fft::exchange_path::alltoall
                                      : toru::fft::exchange_path::automatic;
        if (s.simulate) return rank == 0 ? simulate(s) : 0;
        s.limit = peers == "fftw-threads" || (peers == "auto" && all_on_one_node());
        return run(s);
      },
      rank);
  MPI_Finalize();
  return rc;
}
