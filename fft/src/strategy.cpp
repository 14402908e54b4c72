// SPDX-License-Identifier: BSD-3-Clause
#include "strategy.hpp"

#include <algorithm>
#include <cstdlib>
#include <limits>

#include <fmt/format.h>

#include "toru/core/mpi.hpp"

namespace toru::fft::detail {

namespace {
// Model constants, per rank, for one node's ranks sharing its memory system. Only the ratios
// between candidates matter for ESTIMATE; MEASURE replaces them by timings.
constexpr double memory_bandwidth = 4e9;   // bytes/s of streaming copy (read + write counted once each)
constexpr double network_bandwidth = 1e9;  // bytes/s between nodes, when the exchange leaves the node
constexpr double chunk_overhead = 30e-6;   // s per chunk and exchange (messages, hooks, thread hand-off)
constexpr double window_sync = 10e-6;      // s per barrier
constexpr int window_block_bytes = 1 << 20;

int window_blocks(double bytes) { return static_cast<int>(std::clamp(bytes / window_block_bytes, 1.0, 64.0)); }
}  // namespace

std::string strategy::name() const {
  if (mid && direct) return "middle layout M, direct window";
  if (direct) return "direct window";
  if (mid) return window ? "middle layout M, window" : "middle layout M, MPI_Alltoallw";
  if (window) return fmt::format("window, {} blocks", chunks);
  if (overlap && chunks == 0) return "all-to-all, overlap at the all-to-all's chunks";
  return overlap ? fmt::format("all-to-all, overlap x{}", chunks) : "all-to-all, no overlap";
}

bool overlap_forced_by_environment() {
  const char* v = std::getenv("TORU_FFT_OVERLAP");
  return v && std::string(v) == "force";
}

std::string forced_strategy(MPI_Comm comm) {
  const char* v = std::getenv("TORU_FFT_STRATEGY");
  std::string name = v ? v : "";
  int len = static_cast<int>(name.size());
  check_mpi(MPI_Bcast(&len, 1, MPI_INT, 0, comm), "MPI_Bcast");
  name.resize(static_cast<std::size_t>(len));
  check_mpi(MPI_Bcast(name.data(), len, MPI_CHAR, 0, comm), "MPI_Bcast");
  return name;
}

std::string why_no_window(const plan_facts& f) {
  if (f.device) return "device buffers";
  if (!f.one_node) return "ranks on more than one node";
  if (f.path == exchange_path::alltoall) return "options.path = alltoall";
  if (f.algorithm_forced) return "an all-to-all algorithm is forced";
  if (f.torus_described) return "a torus is described (its links carry the exchange)";
  return "";
}

std::vector<candidate> strategy_table(const plan_facts& f) {
  const double B = f.exchange_bytes, k = f.exchanges;
  // Local FFTs at a conservative 2 GFlop/s per rank: what overlap could hide.
  const double fft = f.fft_flops / 2e9;
  std::vector<candidate> t;
  bool window_ok = true;
  std::string window_why;
  {
    // One copy: the rank's rows go straight into the peers' next-stage layout (read + write), then
    // each rank copies its own buffer out block by block (read + write, in cache for the FFT).
    window_why = why_no_window(f);
    window_ok = window_why.empty();
    candidate c{{.window = true, .overlap = false, .chunks = window_blocks(B)}, window_ok, window_why, 0, ""};
    c.cost = k * (f.window_copies * B / memory_bandwidth + window_sync) + fft;
    t.push_back(c);
  }
  // All-to-all: pack (read + write), MPI's copy in and out of its shared fragments on a node
  // (2 x read + write), unpack (read + write). Between nodes the wire replaces MPI's copies.
  // Not scaled by ranks per core: at 4 ranks on 2 cores the window paths (whose barriers wait for
  // descheduled peers as MPI's copies do) lost as much (issue 13, docs/fft.md "Strategy").
  const double mpi_copies = 4 * B / memory_bandwidth;
  const double copies = f.one_node ? 4 * B / memory_bandwidth + mpi_copies : 4 * B / memory_bandwidth;
  const double wire = f.one_node ? 0 : f.wire_seconds >= 0 ? f.wire_seconds : B / network_bandwidth;
  {
    candidate c{{.window = false, .overlap = false, .chunks = 1}, true, "", 0, ""};
    if (f.path == exchange_path::window) c.applicable = false, c.why = "options.path = window";
    // An all-to-all synchronises the ranks at least as a barrier does.
    c.cost = k * (copies + wire + window_sync) + fft;
    // On one node it moves the window's bytes through MPI's shared memory, copies more, and needs
    // its own pack regions and MPI's buffers touched for the first time: MEASURE times the window
    // candidates instead. Measured 2026-12-07, 2 ranks, MEASURE: 1.3-2.3x the fastest candidate at
    // 256^3, 384^3 and 2^22, and its first (untimed) run 3.7 s of 384^3's 27 s of plan time; at best
    // within the noise of the window (2^24 on 4 ranks, 2026-12-02).
    if (f.one_node && window_ok)
      c.untimed = "one node: the window candidates move its bytes with fewer copies (they are timed)";
    t.push_back(c);
  }
  {
    // On a described torus the exchange keeps the indirect schedule's own chunks (0 here): the FFT
    // follows them, never the other way round (docs/fft.md, "Overlap on a torus").
    const bool pipeline_chunks = f.chunks_requested == 0 && f.torus_described && !f.device;
    const int C = f.chunks_requested > 0 ? f.chunks_requested : pipeline_chunks ? 0 : 4;
    const int modelled = C > 0 ? C : 16;  // the indirect schedule's usual depth on a slow torus
    candidate c{{.window = false, .overlap = true, .chunks = C}, true, "", 0, ""};
    if (!f.overlap_allowed)
      c.applicable = false, c.why = "options.overlap = false";
    else if (f.path == exchange_path::window)
      c.applicable = false, c.why = "options.path = window";
    // On one node the "communication" is copies by the same cores through the same memory as
    // the FFTs: nothing to hide behind. Across nodes the wire time hides the FFTs but for one chunk.
    // Ranks sharing a core (the emulated torus: 16 namespaces on 2 cores) compute slower, so there is
    // more to hide, and each chunk hand-off waits for a core: both scale with ranks per core.
    const double rpc = f.ranks_per_core;
    const double hidden = f.one_node ? 0 : std::min(wire, rpc * fft / k) * (1 - 1.0 / modelled);
    c.cost = k * (copies + wire + window_sync - hidden + rpc * modelled * chunk_overhead) + fft;
    // Nothing hidden, only chunk hand-offs added: MEASURE times the candidate without overlap
    // instead (256^3 on 2 ranks: 0.264 s against 0.268 s without, 1.1 s of plan time).
    if (f.one_node) c.untimed = "one node: overlap hides nothing (the no-overlap candidate is timed)";
    t.push_back(c);
  }
  for (auto& c : t)
    if (f.mid_required) c.applicable = false, c.why = "the transposed output is the middle layout M";
  if (f.mid_possible) {
    // Whole rows of axis 2 move (MPI's datatype engine packs them: about one copy fewer than the
    // element transpose), and the axis-0 FFT runs strided (about 10 % slower, docs/fft.md).
    const double kb = f.mid_exchanges;
    candidate w{{.window = true, .overlap = false, .chunks = 1, .mid = true}, window_ok, window_why, 0, ""};
    w.cost = kb * (f.mid_window_copies * B / memory_bandwidth + window_sync) + 1.1 * fft;
    t.push_back(w);
    candidate c{{.window = false, .overlap = false, .chunks = 1, .mid = true}, true, "", 0, ""};
    if (f.path == exchange_path::window) c.applicable = false, c.why = "options.path = window";
    // On a torus MPI_Alltoallw is MPI's schedule, not comm's torus-aware one: its own wire time.
    const double mid_wire = f.one_node ? 0 : f.mid_wire_seconds >= 0 ? f.mid_wire_seconds : wire;
    c.cost =
        kb * (f.one_node ? 2 * B / memory_bandwidth + mpi_copies : 2 * B / memory_bandwidth + mid_wire) + 1.1 * fft;
    // Where the direct window applies it runs the same FFTs with the rows moved once per exchange
    // and no exchange buffers: these two can only add copies. Measured 2026-12-08 (MEASURE, 128^3
    // to 384^3, 2 and 4 ranks, 7 plans): the direct window the fastest of the three in each, by
    // 5-40 %; timing the two cost 10 of 13 s of plan time at 384^3 on 2 ranks (docs/fft.md, "Strategy").
    if (window_ok && f.direct_possible) {
      c.untimed = "one node: the direct window moves the same rows with fewer copies (it is timed)";
      t.back().untimed = c.untimed;  // the M window, pushed above
    }
    t.push_back(c);
  }
  if (f.mid_possible || f.direct_1d_copies > 0) {
    // 3D: the plane rows go straight between the caller's buffer (or the in-cache plane scratch of
    // the 2D FFTs) and every rank's part of M, direct_copies per exchange. 1D: in-cache tiles
    // gathered from and scattered to every rank's part of the node arrays, plus the copies in and
    // out of them, direct_1d_copies in all, one fence per node array use.
    candidate d{{.window = true, .overlap = false, .chunks = 1, .mid = f.mid_possible, .direct = true},
                window_ok,
                window_why,
                0,
                ""};
    if (d.applicable && !f.direct_possible) {
      d.applicable = false;
      d.why = f.direct_why.empty() ? "MPI did not place the node arrays' parts end to end" : f.direct_why;
    }
    d.cost = f.mid_possible ? f.mid_exchanges * (f.direct_copies * B / memory_bandwidth + window_sync) + 1.1 * fft
                            : f.direct_1d_copies * B / memory_bandwidth + k * window_sync + fft;
    t.push_back(d);
  }
  if (!f.forced_name.empty())
    for (auto& c : t)
      if (c.applicable && c.s.name() != f.forced_name)
        c.applicable = false, c.why = "TORU_FFT_STRATEGY=" + f.forced_name;
  if (f.overlap_forced && f.overlap_allowed)
    for (auto& c : t)
      if (!c.s.overlap) c.applicable = false, c.why = "TORU_FFT_OVERLAP=force";
  return t;
}

void decide_direct_arrays(plan_facts& f, bool measured, const strategy& direct, const std::function<bool()>& allocate) {
  if (!why_no_window(f).empty()) return;
  if (measured || f.forced_name == direct.name()) {
    f.direct_possible = allocate();
    return;
  }
  f.direct_possible = true;  // provisionally: allocated only if the model takes it
  const auto provisional = strategy_table(f);
  const int pick = cheapest(provisional);
  if (pick >= 0 && provisional[static_cast<std::size_t>(pick)].s.direct) {
    f.direct_possible = allocate();
    return;
  }
  f.direct_possible = false;
  f.direct_why = "ESTIMATE: another candidate is cheaper (node arrays not allocated)";
}

void set_3d_window_weights(plan_facts& f) {
  // toru-fft-bench --candidates at 128^3 (2 and 4 ranks, both orders, 2026-12-02, after the window
  // buffers were aligned): per exchange, in copies of B, the direct window cost about 3, the M
  // window 5.5 (MPI_Alltoallw: 2 + 4; the window won 3 of the 4 rows), the element-wise window
  // as the all-to-all's 8.
  f.window_copies = 8;
  f.mid_window_copies = 5.5;
  f.direct_copies = 3;
}

std::string describe_table(const std::vector<candidate>& table) {
  std::string out;
  for (const auto& c : table) {
    if (!out.empty()) out += "; ";
    out += c.applicable ? fmt::format("{}: model {:.3g} s", c.s.name(), c.cost)
                        : fmt::format("{}: n/a ({})", c.s.name(), c.why);
  }
  return out;
}

std::vector<std::string> applicable_names(const std::vector<candidate>& table) {
  std::vector<std::string> names;
  for (const auto& c : table)
    if (c.applicable) names.push_back(c.s.name());
  return names;
}

std::vector<std::pair<std::string, double>> timed_names(const std::vector<candidate>& table,
                                                        const std::vector<double>& seconds) {
  std::vector<std::pair<std::string, double>> out;
  if (seconds.size() != table.size()) return out;
  for (std::size_t i = 0; i < table.size(); ++i)
    if (table[i].applicable && seconds[i] > 0) out.emplace_back(table[i].s.name(), seconds[i]);
  return out;
}

int cheapest(const std::vector<candidate>& table) {
  int best = -1, plain = -1;
  for (int i = 0; i < static_cast<int>(table.size()); ++i) {
    if (!table[i].applicable) continue;
    if (best < 0 || table[i].cost < table[best].cost) best = i;
    if (!table[i].s.overlap && (plain < 0 || table[i].cost < table[plain].cost)) plain = i;
  }
  // Overlap must pay by more than the model can resolve: on the emulated 2x4x4 torus the model
  // predicted about 4 % for it (2.5 % on 2x2x4) and runs measured it 12 % faster and 9 % slower
  // (docs/fft.md, "Strategy").
  if (best >= 0 && plain >= 0 && table[best].s.overlap && table[best].cost > (1 - overlap_margin) * table[plain].cost)
    return plain;
  return best;
}

int fastest(MPI_Comm comm, const std::vector<candidate>& table, const std::vector<double>& seconds) {
  std::vector<double> worst(seconds.size());
  check_mpi(MPI_Allreduce(seconds.data(), worst.data(), static_cast<int>(seconds.size()), MPI_DOUBLE, MPI_MAX, comm),
            "MPI_Allreduce");
  // Earlier candidates win ties within 2 % (window before all-to-all, no overlap before overlap):
  // a plan that overlaps must have measured faster than one that does not.
  int best = -1;
  for (int i = 0; i < static_cast<int>(table.size()); ++i)
    if (table[i].applicable && (best < 0 || worst[i] < 0.98 * worst[best])) best = i;
  check_mpi(MPI_Bcast(&best, 1, MPI_INT, 0, comm), "MPI_Bcast");
  return best;
}

int timed_choice(MPI_Comm comm, const std::vector<candidate>& all, const std::function<double(int)>& time,
                 std::vector<double>& seconds) {
  // The candidates MEASURE leaves untimed drop out, unless nothing timed would be left (every
  // rank holds the same table, so every rank drops the same ones).
  std::vector<candidate> table = all;
  const bool any_timed =
      std::ranges::any_of(table, [](const candidate& c) { return c.applicable && c.untimed.empty(); });
  if (any_timed)
    for (auto& c : table)
      if (!c.untimed.empty()) c.applicable = false;
  const int n = static_cast<int>(table.size());
  const auto max_over_ranks = [&](std::vector<double>& t) {
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, t.data(), n, MPI_DOUBLE, MPI_MAX, comm), "MPI_Allreduce");
  };
  seconds.assign(n, 0);
  for (int i = 0; i < n; ++i)
    if (table[i].applicable) seconds[i] = time(i);
  max_over_ranks(seconds);
  // No candidate leaves on one figure: one outside the margin of the fastest figure so far is timed
  // once more and the better of its two counts, until every one outside has had two (a second
  // chance that lowers the fastest figure can put another outside).
  std::vector<char> twice(n, 0);
  for (;;) {
    double fastest_so_far = 0;
    for (int i = 0; i < n; ++i)
      if (table[i].applicable && (fastest_so_far == 0 || seconds[i] < fastest_so_far)) fastest_so_far = seconds[i];
    std::vector<double> again(n, 0);
    bool any = false;
    for (int i = 0; i < n; ++i)
      if (table[i].applicable && !twice[i] && seconds[i] > (1 + runoff_margin) * fastest_so_far) {
        again[i] = time(i);
        twice[i] = 1;
        any = true;
      }
    if (!any) break;  // the same on every rank: every rank holds the same figures
    max_over_ranks(again);
    for (int i = 0; i < n; ++i)
      if (again[i] > 0) seconds[i] = std::min(seconds[i], again[i]);
  }
  // The run-off: every rank holds the same maxima, so every rank names the same finalists and
  // calls time() for the same candidates in the same order.
  std::vector<int> finalists;
  for (int i = 0; i < n; ++i)
    if (table[i].applicable) finalists.push_back(i);
  std::ranges::stable_sort(finalists, {}, [&](int i) { return seconds[i]; });
  const double best = finalists.empty() ? 0 : seconds[finalists.front()];
  std::erase_if(finalists, [&](int i) { return seconds[i] > (1 + runoff_margin) * best; });
  if (finalists.size() > runoff_finalists) finalists.resize(runoff_finalists);
  if (finalists.size() < 2) return fastest(comm, table, seconds);
  std::vector<std::vector<double>> figures(n);
  for (int i : finalists) figures[i].push_back(seconds[i]);
  const int f = static_cast<int>(finalists.size());
  const int rounds = best < short_figure_seconds ? runoff_figures_short : runoff_figures;
  for (int round = 1; round < rounds; ++round) {
    std::vector<double> t(n, 0);
    for (int k = 0; k < f; ++k) {
      const int i = finalists[(k + round) % f];  // a different candidate first in each round
      t[i] = time(i);
    }
    max_over_ranks(t);
    for (int i : finalists) figures[i].push_back(t[i]);
  }
  std::vector<candidate> runoff = table;
  for (auto& c : runoff) c.applicable = false;
  for (int i : finalists) {
    auto& v = figures[i];
    std::ranges::nth_element(v, v.begin() + v.size() / 2);
    seconds[i] = v[v.size() / 2];
    runoff[i].applicable = true;
  }
  return fastest(comm, runoff, seconds);
}

}  // namespace toru::fft::detail
