// The packet model against the stored testbed figures (tests/topology/data/testbed_2x2x4.json), one
// column per model variant: the table of docs/benchmarks.md "Calibration, fifth session". The
// calibration test (topology_netmodel_calibration_test) pins the defaults; this prints what the
// switches and seeded runs do to every row, including the 1 MiB rows the test skips.
//
//   netmodel_calibration --variant defaults --variant seeds=5 --variant delayed-ack,small-queues
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

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
};

// "delayed-ack,small-queues,seeds=5": switches on top of the testbed's description (2 shared cores,
// the call after a warm-up, as the calibration test).
variant parse_variant(const std::string& spec) {
  variant v{spec, {}, 1};
  v.params.host_cores = 2;
  v.params.repetitions = 2;
  std::stringstream ss(spec);
  for (std::string item; std::getline(ss, item, ',');) {
    if (item == "defaults") continue;
    if (item == "delayed-ack")
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
    else
      throw toru::error(toru::errc::invalid_argument,
                        fmt::format("--variant '{}': unknown item '{}' (expected defaults, delayed-ack, small-queues, "
                                    "connections, gso, tlp, write-state or seeds=N)",
                                    spec, item));
  }
  toru::expect(v.seeds >= 1, "--variant seeds", ">= 1", spec);
  return v;
}

struct row {
  std::string shape, schedule;
  double bytes = 0, testbed = 0;
  int chunks = 0;
};

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
  app.add_option("--variant", specs,
                 "a column: defaults, or comma-separated switches (delayed-ack, small-queues, connections, gso, tlp, "
                 "write-state, seeds=N); repeatable")
      ->required();
  app.add_flag("--with-1mib", big, "also the 1 MiB rows (15 s of simulation each variant)");
  app.add_flag("--json", json, "print JSON instead of a markdown table");
  CLI11_PARSE(app, argc, argv);
  try {
    std::vector<variant> variants;
    for (const auto& s : specs) variants.push_back(parse_variant(s));
    std::ifstream f(data);
    if (!f) throw toru::error(toru::errc::invalid_argument, fmt::format("--data {}: cannot open", data));
    const auto d = nlohmann::json::parse(f);
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
    if (big) add(d["torus"], d["rows_1mib"]);
    for (const auto& s : d["shapes"]) add(s["torus"], s["rows"]);
    if (big) add(d["shapes"][0]["torus"], d["rows_1mib_222"]);

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
          std::vector<packet_result> runs;
          const auto med = simulate_packets_median(t, s, variants[k].params, variants[k].seeds, &runs);
          const double pct = 100 * bound / med.seconds;
          double lo = 1e9, hi = 0;
          for (const auto& x : runs) {
            lo = std::min(lo, 100 * bound / x.seconds);
            hi = std::max(hi, 100 * bound / x.seconds);
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
