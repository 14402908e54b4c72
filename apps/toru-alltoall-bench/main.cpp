// SPDX-License-Identifier: BSD-3-Clause
// toru-alltoall-bench: every all-to-all algorithm, the automatic choice and plain MPI_Alltoall on the
// same buffers in one run; or, with --simulate, the schedules in the topology flow simulator.
//
//   mpiexec -n 4 toru-alltoall-bench                          # 8 B .. 4 MiB per pair
//   mpiexec -n 16 toru-alltoall-bench --torus 2x2x4 --min-bytes 1MiB --max-bytes 1MiB
//   toru-alltoall-bench --simulate --torus 16x16x32 --json
//   mpiexec -n 4 toru-alltoall-bench --dropin --max-bytes 64KiB    # what the drop-in calls add to MPI's
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "bench/bench_order.hpp"
#include "common/cli.hpp"
#include "toru/comm.h"
#include "toru/comm/alltoall_plan.hpp"
#include "toru/comm/alltoall_simulate.hpp"
#include "toru/comm/communicator.hpp"
#include "toru/core/error.hpp"
#include "toru/topology/credit_model.hpp"
#include "toru/topology/fitted_model.hpp"
#include "toru/topology/network_model.hpp"
#include "toru/topology/torus.hpp"
#include "toru/topology/units.hpp"

namespace {

using toru::comm::alltoall_algorithm;

struct settings {
  double min_bytes = 8, max_bytes = 4 << 20;
  int factor = 4;
  int reps = 21;
  int warmup = 3;
  std::string torus;
  std::vector<std::string> algorithms = {"mpi", "mpi-repeat", "auto", "direct", "pairwise", "bruck", "indirect"};
  int chunks = 0;
  int threads = 1;
  bool simulate = false;
  std::optional<toru::topology::link_transport> transport;  // --transport given
  toru::comm::simulation_options sim{.model = toru::comm::network_model::packet};
  bool dropin = false;
  bool json = false;
};

std::vector<double> sizes(const settings& s) {
  std::vector<double> v;
  for (double b = s.min_bytes; b <= s.max_bytes; b *= s.factor) v.push_back(b);
  if (v.empty() || v.back() < s.max_bytes) v.push_back(s.max_bytes);
  return v;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string fmt_time(double s) { return toru::topology::format_time(s); }

// "mpi-repeat" is MPI_Alltoall as a row of its own: its ratio to "mpi" is how far two identical
// calls drift apart in one run, the yardstick for every other ratio on a noisy machine.
bool is_mpi(const std::string& name) { return name == "mpi" || name == "mpi-repeat"; }

int simulate(const settings& s) {
  if (s.torus.empty()) throw toru::error(toru::errc::invalid_argument, "--simulate needs --torus SPEC");
  auto t = toru::topology::torus::parse(s.torus);
  // --transport, when given, describes the links whatever the spec says
  if (s.transport) t = toru::topology::torus({t.axes().begin(), t.axes().end()}, *s.transport);
  const bool credit = t.transport() == toru::topology::link_transport::credit;
  nlohmann::json rows = nlohmann::json::array();
  if (!s.json)
    fmt::print("simulated all-to-all on torus {} ({} nodes, bottleneck axis {}), % of T_min = P*m*E_L/(8*B_L)\n",
               t.to_string(), t.size(), t[t.longest_axis()].name);
  if (!s.json)
    fmt::print("{:>10} {:>9} {:>7} {:>12} {:>12} {:>10} {:>7} {:>10}\n", "bytes", "algorithm", "chunks", "time",
               "T_min", "% of bound", "model", "schedule");
  for (double bytes : sizes(s)) {
    for (const auto& name : s.algorithms) {
      // toru's direct is MPI_Alltoall: the fluid model has one row for both, the packet model runs
      // Open MPI's schedule for "mpi" and "direct" alike (one row, mpi-repeat adds nothing).
      if (name == "mpi-repeat" || (is_mpi(name) && s.sim.model == toru::comm::network_model::fluid)) continue;
      const auto a = is_mpi(name) ? alltoall_algorithm::direct : toru::comm::algorithm_from_string(name);
      if (a == alltoall_algorithm::bruck && t.size() > 4096 && s.sim.model == toru::comm::network_model::fluid)
        continue;
      auto opts = s.sim;
      opts.chunks = s.chunks;
      // the credit model's fitted tier covers linear and indirect only
      if (credit && (a == alltoall_algorithm::pairwise || a == alltoall_algorithm::bruck) &&
          (s.sim.model == toru::comm::network_model::fitted || t.size() > s.sim.credit_packet_max_nodes))
        continue;
      const auto r = toru::comm::simulate_alltoall(t, a, bytes, opts);
      const std::string label = a == alltoall_algorithm::automatic ? "auto" : name;
      if (s.json)
        rows.push_back({{"algorithm", label},
                        {"resolved", std::string(toru::comm::to_string(r.algorithm))},
                        {"bytes", bytes},
                        {"chunks", r.chunks},
                        {"simulated_s", r.seconds},
                        {"bound_s", r.bound_seconds},
                        {"percent_of_bound", r.percent_of_bound},
                        {"model", toru::comm::to_string(r.model)},
                        {"schedule", r.schedule},
                        {"drops", r.drops},
                        {"timeouts", r.timeouts},
                        {"torus", t.to_string()}});
      else
        fmt::print("{:>10} {:>9} {:>7} {:>12} {:>12} {:>9.1f}% {:>7} {:>10}\n", toru::topology::format_bytes(bytes),
                   label, r.chunks, fmt_time(r.seconds), fmt_time(r.bound_seconds), r.percent_of_bound,
                   toru::comm::to_string(r.model), r.schedule);
    }
  }
  if (s.json)
    fmt::print("{}\n", nlohmann::json{{"mode", "simulated"},
                                      {"model_version", credit ? std::string(toru::topology::credit_model_version)
                                                               : std::string(toru::topology::packet_model_version)},
                                      {"transport", toru::topology::to_string(t.transport())},
                                      {"seeds", s.sim.seeds},
                                      {"rows", rows}}
                           .dump(2));
  else if (s.sim.model != toru::comm::network_model::fluid)
    fmt::print("model: {}{}\n", credit ? toru::topology::credit_model_version : toru::topology::packet_model_version,
               s.sim.seeds > 1 ? fmt::format("; packet rows: median of {} seeded runs", s.sim.seeds) : "");
  return 0;
}

struct row {
  std::string label;
  std::optional<toru::comm::alltoall_plan> plan;  // empty for "mpi" and "mpi-repeat"
  std::vector<double> times;
  std::vector<std::string> after;  // per timed call: the row timed just before it (JSON "after")
};

int measure(const settings& s) {
  const int rank = [] {
    int r = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
  }();
  toru::comm::communicator comm(MPI_COMM_WORLD, {.torus = s.torus, .threads = s.threads});
  const int P = comm.size();
  const bool have_torus = comm.torus_given();
  nlohmann::json out_rows = nlohmann::json::array();
  if (rank == 0 && !s.json) {
    fmt::print("all-to-all on {} ranks, torus {} ({}), {} reps after {} warm-up, median of per-rep max over ranks\n", P,
               comm.torus().to_string(), have_torus ? "given" : "derived", s.reps, s.warmup);
    fmt::print("{:>10} {:>9} {:>7} {:>12} {:>12} {:>12} {:>9} {:>9} {:>6}{}\n", "bytes", "algorithm", "chunks",
               "median", "min", "GB/s/rank", "vs MPI", "paired", "check", have_torus ? "  % of bound" : "");
  }
  for (double bytes_d : sizes(s)) {
    const auto bytes = static_cast<std::size_t>(bytes_d);
    const std::size_t total = bytes * static_cast<std::size_t>(P);
    std::vector<char> in, out, want;
    // One rank short of memory must not leave the others waiting in MPI_Alltoall: agree first.
    int allocated = 1;
    try {
      in.resize(total), out.resize(total), want.resize(total);
    } catch (const std::bad_alloc&) {
      allocated = 0;
    }
    MPI_Allreduce(MPI_IN_PLACE, &allocated, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!allocated)
      throw toru::error(toru::errc::out_of_memory,
                        fmt::format("--max-bytes: {} per pair needs 3 x {} bytes per rank on {} ranks; a rank could "
                                    "not allocate them",
                                    toru::topology::format_bytes(bytes_d), total, P));
    for (std::size_t i = 0; i < total; ++i)
      in[i] = static_cast<char>((i * 131 + static_cast<std::size_t>(rank) * 7) % 251);
    MPI_Alltoall(in.data(), static_cast<int>(bytes), MPI_BYTE, want.data(), static_cast<int>(bytes), MPI_BYTE,
                 MPI_COMM_WORLD);
    std::vector<row> rows;
    for (const auto& name : s.algorithms) {
      row r{name == "automatic" ? "auto" : name, std::nullopt, {}, {}};
      if (!is_mpi(name)) {
        const auto a = toru::comm::algorithm_from_string(name);
        try {
          r.plan.emplace(comm, bytes, MPI_BYTE, toru::comm::alltoall_options{.algorithm = a, .chunks = s.chunks});
        } catch (const toru::error& e) {
          if (rank == 0)
            std::fprintf(stderr, "toru-alltoall-bench: skipping %s: %s\n", name.c_str(), e.message().c_str());
          continue;
        }
      }
      rows.push_back(std::move(r));
    }
    std::vector<std::vector<char>> ws(rows.size());
    for (std::size_t k = 0; k < rows.size(); ++k)
      if (rows[k].plan) ws[k].resize(rows[k].plan->workspace_size());
    auto run = [&](std::size_t k) {
      if (rows[k].plan)
        rows[k].plan->execute(in.data(), out.data(), ws[k].data());
      else
        MPI_Alltoall(in.data(), static_cast<int>(bytes), MPI_BYTE, out.data(), static_cast<int>(bytes), MPI_BYTE,
                     comm.mpi());
    };
    std::vector<int> ok(rows.size(), 1);
    for (std::size_t k = 0; k < rows.size(); ++k) {
      std::fill(out.begin(), out.end(), 0);
      run(k);
      ok[k] = out == want ? 1 : 0;
    }
    MPI_Allreduce(MPI_IN_PLACE, ok.data(), static_cast<int>(ok.size()), MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    // Small exchanges take microseconds and are the noisiest: more repetitions there.
    const int reps = bytes <= (64 << 10) ? 5 * s.reps : s.reps;
    // Rows interleaved within each repetition, so drifting machine load hits all of them alike, in a
    // balanced order (bench/bench_order.hpp): no row always runs right after the same neighbour,
    // whose cache footprint or TCP state (MPI_Alltoall's losses on a torus) it would inherit.
    std::string previous = "(correctness check)";
    for (int rep = -s.warmup; rep < reps; ++rep) {
      for (const std::size_t k : toru::apps::balanced_order(rows.size(), rep)) {
        MPI_Barrier(comm.mpi());
        const double t0 = MPI_Wtime();
        run(k);
        const double t = MPI_Wtime() - t0;
        if (rep >= 0) rows[k].times.push_back(t), rows[k].after.push_back(previous);
        previous = rows[k].label;
      }
    }
    std::vector<double> med(rows.size()), fastest(rows.size());
    for (std::size_t k = 0; k < rows.size(); ++k) {
      MPI_Allreduce(MPI_IN_PLACE, rows[k].times.data(), static_cast<int>(rows[k].times.size()), MPI_DOUBLE, MPI_MAX,
                    MPI_COMM_WORLD);
      med[k] = median(rows[k].times);
      fastest[k] = *std::min_element(rows[k].times.begin(), rows[k].times.end());
    }
    double mpi_time = 0;
    const std::vector<double>* mpi_times = nullptr;
    for (std::size_t k = 0; k < rows.size(); ++k)
      if (rows[k].label == "mpi") mpi_time = med[k], mpi_times = &rows[k].times;
    // Paired ratio: the median over repetitions of (this row / MPI_Alltoall in the same repetition).
    // Both ran within one round, so load that comes and goes in bursts cancels out.
    auto paired = [&](const std::vector<double>& t) {
      if (!mpi_times) return 0.0;
      std::vector<double> q(t.size());
      for (std::size_t i = 0; i < t.size(); ++i) q[i] = (*mpi_times)[i] > 0 ? t[i] / (*mpi_times)[i] : 0;
      return median(q);
    };
    const double bound = have_torus ? toru::topology::alltoall_bound(comm.torus(), bytes_d) : 0;
    for (std::size_t k = 0; k < rows.size(); ++k) {
      const auto& r = rows[k];
      const std::string algo = r.plan ? std::string(toru::comm::to_string(r.plan->algorithm())) : "MPI_Alltoall";
      const int chunks = r.plan ? r.plan->chunks() : 1;
      const double gbps = med[k] > 0 ? bytes_d * (P - 1) / med[k] / 1e9 : 0;
      const double ratio = mpi_time > 0 ? med[k] / mpi_time : 0;
      const double ratio_paired = paired(r.times);
      if (rank != 0) continue;
      if (s.json) {
        nlohmann::json j{{"algorithm", r.label},
                         {"resolved", algo},
                         {"bytes", bytes},
                         {"chunks", chunks},
                         {"ranks", P},
                         {"median_s", med[k]},
                         {"min_s", fastest[k]},
                         {"gbps_per_rank", gbps},
                         {"ratio_vs_mpi", ratio},
                         {"paired_ratio_vs_mpi", ratio_paired},
                         {"correct", ok[k] == 1},
                         {"times_s", r.times},
                         {"after", r.after},
                         {"torus", comm.torus().to_string()}};
        if (have_torus) j["percent_of_bound"] = 100 * bound / med[k];
        out_rows.push_back(j);
      } else {
        fmt::print("{:>10} {:>9} {:>7} {:>12} {:>12} {:>12.3f} {:>9.3f} {:>9.3f} {:>6}{}\n",
                   toru::topology::format_bytes(bytes_d), r.label == "auto" ? "auto:" + algo.substr(0, 4) : r.label,
                   chunks, fmt_time(med[k]), fmt_time(fastest[k]), gbps, ratio, ratio_paired, ok[k] ? "ok" : "WRONG",
                   have_torus ? fmt::format("  {:>10.1f}%", 100 * bound / med[k]) : "");
      }
    }
    if (rank == 0 && s.json) std::fprintf(stderr, "toru-alltoall-bench: done %zu bytes\n", bytes);
    std::fflush(stdout);
  }
  if (rank == 0 && s.json)
    fmt::print("{}\n", nlohmann::json{{"mode", "measured"}, {"ranks", P}, {"rows", out_rows}}.dump(2));
  return 0;
}

// --dropin: the drop-in calls against the MPI calls they replace, interleaved call by call on the same
// buffers (the toru calls on a communicator whose first call, which agrees and plans, is untimed), in
// a balanced order (bench/bench_order.hpp, the same on every rank). Reported: the median over calls of the
// per-call maximum over ranks, and "added": the median over rounds of (call - its MPI peer in the
// same round). MPI_Alltoall timed a second time ("again") gives the noise floor of "added".
int dropin(const settings& s) {
  int rank = 0, P = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  constexpr int rows = 5;
  const char* names[rows] = {"MPI_Alltoall", "MPI_Alltoall again", "toru_alltoall", "MPI_Alltoallv", "toru_alltoallv"};
  const int peer[rows] = {-1, 0, 0, -1, 3};
  nlohmann::json out_rows = nlohmann::json::array();
  if (rank == 0 && !s.json) {
    fmt::print(
        "drop-in calls on {} ranks, {} interleaved calls each after {} warm-up, median of per-call max over ranks\n", P,
        s.reps, s.warmup);
    fmt::print("{:>10} {:>18} {:>12} {:>12} {:>12} {:>7} {:>6}\n", "bytes", "call", "median", "min", "added", "ratio",
               "check");
  }
  for (double bytes_d : sizes(s)) {
    const auto bytes = static_cast<std::size_t>(bytes_d);
    const int n = static_cast<int>(bytes);
    const std::size_t total = bytes * static_cast<std::size_t>(P);
    std::vector<char> in(total), out(total), want(total);
    for (std::size_t i = 0; i < total; ++i)
      in[i] = static_cast<char>((i * 131 + static_cast<std::size_t>(rank) * 7) % 251);
    std::vector<int> counts(static_cast<std::size_t>(P), n), displs(static_cast<std::size_t>(P));
    for (int j = 0; j < P; ++j) displs[static_cast<std::size_t>(j)] = j * n;
    MPI_Alltoall(in.data(), n, MPI_BYTE, want.data(), n, MPI_BYTE, MPI_COMM_WORLD);
    auto call = [&](int k) {
      switch (k) {
        case 0:
        case 1:
          return MPI_Alltoall(in.data(), n, MPI_BYTE, out.data(), n, MPI_BYTE, MPI_COMM_WORLD);
        case 2:
          return static_cast<int>(toru_alltoall(in.data(), n, MPI_BYTE, out.data(), n, MPI_BYTE, MPI_COMM_WORLD));
        case 3:
          return MPI_Alltoallv(in.data(), counts.data(), displs.data(), MPI_BYTE, out.data(), counts.data(),
                               displs.data(), MPI_BYTE, MPI_COMM_WORLD);
        default:
          return static_cast<int>(toru_alltoallv(in.data(), counts.data(), displs.data(), MPI_BYTE, out.data(),
                                                 counts.data(), displs.data(), MPI_BYTE, MPI_COMM_WORLD));
      }
    };
    int ok[rows];
    for (int k = 0; k < rows; ++k) {
      std::fill(out.begin(), out.end(), 0);
      if (call(k) != 0) throw toru::error(toru::errc::mpi, fmt::format("{} failed: {}", names[k], toru_last_error()));
      ok[k] = out == want ? 1 : 0;
    }
    MPI_Allreduce(MPI_IN_PLACE, ok, rows, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    std::vector<double> times[rows];
    for (int rep = -s.warmup; rep < s.reps; ++rep) {
      for (const std::size_t o : toru::apps::balanced_order(static_cast<std::size_t>(rows), rep)) {
        const int k = static_cast<int>(o);
        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = MPI_Wtime();
        call(k);
        const double t = MPI_Wtime() - t0;
        if (rep >= 0) times[k].push_back(t);
      }
    }
    double med[rows], fastest[rows], added[rows] = {};
    for (int k = 0; k < rows; ++k) {
      MPI_Allreduce(MPI_IN_PLACE, times[k].data(), static_cast<int>(times[k].size()), MPI_DOUBLE, MPI_MAX,
                    MPI_COMM_WORLD);
      med[k] = median(times[k]);
      fastest[k] = *std::min_element(times[k].begin(), times[k].end());
    }
    for (int k = 0; k < rows; ++k) {
      if (peer[k] < 0) continue;
      std::vector<double> d(times[k].size());
      for (std::size_t i = 0; i < d.size(); ++i) d[i] = times[k][i] - times[peer[k]][i];
      added[k] = median(d);
    }
    if (rank != 0) continue;
    for (int k = 0; k < rows; ++k) {
      const double ratio = peer[k] >= 0 ? med[k] / med[peer[k]] : 1.0;
      if (s.json)
        out_rows.push_back({{"call", names[k]},
                            {"bytes", bytes},
                            {"ranks", P},
                            {"median_s", med[k]},
                            {"min_s", fastest[k]},
                            {"added_s", added[k]},
                            {"ratio_vs_mpi", ratio},
                            {"correct", ok[k] == 1}});
      else
        fmt::print("{:>10} {:>18} {:>12} {:>12} {:>12} {:>7.3f} {:>6}\n", toru::topology::format_bytes(bytes_d),
                   names[k], fmt_time(med[k]), fmt_time(fastest[k]), peer[k] >= 0 ? fmt_time(added[k]) : "", ratio,
                   ok[k] ? "ok" : "WRONG");
    }
    std::fflush(stdout);
  }
  if (rank == 0 && s.json)
    fmt::print("{}\n", nlohmann::json{{"mode", "dropin"}, {"ranks", P}, {"rows", out_rows}}.dump(2));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"toru-alltoall-bench: toru's all-to-all algorithms against MPI_Alltoall (or simulated on a torus)",
               "toru-alltoall-bench"};
  settings s;
  std::string min_b = "8", max_b = "4MiB";
  app.add_option("--min-bytes", min_b, "smallest block per pair (e.g. 8, 1KiB)")->capture_default_str();
  app.add_option("--max-bytes", max_b, "largest block per pair")->capture_default_str();
  app.add_option("--factor", s.factor, "size step factor")->check(CLI::Range(2, 1024))->capture_default_str();
  app.add_option("--reps", s.reps, "timed repetitions (x5 up to 64 KiB)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app.add_option("--warmup", s.warmup, "untimed repetitions first")->check(CLI::Range(0, 1000))->capture_default_str();
  app.add_option("--torus", s.torus, "torus spec (toru::topology::torus::parse), e.g. 2x2x4,bw=200Mb/s");
  app.add_option("--algorithms", s.algorithms,
                 "rows: mpi mpi-repeat auto direct pairwise bruck indirect (mpi-repeat: MPI_Alltoall timed a second "
                 "time, the noise floor of every ratio)")
      ->capture_default_str();
  app.add_option("--chunks", s.chunks, "pipeline chunks (0 = model)")
      ->check(CLI::Range(0, 4096))
      ->capture_default_str();
  app.add_option("--threads", s.threads, "communication threads (0 or 1)")
      ->check(CLI::Range(0, 1))
      ->capture_default_str();
  app.add_flag("--simulate", s.simulate, "simulate the schedules on --torus instead of measuring (no MPI needed)");
  std::string model = "packet", transport = "tcp", cc = "bbr", burst, host_delay;
  app.add_option("--model", model,
                 "with --simulate: packet (packet-level, fitted tier above --packet-max-nodes), fitted, or fluid")
      ->check(CLI::IsMember({"packet", "fitted", "fluid"}))
      ->capture_default_str();
  app.add_option("--packet-max-nodes", s.sim.packet_max_nodes, "largest torus simulated packet by packet")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  app.add_option("--transport", transport,
                 "with --simulate: the links, overriding the spec's transport= (tcp: Ethernet, drop-tail, the "
                 "toru-netmodel tiers; credit: an HPC torus, lossless, the toru-credit tiers)")
      ->check(CLI::IsMember({"tcp", "credit"}));
  app.add_option("--credit-packet-max-nodes", s.sim.credit_packet_max_nodes,
                 "credit transport: largest torus simulated packet by packet")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  app.add_option("--congestion", cc, "packet model, tcp: bbr or reno")
      ->check(CLI::IsMember({"bbr", "reno"}))
      ->capture_default_str();
  app.add_option("--tbf-burst", burst, "packet model, tcp: tbf bucket per link (default 64KiB, the testbed's)");
  app.add_option("--host-delay", host_delay, "packet model: host reaction time per protocol step (default 100us)");
  std::string host_slice, socket_buffer;
  app.add_option("--host-cores", s.sim.packet.host_cores,
                 "packet model: CPU cores the ranks share (0 = a CPU per node; the netns testbed: 2)")
      ->check(CLI::Range(0, 1 << 20));
  app.add_option("--host-slice", host_slice, "packet model: a rank's turn on a shared core (default 1.5ms)");
  app.add_option("--socket-buffer", socket_buffer,
                 "packet model: bytes the kernel holds per connection between a rank's turns (0 = unlimited)");
  app.add_option(
         "--warm", s.sim.packet.repetitions,
         "packet model: run the schedule this many times back to back, report the last (testbed: warm connections)")
      ->check(CLI::Range(1, 100));
  app.add_option("--timed", s.sim.timed_repetitions,
                 "packet model: report the median of the last N of the --warm runs (a benchmark's timed reps)")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  app.add_option("--seeds", s.sim.seeds,
                 "packet model: the median over N runs with seeded host timing noise (reaction times, the ranks' "
                 "turn order); 1 = the deterministic run")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_option("--connections-per-peer", s.sim.packet.connections_per_peer,
                 "packet model, tcp: connections per node pair (Open MPI's tcp BTL: one per interface; 0 = one per "
                 "torus link of the node)")
      ->check(CLI::Range(0, 64))
      ->capture_default_str();
  app.add_flag("--gso", s.sim.packet.gso, "packet model, tcp/BBR: TSO/GSO bursts, tbf segmenting the long ones");
  app.add_flag("--tlp", s.sim.packet.tail_loss_probe, "packet model, tcp: Linux's tail loss probe");
  app.add_flag("--delayed-ack", s.sim.packet.delayed_ack,
               "packet model, tcp: Linux's delayed ACKs (one per two full segments) instead of one per segment");
  app.add_flag("--small-queues", s.sim.packet.small_queues,
               "packet model, tcp: Linux's TCP small queues (about two skbs per connection in its first-hop qdisc)");
  app.add_flag("--bbr-write-state", s.sim.packet.bbr_write_state,
               "packet model, BBR: app-limited marking at socket writes and STARTUP's pacing floor");
  app.add_flag("--dropin", s.dropin,
               "time toru_alltoall(v) against MPI_Alltoall(v), call by call (--reps defaults to 1000 here)");
  app.add_flag("--json", s.json, "print JSON instead of a table");
  // Arguments are checked before MPI starts, so a usage error needs no mpiexec to report.
  bool measure_next = false;
  const int rc = toru::apps::run_cli(app, argc, argv, [&] {
    s.min_bytes = toru::topology::parse_bytes(min_b, "--min-bytes");
    s.max_bytes = toru::topology::parse_bytes(max_b, "--max-bytes");
    toru::expect(s.min_bytes >= 1 && s.min_bytes <= s.max_bytes, "--min-bytes", ">= 1 and <= --max-bytes", min_b);
    for (const auto& a : s.algorithms)
      if (!is_mpi(a)) toru::comm::algorithm_from_string(a);
    s.sim.model = toru::comm::network_model_from_string(model);
    if (app.count("--transport") > 0)
      s.transport = toru::topology::link_transport_from_string(transport, "--transport");
    s.sim.packet.congestion = cc == "reno" ? toru::topology::packet_params::congestion_control::reno
                                           : toru::topology::packet_params::congestion_control::bbr;
    if (!burst.empty()) s.sim.packet.tbf_burst = toru::topology::parse_bytes(burst, "--tbf-burst");
    if (!host_delay.empty()) s.sim.packet.host_delay = toru::topology::parse_time(host_delay, "--host-delay");
    if (!host_slice.empty()) s.sim.packet.host_slice = toru::topology::parse_time(host_slice, "--host-slice");
    if (!socket_buffer.empty())
      s.sim.packet.socket_buffer = toru::topology::parse_bytes(socket_buffer, "--socket-buffer");
    if (s.simulate) return simulate(s);
    // A measured block is one MPI count of MPI_BYTE (an int); the simulation has no such limit.
    toru::expect(s.max_bytes <= std::numeric_limits<int>::max(), "--max-bytes",
                 fmt::format("at most {} bytes per pair when measuring (an MPI count of MPI_BYTE)",
                             std::numeric_limits<int>::max()),
                 max_b);
    if (s.dropin && app.count("--reps") == 0) s.reps = 1000;
    measure_next = true;
    return toru::apps::exit_ok;
  });
  if (!measure_next) return rc;

  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int measured = toru::apps::exit_ok;
  try {
    measured = s.dropin ? dropin(s) : measure(s);
  } catch (...) {
    measured = toru::apps::report_exception(app, rank);
  }
  MPI_Finalize();
  return measured;
}
