// SPDX-License-Identifier: BSD-3-Clause
// The metrics rules see, derived from a profile. Fractions are of the run's total rank time
// (wall x ranks) unless named otherwise; imbalance is (max - mean) / max over ranks.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "toru/tune/rules.hpp"

namespace toru::tune {

using json = nlohmann::json;

std::string fmt_location(const std::string& loc, const std::string& sym);

namespace {

std::vector<double> vec(const json& j) {
  if (j.is_array()) return j.get<std::vector<double>>();
  if (j.is_number()) return {j.get<double>()};
  return {};
}
double sum(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}
double vmax(const std::vector<double>& v) { return v.empty() ? 0 : *std::max_element(v.begin(), v.end()); }
double mean(const std::vector<double>& v) { return v.empty() ? 0 : sum(v) / static_cast<double>(v.size()); }
double imbalance(const std::vector<double>& v) {
  const double m = vmax(v);
  return m > 0 ? (m - mean(v)) / m : 0;
}
int argmax(const std::vector<double>& v) {
  return v.empty() ? -1 : static_cast<int>(std::max_element(v.begin(), v.end()) - v.begin());
}
bool is_collective(std::string f) {
  // A persistent collective (Open MPI 4.1's MPIX_Allreduce_init, MPI-4's MPI_Allreduce_init: its
  // init and, as the shim records them, its starts) is collective communication like its blocking
  // twin; a persistent send or receive (MPI_Send_init, MPI_Recv_init) is no collective either way.
  if (f.rfind("MPIX_", 0) == 0) f.erase(3, 1);
  if (f.ends_with("_init")) f.erase(f.size() - 5);
  // A nonblocking collective (MPI_Iallreduce) is collective communication like its blocking twin.
  if (f.rfind("MPI_Neighbor_", 0) == 0 || f.rfind("MPI_Ineighbor_", 0) == 0) return true;
  if (f.rfind("MPI_I", 0) == 0 && f != "MPI_Isend" && f != "MPI_Irecv" && f != "MPI_Iprobe") f.erase(4, 1);
  for (const char* c : {"MPI_Barrier", "MPI_Bcast", "MPI_Reduce", "MPI_Allreduce", "MPI_Alltoall", "MPI_Alltoallv",
                        "MPI_Alltoallw", "MPI_Allgather", "MPI_Allgatherv", "MPI_Gather", "MPI_Gatherv", "MPI_Scatter",
                        "MPI_Scatterv", "MPI_Reduce_scatter", "MPI_Reduce_scatter_block", "MPI_Scan", "MPI_Exscan"})
    if (f == c) return true;
  return false;
}
// A poll (MPI_Test*, MPI_Iprobe, MPI_Improbe) returns at once whether or not a message arrived: a
// loop of them is the program overlapping its work, not a message each (HPCC's RandomAccess makes
// 34 million MPI_Testany calls for far fewer messages).
bool is_poll(const std::string& f) { return f.rfind("MPI_Test", 0) == 0 || f == "MPI_Iprobe" || f == "MPI_Improbe"; }
std::string where(const json& s) {
  const std::string sym = s.value("symbol", std::string("??"));
  return fmt_location(s.value("location", std::string("?")), sym);
}

// The delay analysis's causes (profile "root_causes"): one set per compute region that made others
// wait, named by the call sites around it; its location is the call that ends the region.
void causes(const json& p, double rank_time, double wall, std::vector<metric_set>& out) {
  if (!p.contains("root_causes") || !p["root_causes"].is_object()) return;
  const json& rc = p["root_causes"];
  const json& sites = p["sites"];
  auto site = [&](int id) -> const json* {
    return id >= 0 && static_cast<std::size_t>(id) < sites.size() ? &sites[static_cast<std::size_t>(id)] : nullptr;
  };
  for (const auto& c : rc.value("causes", json::array())) {
    const json* from = site(c.value("from", -1));
    const json* to = site(c.value("to", -1));
    if (!to) continue;
    const std::string from_text =
        from ? fmt::format("{} ({})", where(*from), from->value("function", std::string())) : "MPI_Init";
    const std::string to_text = fmt::format("{} ({})", where(*to), to->value("function", std::string()));
    metric_set m{.scope = "cause", .location = where(*to), .values = json::object()};
    auto& x = m.values;
    const double compute = c.value("compute", 0.0), excess = c.value("excess", 0.0);
    x["location"] = m.location;
    x["nranks"] = p.value("nranks", 1.0);
    x["wall"] = wall;
    x["rank"] = c.value("rank", -1);
    x["from"] = from_text;
    x["to"] = to_text;
    x["compute"] = compute;
    x["excess"] = excess;
    x["excess_share"] = compute > 0 ? excess / compute : 0;
    x["caused"] = c.value("caused", 0.0);
    x["caused_fraction"] = c.value("caused", 0.0) / rank_time;
    x["direct"] = c.value("direct", 0.0);
    x["indirect"] = c.value("caused", 0.0) - c.value("direct", 0.0);
    x["critical"] = c.value("critical", 0.0);
    x["critical_fraction"] = c.value("critical", 0.0) / std::max(wall, 1e-12);
    x["total_wait"] = rc.value("total_wait", 0.0);
    x["total_wait_fraction"] = rc.value("total_wait", 0.0) / rank_time;
    out.push_back(std::move(m));
  }
}

}  // namespace

std::vector<metric_set> metrics_of(const json& p) {
  std::vector<metric_set> out;
  const double nranks = p.value("nranks", 1.0);
  const double wall = p.value("wall", 0.0);
  const double rank_time = std::max(1e-12, wall * nranks);
  std::vector<double> compute, mpi, io, ls, lr, wc;
  for (const auto& r : p["ranks"]) {
    compute.push_back(r.value("compute", 0.0));
    mpi.push_back(r.value("mpi", 0.0));
    io.push_back(r.value("io", 0.0));
    ls.push_back(r.value("late_sender", 0.0));
    lr.push_back(r.value("late_receiver", 0.0));
    wc.push_back(r.value("wait_collective", 0.0));
  }

  // Where toru's own phases and the applications' late partners are, for the texts.
  std::string late_sender_origin = "?", late_receiver_origin = "?";
  double best_ls = 0, best_lr = 0;
  for (const auto& s : p["sites"]) {
    if (s.value("caused_late_sender", 0.0) > best_ls) {
      best_ls = s["caused_late_sender"];
      late_sender_origin = where(s);
    }
    if (s.value("caused_late_receiver", 0.0) > best_lr) {
      best_lr = s["caused_late_receiver"];
      late_receiver_origin = where(s);
    }
  }

  // The largest root cause, for the symptoms' texts: a wait state it explains is not to be fixed
  // where it shows.
  std::string root_cause_note;
  if (p.contains("root_causes") && p["root_causes"].is_object()) {
    const json& c = p["root_causes"].value("causes", json::array());
    const json& sites = p["sites"];
    if (!c.empty() && c[0].value("caused", 0.0) / rank_time > 0.05) {
      const int to = c[0].value("to", -1);
      if (to >= 0 && static_cast<std::size_t>(to) < sites.size())
        root_cause_note =
            fmt::format(" Most of the waiting is caused by rank {}'s compute before {} (the root-cause finding).",
                        c[0].value("rank", -1), where(sites[static_cast<std::size_t>(to)]));
    }
  }

  metric_set run{.scope = "run", .location = p.value("program", std::string("the run")), .values = json::object()};
  auto& v = run.values;
  v["nranks"] = nranks;
  v["wall"] = wall;
  v["mpi_fraction"] = sum(mpi) / rank_time;
  v["compute_fraction"] = sum(compute) / rank_time;
  v["io_fraction"] = sum(io) / rank_time;
  v["late_sender_fraction"] = sum(ls) / rank_time;
  v["late_receiver_fraction"] = sum(lr) / rank_time;
  v["wait_collective_fraction"] = sum(wc) / rank_time;
  v["compute_imbalance"] = imbalance(compute);
  v["compute_max"] = vmax(compute);
  v["compute_mean"] = mean(compute);
  v["slowest_rank"] = argmax(compute);
  v["io_max_rank_share"] = sum(io) > 0 ? vmax(io) / sum(io) : 0;
  const json& papi = p.value("papi", json::object());
  v["papi_available"] = papi.value("available", false) ? 1.0 : 0.0;
  v["papi_note"] = papi.value("note", std::string());
  if (papi.value("available", false))
    for (auto& [name, val] : papi["counters"].items()) v["papi_" + name] = val.get<double>();
  if (v.contains("papi_PAPI_TOT_CYC") && v.contains("papi_PAPI_RES_STL") && v["papi_PAPI_TOT_CYC"].get<double>() > 0)
    v["stall_fraction"] = v["papi_PAPI_RES_STL"].get<double>() / v["papi_PAPI_TOT_CYC"].get<double>();
  if (v.contains("papi_PAPI_TOT_CYC") && v.contains("papi_PAPI_TOT_INS") && v["papi_PAPI_TOT_INS"].get<double>() > 0)
    v["cpi"] = v["papi_PAPI_TOT_CYC"].get<double>() / v["papi_PAPI_TOT_INS"].get<double>();
  // The tuner's measurements (toru::tune::tuner, tuner.json): toru's starting choice against the best.
  if (p.contains("tuner") && p["tuner"].is_object()) {
    const json& t = p["tuner"];
    v["tuner_start_seconds"] = t.value("start_seconds", 0.0);
    v["tuner_best_seconds"] = t.value("best_seconds", 0.0);
    v["tuner_gain"] = t.value("gain", 1.0);
    v["tuner_noise"] = t.value("noise", 0.0);
    v["tuner_start"] = t.value("start_text", std::string());
    v["tuner_best"] = t.value("best_text", std::string());
    const json& sc = t.value("start", json::object());
    const json& bc = t.value("best", json::object());
    for (const char* k : {"algorithm", "overlap", "chunks", "decomposition"}) {
      const bool changed = sc.contains(k) && bc.contains(k) && sc[k] != bc[k];
      v[std::string("tuner_changed_") + k] = changed ? 1.0 : 0.0;
      if (sc.contains(k)) v[std::string("tuner_start_") + k] = sc[k].is_string() ? sc[k] : json(sc[k].dump());
      if (bc.contains(k)) v[std::string("tuner_best_") + k] = bc[k].is_string() ? bc[k] : json(bc[k].dump());
    }
  }
  out.push_back(run);

  for (const auto& s : p["sites"]) {
    metric_set m{.scope = "site", .location = where(s), .values = json::object()};
    auto& x = m.values;
    const std::string fn = s.value("function", std::string());
    const auto calls = vec(s["calls"]), time = vec(s["time"]), bytes = vec(s["bytes"]);
    const auto cb = vec(s["compute_before"]), sl = vec(s["late_sender"]), rl = vec(s["late_receiver"]),
               w = vec(s["wait_collective"]);
    x["function"] = fn;
    x["location"] = m.location;
    x["nranks"] = nranks;
    x["wall"] = wall;
    x["is_collective"] = is_collective(fn) ? 1.0 : 0.0;
    x["is_p2p"] = is_collective(fn) ? 0.0 : 1.0;
    x["is_poll"] = is_poll(fn) ? 1.0 : 0.0;
    x["calls"] = sum(calls);
    x["calls_max_rank"] = vmax(calls);
    x["time"] = sum(time);
    x["time_fraction"] = sum(time) / rank_time;
    x["bytes"] = sum(bytes);
    x["avg_bytes"] = sum(calls) > 0 ? sum(bytes) / sum(calls) : 0;
    x["late_sender"] = sum(sl);
    x["late_sender_fraction"] = sum(sl) / rank_time;
    x["late_sender_origin"] = late_sender_origin;
    x["late_receiver"] = sum(rl);
    x["late_receiver_fraction"] = sum(rl) / rank_time;
    x["late_receiver_origin"] = late_receiver_origin;
    x["wait_collective"] = sum(w);
    x["wait_collective_fraction"] = sum(w) / rank_time;
    x["compute_before_max"] = vmax(cb);
    x["compute_before_mean"] = mean(cb);
    x["compute_before_imbalance"] = imbalance(cb);
    x["compute_before_fraction"] = vmax(cb) / std::max(wall, 1e-12);
    x["slowest_rank"] = argmax(cb);
    x["root_cause_note"] = root_cause_note;
    out.push_back(std::move(m));
  }

  for (const auto& s : p["io_sites"]) {
    metric_set m{.scope = "io_site", .location = where(s), .values = json::object()};
    auto& x = m.values;
    const auto calls = vec(s["calls"]), time = vec(s["time"]), bytes = vec(s["bytes"]);
    int ranks_with_io = 0;
    for (double c : calls) ranks_with_io += c > 0;
    x["function"] = s.value("function", std::string());
    x["location"] = m.location;
    x["nranks"] = nranks;
    x["wall"] = wall;
    x["calls"] = sum(calls);
    x["time"] = sum(time);
    x["time_fraction"] = sum(time) / rank_time;
    x["max_rank_time"] = vmax(time);
    x["max_rank_time_fraction"] = vmax(time) / std::max(wall, 1e-12);
    x["max_rank_share"] = sum(time) > 0 ? vmax(time) / sum(time) : 0;
    x["busiest_rank"] = argmax(time);
    x["ranks_with_io"] = ranks_with_io;
    x["bytes"] = sum(bytes);
    x["avg_bytes"] = sum(calls) > 0 ? sum(bytes) / sum(calls) : 0;
    out.push_back(std::move(m));
  }

  for (const auto& r : p["regions"]) {
    const std::string name = r.value("name", std::string());
    const std::string detail = r.value("detail", std::string());
    metric_set m{
        .scope = "region", .location = detail.empty() ? name : name + " (" + detail + ")", .values = json::object()};
    auto& x = m.values;
    const auto time = vec(r["time"]);
    x["name"] = name;
    x["detail"] = detail;
    x["location"] = m.location;
    x["nranks"] = nranks;
    x["wall"] = wall;
    x["count"] = r.value("count", 0.0);
    x["time"] = sum(time);
    x["time_max_rank"] = vmax(time);
    x["time_fraction"] = sum(time) / rank_time;
    x["bytes"] = r.value("bytes", 0.0);
    // comm.alltoall carries T_min per call: efficiency = bound / measured, per rank on average.
    x["bound_seconds"] = r.value("value", 0.0);
    x["bound_efficiency"] = sum(time) > 0 ? r.value("value", 0.0) / sum(time) : 0;
    out.push_back(std::move(m));
  }
  causes(p, rank_time, wall, out);
  return out;
}

std::string fmt_location(const std::string& loc, const std::string& sym) {
  if (sym.empty() || sym == "??") return loc;
  return loc + " (" + sym + ")";
}

}  // namespace toru::tune
