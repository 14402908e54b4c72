// SPDX-License-Identifier: BSD-3-Clause
// The packet model against the stored testbed figures (tests/topology/data/testbed_2x2x4.json, the
// testbed's host TCP, BBR; testbed_reno.json, the same testbed with Reno), one column per model
// variant: the tables of docs/history/benchmarks-2026-12.md "Calibration, fifth session" and "sixth session". The
// calibration test (topology_netmodel_calibration_test) pins the defaults; this prints what the
// switches and seeded runs do to every row, including the 1 MiB rows the test skips.
//
//   netmodel_calibration --variant defaults --variant seeds=5 --variant delayed-ack,small-queues
//   netmodel_calibration --data tests/topology/data/testbed_reno.json --variant defaults --variant tlp
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "bench/bench_order.hpp"
#include "toru/core/error.hpp"
#include "toru/topology/fitted_model.hpp"
#include "toru/topology/network_model.hpp"
#include "toru/topology/packet_schedules.hpp"
#include "toru/topology/packet_sim.hpp"

using namespace toru::topology;

namespace {

struct variant {
  std::string name;
  packet_params params;
  int seeds = 1;
  int timed = 1;  // the median of the last this many of params.repetitions (the bench's timed calls)
  // true: the bench's own protocol, every row of a torus and block size timed in one interleaved
  // run (bench_order_runs); params.repetitions and timed are then unused
  bool bench_order = false;
};

struct host_description {
  packet_params params;
  int timed = 1;
};

// The data file's host description, as the calibration test reads it: the shared cores, the calls
// run back to back (warm_repetitions) and how many of the last are timed (timed_repetitions, absent:
// 1), and the testbed's TCP congestion control (absent: BBR, the host's default).
host_description described_host(const nlohmann::json& host) {
  host_description h;
  auto& p = h.params;
  p.host_cores = host.at("cores").get<int>();
  p.repetitions = host.at("warm_repetitions").get<int>();
  h.timed = host.value("timed_repetitions", 1);
  const auto cc = host.value("congestion", std::string("bbr"));
  if (cc != "bbr" && cc != "reno")
    throw toru::error(toru::errc::invalid_argument,
                      fmt::format("host.congestion '{}' in the data file: expected bbr or reno", cc));
  p.congestion = cc == "reno" ? packet_params::congestion_control::reno : packet_params::congestion_control::bbr;
  return h;
}

// "delayed-ack,small-queues,seeds=5": switches on top of the testbed's description (the data file's
// host: shared cores, the call after a warm-up, congestion control).
variant parse_variant(const std::string& spec, const host_description& host) {
  variant v{spec, host.params, 1, host.timed};
  std::stringstream ss(spec);
  for (std::string item; std::getline(ss, item, ',');) {
    if (item == "defaults") continue;
    if (item == "reno")
      v.params.congestion = packet_params::congestion_control::reno;
    else if (item == "bbr")
      v.params.congestion = packet_params::congestion_control::bbr;
    else if (item == "delayed-ack")
      v.params.delayed_ack = true;
    else if (item == "small-queues")
      v.params.small_queues = true;
    else if (item == "connections")
      v.params.connections_per_peer = 0;
    else if (item == "gso")
      v.params.gso = true;
    else if (item == "tlp")
      v.params.tail_loss_probe = true;
    else if (item == "write-state")
      v.params.bbr_write_state = true;
    else if (item.rfind("seeds=", 0) == 0)
      v.seeds = std::atoi(item.c_str() + 6);
    else if (item.rfind("warm=", 0) == 0)
      v.params.repetitions = std::atoi(item.c_str() + 5);
    else if (item.rfind("timed=", 0) == 0)
      v.timed = std::atoi(item.c_str() + 6);
    else if (item == "bench-order")
      v.bench_order = true;
    else
      throw toru::error(
          toru::errc::invalid_argument,
          fmt::format("--variant '{}': unknown item '{}' (expected defaults, reno, bbr, delayed-ack, "
                      "small-queues, connections, gso, tlp, write-state, seeds=N, warm=N, timed=N or bench-order)",
                      spec, item));
  }
  toru::expect(v.seeds >= 1, "--variant seeds", ">= 1", spec);
  toru::expect(v.params.repetitions >= 1, "--variant warm", ">= 1", spec);
  toru::expect(v.timed >= 1 && v.timed <= v.params.repetitions, "--variant timed", ">= 1 and <= warm", spec);
  return v;
}

struct row {
  std::string shape, schedule;
  double bytes = 0, testbed = 0;
  int chunks = 0;
};

// toru-alltoall-bench's protocol: the rows of one torus and block size are timed in one run on the
// same connections, interleaved: a correctness-check call of each row, then one untimed and `reps`
// timed rounds (5, 25 up to 64 KiB, 3 from 1 MiB, as the stored runs) in the balanced order of
// bench/bench_order.hpp. Each call inherits the TCP state the previous one left, which
// repeating one schedule does not show (under BBR MPI_Alltoall after other schedules' calls runs
// far slower than after its own). Returns, per row, one result per seed whose repetition_seconds are
// that row's timed calls (so timed_median_seconds over all of them is the bench's figure).
std::vector<std::vector<packet_result>> bench_order_runs(const torus& t, const std::vector<const row*>& rows,
                                                         const packet_params& p, int seeds) {
  const double bytes = rows.front()->bytes;
  const int reps = bytes >= (1 << 20) ? 3 : bytes <= (64 << 10) ? 25 : 5, warmup = 1;
  std::vector<packet_schedule> schedules;
  for (const auto* r : rows)
    schedules.push_back(
        alltoall_schedule(t, packet_schedule_kind_from_string(r->schedule), r->bytes, {.chunks = r->chunks}));
  std::vector<packet_schedule> calls = schedules;            // the check calls, in row order
  std::vector<std::vector<std::size_t>> timed(rows.size());  // each row's timed calls: indices into calls
  for (int rep = -warmup; rep < reps; ++rep)
    for (const std::size_t k : toru::apps::balanced_order(rows.size(), rep)) {
      if (rep >= 0) timed[k].push_back(calls.size());
      calls.push_back(schedules[k]);
    }
  std::vector<std::vector<packet_result>> out(rows.size());
  packet_params q = p;
  q.repetitions = 1;
  for (int seed = 0; seed < seeds; ++seed) {
    if (seeds > 1) q.seed = static_cast<std::uint64_t>(seed) + 1;
    const auto r = simulate_packet_calls(t, calls, q);
    for (std::size_t k = 0; k < rows.size(); ++k) {
      packet_result one;
      for (auto i : timed[k]) one.repetition_seconds.push_back(r.repetition_seconds[i]);
      one.seconds = one.repetition_seconds.back();
      out[k].push_back(std::move(one));
    }
  }
  return out;
}

std::string size_name(double b) {
  return b >= 1 << 20 ? fmt::format("{:g} MiB", b / (1 << 20)) : fmt::format("{:g} KiB", b / 1024);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"The packet model's variants against the stored emulated-torus figures (% of T_min)"};
  std::string data = TORU_TOPOLOGY_TEST_DATA "/testbed_2x2x4.json";
  std::vector<std::string> specs;
  bool big = false, json = false;
  app.add_option("--data", data, "testbed figures (JSON)")->capture_default_str();
  app.add_option(
         "--variant", specs,
         "a column: defaults (the data file's host), or comma-separated switches (reno, bbr, delayed-ack, "
         "small-queues, connections, gso, tlp, write-state, seeds=N, warm=N: calls back to back, timed=N: the median "
         "of the last N of them, bench-order: the rows of a torus and block size interleaved as "
         "toru-alltoall-bench runs them); repeatable")
      ->required();
  app.add_flag("--with-1mib", big, "also the 1 MiB rows (15 s of simulation each variant)");
  app.add_flag("--json", json, "print JSON instead of a markdown table");
  CLI11_PARSE(app, argc, argv);
  try {
    std::ifstream f(data);
    if (!f) throw toru::error(toru::errc::invalid_argument, fmt::format("--data {}: cannot open", data));
    const auto d = nlohmann::json::parse(f);
    const auto host = described_host(d.at("host"));
    std::vector<variant> variants;
    for (const auto& s : specs) variants.push_back(parse_variant(s, host));
    std::vector<std::pair<std::string, std::vector<row>>> groups;
    auto add = [&](const std::string& torus_spec, const nlohmann::json& rows) {
      const auto t = torus::parse(torus_spec);
      std::string shape;
      for (int i = 0; i < t.ndims(); ++i) shape += (i ? "x" : "") + std::to_string(t[i].extent);
      std::vector<row> out;
      for (const auto& r : rows) {
        const auto m = r["measured"].get<std::vector<double>>();
        out.push_back({shape, r["schedule"].get<std::string>(), r["bytes"].get<double>(),
                       std::accumulate(m.begin(), m.end(), 0.0) / static_cast<double>(m.size()),
                       r.value("chunks", 64)});
      }
      groups.emplace_back(torus_spec, std::move(out));
    };
    add(d["torus"], d["rows"]);
    if (big && d.contains("rows_1mib")) add(d["torus"], d["rows_1mib"]);
    for (const auto& s : d.value("shapes", nlohmann::json::array())) add(s["torus"], s["rows"]);
    if (big && d.contains("rows_1mib_222")) add(d["shapes"][0]["torus"], d["rows_1mib_222"]);

    nlohmann::json out = nlohmann::json::array();
    std::vector<int> within(variants.size(), 0);
    int rows_total = 0;
    if (!json) {
      std::string head = "| torus, block | algorithm | testbed |", rule = "|---|---|---|";
      for (const auto& v : variants) {
        head += fmt::format(" {}{} |", v.name, v.seeds > 1 ? " (range)" : "");
        rule += "---|";
      }
      fmt::print("{}\n{}\n", head, rule);
    }
    for (const auto& [spec, rows] : groups) {
      const auto t = torus::parse(spec);
      // bench-order variants: each block size's rows run together, once per variant
      std::map<std::pair<std::size_t, const row*>, std::vector<packet_result>> interleaved;
      for (std::size_t k = 0; k < variants.size(); ++k) {
        if (!variants[k].bench_order) continue;
        std::map<double, std::vector<const row*>> by_bytes;
        for (const auto& r : rows) by_bytes[r.bytes].push_back(&r);
        for (const auto& [bytes, group] : by_bytes) {
          auto runs = bench_order_runs(t, group, variants[k].params, variants[k].seeds);
          for (std::size_t i = 0; i < group.size(); ++i) interleaved[{k, group[i]}] = std::move(runs[i]);
        }
      }
      for (const auto& r : rows) {
        ++rows_total;
        const auto kind = packet_schedule_kind_from_string(r.schedule);
        const auto s = alltoall_schedule(t, kind, r.bytes, {.chunks = r.chunks});
        const double bound = alltoall_bound(t, r.bytes);
        std::string line =
            fmt::format("| {}, {} | {}{} | {:.1f} |", r.shape, size_name(r.bytes), r.schedule,
                        kind == packet_schedule_kind::indirect ? fmt::format(" ({})", r.chunks) : "", r.testbed);
        nlohmann::json jr{{"torus", spec},      {"bytes", r.bytes},     {"schedule", r.schedule},
                          {"chunks", r.chunks}, {"testbed", r.testbed}, {"model", nlohmann::json::object()}};
        for (std::size_t k = 0; k < variants.size(); ++k) {
          int timed = variants[k].timed;
          std::vector<packet_result> runs;
          if (variants[k].bench_order) {
            runs = interleaved.at({k, &r});
            timed = static_cast<int>(runs.front().repetition_seconds.size());
          } else {
            runs = simulate_packets_seeded(t, s, variants[k].params, variants[k].seeds);
          }
          const double pct = 100 * bound / timed_median_seconds(runs, timed);
          double lo = 1e9, hi = 0;
          for (const auto& x : runs) {
            const double run_pct = 100 * bound / timed_median_seconds({x}, timed);
            lo = std::min(lo, run_pct);
            hi = std::max(hi, run_pct);
          }
          const bool ok = std::abs(pct - r.testbed) <= 10;
          within[k] += ok;
          line += ok ? fmt::format(" {:.1f}", pct) : fmt::format(" **{:.1f}**", pct);
          if (variants[k].seeds > 1) line += fmt::format(" ({:.0f}–{:.0f})", lo, hi);
          line += " |";
          jr["model"][variants[k].name] = {{"percent", pct}, {"min", lo}, {"max", hi}, {"within_10", ok}};
        }
        if (json)
          out.push_back(jr);
        else
          fmt::print("{}\n", line);
      }
    }
    if (json) {
      nlohmann::json counts;
      for (std::size_t k = 0; k < variants.size(); ++k) counts[variants[k].name] = within[k];
      fmt::print("{}\n", nlohmann::json{{"model_version", std::string(packet_model_version)},
                                        {"rows", out},
                                        {"within_10", counts},
                                        {"row_count", rows_total}}
                             .dump(2));
    } else {
      std::string last = "| **within ±10** | | |";
      for (int w : within) last += fmt::format(" {} of {} |", w, rows_total);
      fmt::print("{}\nmodel: {}\n", last, packet_model_version);
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "netmodel_calibration: {}\n", e.what());
    return 2;
  }
  return 0;
}
