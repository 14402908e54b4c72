// SPDX-License-Identifier: BSD-3-Clause
#include "analysis.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>

#include "otf2_writer.hpp"
#include "rootcause.hpp"
#include "toru/tune/report.hpp"
#include "toru/tune/rules.hpp"

namespace toru::tune::shim {
namespace {

using json = nlohmann::json;

// (object, address) -> (function, "file:line"), one addr2line run per object.
std::map<std::pair<std::string, std::uint64_t>, std::pair<std::string, std::string>> symbolise(
    const std::map<std::string, std::vector<std::uint64_t>>& by_object) {
  std::map<std::pair<std::string, std::uint64_t>, std::pair<std::string, std::string>> out;
  for (const auto& [obj, addrs] : by_object) {
    FILE* p = nullptr;
    if (obj != "?" && !obj.empty() && obj.find('\'') == std::string::npos) {
      std::string cmd = fmt::format("addr2line -C -f -e '{}'", obj);
      for (auto a : addrs) cmd += fmt::format(" 0x{:x}", a);
      cmd += " 2>/dev/null";
      p = popen(cmd.c_str(), "r");
    }
    for (auto a : addrs) {
      std::string fn = "??", loc = "??:0";
      char buf[4096];
      if (p && fgets(buf, sizeof buf, p)) {
        fn = buf;
        fn.erase(fn.find_last_not_of("\r\n") + 1);
        if (fgets(buf, sizeof buf, p)) {
          loc = buf;
          loc.erase(loc.find_last_not_of("\r\n") + 1);
          if (auto d = loc.find(" (discriminator"); d != std::string::npos) loc.erase(d);
        }
      }
      out[{obj, a}] = {fn, loc};
    }
    if (p) pclose(p);
  }
  return out;
}

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
  std::map<std::string, int> index;
  std::vector<std::vector<int>> of_rank;  // [rank][local] -> global
};

site_table merge_sites(std::vector<rank_data>& ranks, const char* field) {
  site_table t;
  const std::size_t n = ranks.size();
  t.of_rank.resize(n);
  for (std::size_t r = 0; r < n; ++r)
    for (const auto& s : ranks[r].stats[field]) {
      const std::string key = fmt::format("{}|{}|{}", s["function"].get<std::string>(), s["object"].get<std::string>(),
                                          s["offset"].get<std::uint64_t>());
      auto [it, fresh] = t.index.try_emplace(key, static_cast<int>(t.sites.size()));
      if (fresh) {
        t.sites.emplace_back(n);
        t.sites.back().info = {{"function", s["function"]}, {"object", s["object"]}, {"offset", s["offset"]}};
      }
      gsite& g = t.sites[static_cast<std::size_t>(it->second)];
      g.time[r] += s["time"].get<double>();
      g.compute_before[r] += s["compute_before"].get<double>();
      g.calls[r] += s["calls"].get<double>();
      g.bytes[r] += s["bytes"].get<double>();
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

struct msg_key {
  int src, dst, tag;
  std::uint64_t comm;
  std::uint32_t seq;
  bool operator==(const msg_key&) const = default;
};
struct msg_hash {
  std::size_t operator()(const msg_key& k) const {
    std::size_t h = std::hash<std::uint64_t>{}(k.comm);
    for (std::uint64_t v : {std::uint64_t(unsigned(k.src)), std::uint64_t(unsigned(k.dst)),
                            std::uint64_t(unsigned(k.tag)), std::uint64_t(k.seq)})
      h = h * 1000003u ^ std::hash<std::uint64_t>{}(v);
    return h;
  }
};

bool blocking_send(std::uint16_t f) { return f == f_send || f == f_ssend; }

void wait_states(std::vector<rank_data>& ranks, site_table& t) {
  std::unordered_map<msg_key, std::pair<int, std::size_t>, msg_hash> sends;
  for (std::size_t r = 0; r < ranks.size(); ++r)
    for (std::size_t i = 0; i < ranks[r].events.size(); ++i) {
      const event& e = ranks[r].events[i];
      if (e.type == ev_type::send) sends[{static_cast<int>(r), e.peer, e.tag, e.key, e.seq}] = {static_cast<int>(r), i};
    }
  auto site_of = [&](std::size_t r, int local) -> gsite* {
    if (local < 0 || static_cast<std::size_t>(local) >= t.of_rank[r].size()) return nullptr;
    return &t.sites[static_cast<std::size_t>(t.of_rank[r][static_cast<std::size_t>(local)])];
  };
  std::map<std::pair<std::size_t, std::uint32_t>, std::pair<double, int>> group_max;
  std::map<std::pair<std::uint64_t, std::uint32_t>, std::vector<std::pair<std::size_t, const event*>>> colls;
  for (std::size_t r = 0; r < ranks.size(); ++r)
    for (const event& e : ranks[r].events) {
      if (e.type == ev_type::coll) colls[{e.key, e.seq}].emplace_back(r, &e);
      if (e.type != ev_type::recv) continue;
      auto it = sends.find({e.peer, static_cast<int>(r), e.tag, e.key, e.seq});
      if (it == sends.end()) continue;
      const auto [sr, si] = it->second;
      const event& s = ranks[static_cast<std::size_t>(sr)].events[si];
      const double late = std::max(0.0, std::min(s.t0, e.t1) - e.t0);
      if (gsite* g = site_of(static_cast<std::size_t>(sr), s.site)) g->caused_late_sender += late;
      if (e.group) {
        auto& gm = group_max[{r, e.group}];
        if (late >= gm.first) gm = {late, e.site};
      } else if (gsite* g = site_of(r, e.site)) {
        g->late_sender[r] += late;
      }
      if (blocking_send(s.func)) {
        const double lr = std::max(0.0, std::min(e.tpost, s.t1) - s.t0);
        if (gsite* g = site_of(static_cast<std::size_t>(sr), s.site))
          g->late_receiver[static_cast<std::size_t>(sr)] += lr;
        if (gsite* g = site_of(r, e.site)) g->caused_late_receiver += lr;
      }
    }
  for (const auto& [k, v] : group_max)
    if (gsite* g = site_of(k.first, v.second)) g->late_sender[k.first] += v.first;
  for (const auto& [k, members] : colls) {
    if (members.empty() || static_cast<int>(members.size()) != members.front().second->peer) continue;
    double last = 0;
    for (const auto& m : members) last = std::max(last, m.second->t0);
    for (const auto& [r, e] : members)
      if (gsite* g = site_of(r, e->site)) g->wait_collective[r] += std::max(0.0, std::min(last, e->t1) - e->t0);
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

// The delay analysis over every rank's events, with site ids made global so the same code on two
// ranks is the same region.
json root_cause_json(const std::vector<rank_data>& ranks, const site_table& t) {
  std::vector<std::vector<event>> global(ranks.size());
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    global[r].reserve(ranks[r].events.size());
    for (event e : ranks[r].events) {
      if (e.type == ev_type::io || e.type == ev_type::toru) continue;
      const bool known = e.site >= 0 && static_cast<std::size_t>(e.site) < t.of_rank[r].size();
      e.site = known ? t.of_rank[r][static_cast<std::size_t>(e.site)] : -1;
      global[r].push_back(e);
    }
  }
  const rootcause_result rc = root_causes(global);
  auto region = [](const region_key& k) { return json{{"rank", k.rank}, {"from", k.from}, {"to", k.to}}; };
  json causes = json::array();
  // The few largest: a profile lists what a reader acts on, not every region of a long run.
  for (std::size_t i = 0; i < rc.causes.size() && i < 20; ++i) {
    const wait_cause& c = rc.causes[i];
    json j = region(c.region);
    j["caused"] = c.caused;
    j["direct"] = c.direct;
    j["compute"] = c.compute;
    j["excess"] = c.excess;
    j["critical"] = c.critical;
    causes.push_back(std::move(j));
  }
  json path = json::array();
  for (std::size_t i = 0; i < rc.critical.size() && i < 20; ++i) {
    json j = region(rc.critical[i].region);
    j["time"] = rc.critical[i].time;
    path.push_back(std::move(j));
  }
  return {{"total_wait", rc.total_wait},
          {"attributed", rc.attributed},
          {"causes", std::move(causes)},
          {"critical_path", std::move(path)},
          {"critical_rank", rc.critical_rank}};
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

// A window of the run for the report's timeline: from the middle of the run, up to 300 events per
// rank and a fifth of the run.
json timeline(const std::vector<rank_data>& ranks, double t_begin, double wall) {
  const double w0 = t_begin + 0.5 * wall, w1 = w0 + 0.2 * wall;
  json out = json::object();
  double end = w1;
  for (const auto& r : ranks) {
    int n = 0;
    for (const event& e : r.events)
      if (e.t0 >= w0 && e.t0 < w1 && e.type != ev_type::toru && ++n == 300) end = std::min(end, e.t0);
  }
  out["t0"] = w0 - t_begin;
  out["t1"] = end - t_begin;
  json rows = json::array();
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    json row = json::array();
    const auto& regions = ranks[r].stats["regions"];
    for (const event& e : ranks[r].events) {
      if (e.t1 < w0 || e.t0 >= end) continue;
      const std::string label = e.type == ev_type::toru && e.key < regions.size()
                                    ? regions[e.key]["name"].get<std::string>()
                                    : function_names[e.func];
      row.push_back({e.t0 - t_begin, e.t1 - t_begin, category(e), label});
    }
    rows.push_back(std::move(row));
  }
  out["ranks"] = std::move(rows);
  return out;
}

}  // namespace

json build_profile(std::vector<rank_data>& ranks) {
  const std::size_t n = ranks.size();
  site_table mpi = merge_sites(ranks, "sites");
  site_table io = merge_sites(ranks, "io_sites");
  name_sites({&mpi, &io});
  wait_states(ranks, mpi);

  json p;
  p["toru_tune_profile"] = 1;
  p["nranks"] = n;
  double wall = 0, t_begin = 1e300;
  json jr = json::array();
  for (std::size_t r = 0; r < n; ++r) {
    json s = ranks[r].stats;
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
    jr.push_back(std::move(s));
  }
  p["wall"] = wall;
  p["ranks"] = std::move(jr);
  p["sites"] = sites_json(mpi);
  p["root_causes"] = root_cause_json(ranks, mpi);
  p["io_sites"] = sites_json(io);
  // toru's regions, merged by (name, detail).
  std::map<std::pair<std::string, std::string>, json> regions;
  for (std::size_t r = 0; r < n; ++r)
    for (const auto& g : ranks[r].stats["regions"]) {
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
  p["timeline"] = timeline(ranks, t_begin, wall);
  p["papi"] = ranks.front().stats["papi"];
  bool truncated = false;
  std::size_t nev = 0;
  for (const auto& r : ranks) {
    truncated = truncated || r.stats["truncated"].get<bool>();
    nev += r.events.size();
  }
  p["trace"] = {{"events", nev}, {"truncated", truncated}};
  return p;
}

void write_run(std::vector<rank_data>& ranks, const std::string& dir) {
  namespace fs = std::filesystem;
  fs::create_directories(dir);
  json profile = build_profile(ranks);
  {
    std::error_code ec;
    auto exe = fs::read_symlink("/proc/self/exe", ec);
    profile["program"] = ec ? "" : exe.string();
  }
  const char* tr = std::getenv("TORU_TUNE_TRACE");
  if (!(tr && std::strcmp(tr, "0") == 0)) {
    try {
      write_otf2(ranks, profile, (fs::path(dir) / "trace").string());
      profile["trace"]["otf2"] = "trace/traces.otf2";
    } catch (const std::exception& e) {
      profile["trace"]["note"] = e.what();
    }
  }
  // The wisdom of a tuner that ran in this process (tune::tuner writes it) joins the profile so
  // the rules can compare toru's choices with what was measured.
  if (fs::exists(fs::path(dir) / "tuner.json")) {
    std::ifstream in(fs::path(dir) / "tuner.json");
    profile["tuner"] = json::parse(in, nullptr, false);
  }
  std::ofstream(fs::path(dir) / "profile.json") << profile.dump(1) << "\n";
  const auto rules = load_rules(default_rule_dirs());
  const auto findings = diagnose(profile, rules);
  std::ofstream(fs::path(dir) / "findings.json") << findings_json(findings).dump(1) << "\n";
  std::ofstream(fs::path(dir) / "report.html") << html_report(profile, findings);
  std::fprintf(stderr, "libtoru_tune_pmpi: %s: %zu ranks, %.3f s, %zu finding(s); `toru-tune advise %s` explains\n",
               dir.c_str(), ranks.size(), profile["wall"].get<double>(), findings.size(), dir.c_str());
}

}  // namespace toru::tune::shim
