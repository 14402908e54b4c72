// SPDX-License-Identifier: BSD-3-Clause
#include "analysis.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>

#include "rootcause.hpp"
#include "symbols.hpp"
#include "toru/tune/report.hpp"
#include "toru/tune/rules.hpp"

namespace toru::tune::shim {
namespace {

using json = nlohmann::json;

struct gsite {
  json info;  // function, object, offset, symbol, location
  std::vector<double> time, compute_before, late_sender, late_receiver, wait_collective;
  std::vector<double> calls, bytes;
  double caused_late_sender = 0, caused_late_receiver = 0;
  std::map<int, double> partners;
  explicit gsite(std::size_t n)
      : time(n), compute_before(n), late_sender(n), late_receiver(n), wait_collective(n), calls(n), bytes(n) {}
};

struct site_table {
  std::vector<gsite> sites;
  std::map<std::int64_t, int> by_id;      // global site id (finalize.cpp's, the replay's) -> index
  std::vector<std::vector<int>> of_rank;  // [rank][local] -> global
};

site_table merge_sites(const std::vector<json>& ranks, const char* field) {
  site_table t;
  const std::size_t n = ranks.size();
  t.of_rank.resize(n);
  auto num = [](const json& s, const char* k) { return s.contains(k) ? s[k].get<double>() : 0.0; };
  for (std::size_t r = 0; r < n; ++r)
    for (const auto& s : ranks[r][field]) {
      auto [it, fresh] = t.by_id.try_emplace(s["id"].get<std::int64_t>(), static_cast<int>(t.sites.size()));
      if (fresh) {
        t.sites.emplace_back(n);
        t.sites.back().info = {{"function", s["function"]}, {"object", s["object"]}, {"offset", s["offset"]}};
      }
      gsite& g = t.sites[static_cast<std::size_t>(it->second)];
      g.time[r] += s["time"].get<double>();
      g.compute_before[r] += s["compute_before"].get<double>();
      g.calls[r] += s["calls"].get<double>();
      g.bytes[r] += s["bytes"].get<double>();
      g.late_sender[r] += num(s, "late_sender");
      g.late_receiver[r] += num(s, "late_receiver");
      g.wait_collective[r] += num(s, "wait_collective");
      g.caused_late_sender += num(s, "caused_late_sender");
      g.caused_late_receiver += num(s, "caused_late_receiver");
      for (auto& [p, b] : s["partners"].items()) g.partners[std::stoi(p)] += b.get<double>();
      t.of_rank[r].push_back(it->second);
    }
  return t;
}

void name_sites(std::vector<site_table*> tables) {
  std::map<std::string, std::vector<std::uint64_t>> by_object;
  for (auto* t : tables)
    for (auto& g : t->sites) by_object[g.info["object"]].push_back(g.info["offset"]);
  const auto names = symbolise(by_object);
  for (auto* t : tables)
    for (auto& g : t->sites) {
      const auto& [fn, loc] = names.at({g.info["object"], g.info["offset"]});
      // The function's name without its parameter list: C++ signatures make unreadable reports.
      std::string sym = fn;
      if (auto paren = sym.find('('); paren != std::string::npos && paren > 0) sym.erase(paren);
      g.info["symbol"] = sym;
      const std::string file = loc.substr(0, loc.rfind(':'));
      g.info["file"] = file;
      const bool known = loc.rfind("??", 0) != 0;
      g.info["location"] =
          known
              ? std::filesystem::path(file).filename().string() + loc.substr(loc.rfind(':'))
              : fmt::format("{}+0x{:x}", std::filesystem::path(g.info["object"].get<std::string>()).filename().string(),
                            g.info["offset"].get<std::uint64_t>());
    }
}

json sites_json(const site_table& t) {
  json out = json::array();
  for (std::size_t i = 0; i < t.sites.size(); ++i) {
    const gsite& g = t.sites[i];
    json s = g.info;
    s["id"] = i;
    s["calls"] = g.calls;
    s["time"] = g.time;
    s["bytes"] = g.bytes;
    s["compute_before"] = g.compute_before;
    s["late_sender"] = g.late_sender;
    s["late_receiver"] = g.late_receiver;
    s["wait_collective"] = g.wait_collective;
    s["caused_late_sender"] = g.caused_late_sender;
    s["caused_late_receiver"] = g.caused_late_receiver;
    json p = json::object();
    for (auto& [k, v] : g.partners) p[std::to_string(k)] = v;
    s["partners"] = p;
    out.push_back(std::move(s));
  }
  return out;
}

// The delay analysis's result (replay.cpp) with its global site ids as the profile's site indices.
json root_cause_json(const run_data& run, const site_table& t) {
  const rootcause_result& rc = run.root_causes;
  auto site = [&](std::int64_t id) -> int {
    auto it = t.by_id.find(id);
    return it == t.by_id.end() ? -1 : it->second;
  };
  auto region = [&](const region_key& k) { return json{{"rank", k.rank}, {"from", site(k.from)}, {"to", site(k.to)}}; };
  json causes = json::array();
  for (const wait_cause& c : rc.causes) {
    json j = region(c.region);
    j["caused"] = c.caused;
    j["direct"] = c.direct;
    j["compute"] = c.compute;
    j["excess"] = c.excess;
    j["critical"] = c.critical;
    causes.push_back(std::move(j));
  }
  json path = json::array();
  for (const critical_segment& s : rc.critical) {
    json j = region(s.region);
    j["time"] = s.time;
    path.push_back(std::move(j));
  }
  json per_rank = json::array();
  for (const json& r : run.ranks) per_rank.push_back(r.value("critical", 0.0));
  return {{"total_wait", rc.total_wait},
          {"attributed", rc.attributed},
          {"causes", std::move(causes)},
          {"critical_path", std::move(path)},
          {"critical_rank", std::move(per_rank)}};
}

const char* category(const event& e) {
  switch (e.type) {
    case ev_type::send:
    case ev_type::recv:
      return "p2p";
    case ev_type::coll:
      return "collective";
    case ev_type::io:
      return "io";
    case ev_type::toru:
      return "toru";
    default:
      return "mpi";
  }
}

}  // namespace

json timeline_row(const std::vector<event>& events, const json& regions, double t_begin, double w0, double w1) {
  json row = json::array();
  for (const event& e : events) {
    if (e.t1 < w0 || e.t0 >= w1) continue;
    const std::string label = e.type == ev_type::toru && e.key < regions.size()
                                  ? regions[e.key]["name"].get<std::string>()
                                  : function_names[e.func];
    row.push_back({e.t0 - t_begin, e.t1 - t_begin, category(e), label});
  }
  return row;
}

json build_profile(const run_data& run) {
  const auto& ranks = run.ranks;
  const std::size_t n = ranks.size();
  site_table mpi = merge_sites(ranks, "sites");
  site_table io = merge_sites(ranks, "io_sites");
  name_sites({&mpi, &io});

  json p;
  p["toru_tune_profile"] = 1;
  p["nranks"] = n;
  double wall = 0, t_begin = 1e300;
  json jr = json::array();
  for (std::size_t r = 0; r < n; ++r) {
    json s = ranks[r];
    wall = std::max(wall, s["wall"].get<double>());
    t_begin = std::min(t_begin, s["t_init"].get<double>());
    double ls = 0, lr = 0, wc = 0;
    for (const auto& g : mpi.sites) {
      ls += g.late_sender[r];
      lr += g.late_receiver[r];
      wc += g.wait_collective[r];
    }
    s["late_sender"] = ls;
    s["late_receiver"] = lr;
    s["wait_collective"] = wc;
    s.erase("sites");
    s.erase("io_sites");
    s.erase("regions");
    s.erase("timeline");
    jr.push_back(std::move(s));
  }
  p["wall"] = wall;
  p["ranks"] = std::move(jr);
  p["sites"] = sites_json(mpi);
  p["root_causes"] = root_cause_json(run, mpi);
  p["io_sites"] = sites_json(io);
  // toru's regions, merged by (name, detail).
  std::map<std::pair<std::string, std::string>, json> regions;
  for (std::size_t r = 0; r < n; ++r)
    for (const auto& g : ranks[r]["regions"]) {
      json& m = regions[{g["name"], g["detail"]}];
      if (m.is_null())
        m = {{"name", g["name"]}, {"detail", g["detail"]}, {"count", 0},
             {"bytes", 0.0},      {"value", 0.0},          {"time", std::vector<double>(n)}};
      m["count"] = m["count"].get<std::uint64_t>() + g["count"].get<std::uint64_t>();
      m["bytes"] = m["bytes"].get<double>() + g["bytes"].get<double>();
      m["value"] = m["value"].get<double>() + g["value"].get<double>();
      m["time"][r] = g["time"];
    }
  p["regions"] = json::array();
  for (auto& [k, v] : regions) p["regions"].push_back(v);
  json rows = json::array();
  for (const auto& r : ranks)
    if (r.contains("timeline")) rows.push_back(r["timeline"]);
  p["timeline"] = {{"t0", run.window_t0}, {"t1", run.window_t1}, {"ranks", std::move(rows)}};
  p["papi"] = ranks.front()["papi"];
  bool truncated = false;
  std::size_t nev = 0;
  for (const auto& r : ranks) {
    truncated = truncated || r["truncated"].get<bool>();
    nev += r["events"].get<std::size_t>();
  }
  p["trace"] = run.trace;
  p["trace"]["events"] = nev;
  p["trace"]["truncated"] = truncated;
  return p;
}

void write_run(const run_data& run, const std::string& dir) {
  namespace fs = std::filesystem;
  fs::create_directories(dir);
  const auto t0 = std::chrono::steady_clock::now();
  json profile = build_profile(run);
  {
    std::error_code ec;
    auto exe = fs::read_symlink("/proc/self/exe", ec);
    profile["program"] = ec ? "" : exe.string();
  }
  // The wisdom of a tuner that ran in this process (tune::tuner writes it) joins the profile so
  // the rules can compare toru's choices with what was measured.
  if (fs::exists(fs::path(dir) / "tuner.json")) {
    std::ifstream in(fs::path(dir) / "tuner.json");
    profile["tuner"] = json::parse(in, nullptr, false);
  }
  const auto rules = load_rules(default_rule_dirs());
  auto findings = diagnose(profile, rules);
  profile["tool"] = run.tool;
  profile["tool"]["profile_s"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::ofstream(fs::path(dir) / "profile.json") << profile.dump(1) << "\n";
  std::ofstream(fs::path(dir) / "findings.json") << findings_json(findings).dump(1) << "\n";
  std::ofstream(fs::path(dir) / "report.html") << html_report(profile, findings);
  double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (const auto& [k, v] : run.tool.items()) spent += v.get<double>();
  std::fprintf(stderr,
               "libtoru_tune_pmpi: %s: %zu ranks, %.3f s, %zu finding(s) (analysis and files at MPI_Finalize: %.3f s); "
               "`toru-tune advise %s` explains\n",
               dir.c_str(), run.ranks.size(), profile["wall"].get<double>(), findings.size(), spent, dir.c_str());
}

}  // namespace toru::tune::shim
