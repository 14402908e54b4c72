// SPDX-License-Identifier: BSD-3-Clause
// MPI_Finalize: clock offsets, the parallel replay of every rank's events (replay.hpp: wait states,
// root causes, critical path), the OTF2 trace written by every rank for itself, the gather of the
// ranks' statistics (no events) to rank 0 and the run directory (profile.json, findings.json,
// report.html, trace/).
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis.hpp"
#include "otf2_writer.hpp"
#include "papi_probe.hpp"
#include "recorder.hpp"
#include "replay.hpp"

namespace toru::tune::shim {
namespace {

using json = nlohmann::json;

std::string exe_path() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : p.string();
}

// (object file, address to give addr2line) of a return address: the call instruction is the byte
// before it. Executables linked at a fixed address take absolute addresses, PIE and shared objects
// offsets from their load base.
std::pair<std::string, std::uint64_t> locate(void* addr) {
  Dl_info info{};
  if (!addr || !dladdr(addr, &info) || !info.dli_fbase) return {"?", reinterpret_cast<std::uintptr_t>(addr)};
  const auto base = reinterpret_cast<std::uintptr_t>(info.dli_fbase);
  const auto a = reinterpret_cast<std::uintptr_t>(addr) - 1;
  const auto* ehdr = static_cast<const ElfW(Ehdr)*>(info.dli_fbase);
  std::string obj = info.dli_fname ? info.dli_fname : "";
  // The main program: dladdr names it as it was started (argv[0]); addr2line needs a real path.
  if (obj.find('/') == std::string::npos) obj = exe_path();
  return {obj, ehdr->e_type == ET_EXEC ? a : a - base};
}

json site_json(const site& s) {
  auto [obj, off] = locate(s.addr);
  json partners = json::object();
  for (auto& [p, b] : s.partners) partners[std::to_string(p)] = b;
  return {{"function", function_names[s.func]},
          {"object", obj},
          {"offset", off},
          {"calls", s.calls},
          {"time", s.time},
          {"bytes", s.bytes},
          {"compute_before", s.compute_before},
          {"partners", partners}};
}

// The id every rank gives the same code (function, object, offset): no exchange needed; rank 0
// merges the ranks' sites by it.
std::int64_t global_id(const json& site) {
  const std::string key = fmt::format("{}|{}|{}", site["function"].get<std::string>(),
                                      site["object"].get<std::string>(), site["offset"].get<std::uint64_t>());
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : key) h = (h ^ c) * 0x100000001b3ULL;
  return static_cast<std::int64_t>(h & 0x7fffffffffffffffULL);
}

// Rank r's clock minus rank 0's, from the round trip with the smallest delay (Cristian's method).
double clock_offset(recorder& r, int rank, int nranks) {
  double offset = 0;
  if (rank == 0) {
    for (int p = 1; p < nranks; ++p)
      for (int k = 0; k < 5; ++k) {
        double t = r.now(), reply = 0;
        PMPI_Send(&t, 1, MPI_DOUBLE, p, 7001, MPI_COMM_WORLD);
        PMPI_Recv(&reply, 1, MPI_DOUBLE, p, 7002, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
  } else {
    double best_rtt = 1e30;
    for (int k = 0; k < 5; ++k) {
      double t0 = 0;
      PMPI_Recv(&t0, 1, MPI_DOUBLE, 0, 7001, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      const double mine = r.now();
      PMPI_Send(&mine, 1, MPI_DOUBLE, 0, 7002, MPI_COMM_WORLD);
      // One-way: the gap between rank 0's send stamp and our receipt bounds the offset from above;
      // the smallest such gap is the best estimate (latency is small and symmetric on one fabric).
      const double gap = mine - t0;
      if (gap < best_rtt) {
        best_rtt = gap;
        offset = gap;
      }
    }
  }
  return offset;
}

std::vector<char> gather_bytes(const std::vector<char>& mine, int rank, int nranks, std::vector<int>& sizes,
                               std::vector<int>& displs) {
  int n = static_cast<int>(mine.size());
  sizes.assign(static_cast<std::size_t>(nranks), 0);
  PMPI_Gather(&n, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  displs.assign(static_cast<std::size_t>(nranks), 0);
  std::vector<char> all;
  if (rank == 0) {
    long long total = 0;
    for (int i = 0; i < nranks; ++i) {
      displs[static_cast<std::size_t>(i)] = static_cast<int>(total);
      total += sizes[static_cast<std::size_t>(i)];
    }
    all.resize(static_cast<std::size_t>(total));
  }
  PMPI_Gatherv(mine.data(), n, MPI_CHAR, all.data(), sizes.data(), displs.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
  return all;
}

// Waits for every rank without spinning: the others sleep between tests while rank 0 writes the run
// directory, so no waiting rank holds a core that rank 0 or the launcher needs (Open MPI's blocking
// barrier polls; with as many ranks as cores that took rank 0's time).
void quiet_barrier(MPI_Comm comm) {
  MPI_Request req = MPI_REQUEST_NULL;
  PMPI_Ibarrier(comm, &req);
  for (int done = 0;;) {
    PMPI_Test(&req, &done, MPI_STATUS_IGNORE);
    if (done) return;
    const timespec pause{0, 200'000};
    nanosleep(&pause, nullptr);
  }
}

std::string default_run_dir() {
  const std::string exe = std::filesystem::path(exe_path()).filename().string();
  return fmt::format("toru-tune.{}.{}", exe.empty() ? "run" : exe, static_cast<long>(getpid()));
}

}  // namespace

void recorder::on_finalize() {
  if (!active()) return;
  busy_guard guard;
  std::unique_lock lock(mu);
  t_final = now();
  stop();
  int rank = 0, nranks = 1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &nranks);
  // The tool's own time at finalize, by phase (profile "tool"): what a user pays for the analysis.
  json tool = json::object();
  double mark = now();
  auto phase = [&](const char* name) {
    const double t = now();
    tool[name] = t - mark;
    mark = t;
  };
  const double offset = clock_offset(*this, rank, nranks);
  phase("clocks_s");
  const double wall = t_final - t_init;

  json me;
  me["rank"] = rank;
  me["wall"] = wall;
  me["compute"] = compute_time;
  me["mpi"] = mpi_time;
  me["mpi_p2p"] = p2p_time;
  me["mpi_coll"] = coll_time;
  me["io"] = io_time;
  me["p2p_msgs"] = p2p_msgs;
  me["p2p_bytes"] = p2p_bytes;
  me["coll_calls"] = coll_calls;
  const char* io_names[5] = {"open", "read", "write", "fsync", "close"};
  for (int i = 0; i < 5; ++i)
    me["io_ops"][io_names[i]] = {{"count", io_counts[i]}, {"bytes", io_bytes[i]}, {"time", io_times[i]}};
  me["events"] = events.size();
  me["truncated"] = truncated;
  me["t_init"] = t_init - offset;
  me["papi"] = papi_read();
  json js = json::array(), jio = json::array(), jr = json::array();
  replay_input in;
  for (const auto& st : sites) {
    json j = site_json(st);
    in.site_ids.push_back(global_id(j));
    j["id"] = in.site_ids.back();
    js.push_back(std::move(j));
  }
  for (const auto& st : io_sites) {
    json j = site_json(st);
    j["id"] = global_id(j);
    jio.push_back(std::move(j));
  }
  std::vector<std::string> region_names;
  for (const auto& g : regions) {
    jr.push_back({{"name", g.name},
                  {"detail", g.detail},
                  {"count", g.count},
                  {"time", g.time},
                  {"bytes", g.bytes},
                  {"value", g.value}});
    region_names.emplace_back(g.name);
  }
  for (auto& e : events) {
    e.t0 -= offset;
    e.t1 -= offset;
    e.tpost -= offset;
  }

  // The analysis, every rank over its own events; they come back for the timeline and the trace.
  in.events = std::move(events);
  in.members = members;
  const replay_result rr = replay(in, MPI_COMM_WORLD);
  events = std::move(in.events);
  phase("replay_s");
  for (std::size_t i = 0; i < rr.sites.size(); ++i) {
    const site_waits& w = rr.sites[i];
    json& j = js[i];
    j["late_sender"] = w.late_sender;
    j["late_receiver"] = w.late_receiver;
    j["wait_collective"] = w.wait_collective;
    j["caused_late_sender"] = w.caused_late_sender;
    j["caused_late_receiver"] = w.caused_late_receiver;
  }
  me["critical"] = rr.critical_compute;

  // The report's timeline: a window from the middle of the run, up to 300 events per rank and a
  // fifth of the run; rows of the first ranks only.
  double mine[2] = {t_init - offset, -wall}, run_min[2] = {};
  PMPI_Allreduce(mine, run_min, 2, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  const double t_begin = run_min[0], run_wall = -run_min[1];
  const double w0 = t_begin + 0.5 * run_wall;
  double my_end = w0 + 0.2 * run_wall, end = 0;
  int in_window = 0;
  for (const event& e : events)
    if (e.t0 >= w0 && e.t0 < my_end && e.type != ev_type::toru && ++in_window == 300) my_end = e.t0;
  PMPI_Allreduce(&my_end, &end, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  if (rank < timeline_ranks) me["timeline"] = timeline_row(events, jr, t_begin, w0, end);
  me["sites"] = std::move(js);
  me["io_sites"] = std::move(jio);
  me["regions"] = std::move(jr);

  // The run directory: rank 0's name (its default carries its pid) for everyone.
  std::string dir;
  if (rank == 0) {
    const char* d = std::getenv("TORU_TUNE_DIR");
    dir = d && *d ? d : default_run_dir();
  }
  int len = static_cast<int>(dir.size());
  PMPI_Bcast(&len, 1, MPI_INT, 0, MPI_COMM_WORLD);
  dir.resize(static_cast<std::size_t>(len));
  PMPI_Bcast(dir.data(), len, MPI_CHAR, 0, MPI_COMM_WORLD);

  json trace = json::object();
  const char* tr = std::getenv("TORU_TUNE_TRACE");
  if (!(tr && std::strcmp(tr, "0") == 0)) {
    try {
      write_otf2(events, region_names, t_begin, exe_path(), (std::filesystem::path(dir) / "trace").string(),
                 MPI_COMM_WORLD);
      trace["otf2"] = "trace/traces.otf2";
    } catch (const std::exception& e) {
      trace["note"] = e.what();
    }
  }
  phase("trace_s");

  const std::string text = me.dump();
  std::vector<int> sizes, displs;
  const auto all_stats = gather_bytes(std::vector<char>(text.begin(), text.end()), rank, nranks, sizes, displs);
  phase("gather_s");
  if (rank == 0) {
    run_data run;
    for (int i = 0; i < nranks; ++i) {
      const auto u = static_cast<std::size_t>(i);
      run.ranks.push_back(json::parse(all_stats.begin() + displs[u], all_stats.begin() + displs[u] + sizes[u]));
    }
    run.root_causes = rr.rootcause;
    run.window_t0 = w0 - t_begin;
    run.window_t1 = end - t_begin;
    run.trace = std::move(trace);
    run.tool = std::move(tool);
    try {
      write_run(run, dir);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "libtoru_tune_pmpi: could not write the run directory %s: %s\n", dir.c_str(), e.what());
    }
  }
  quiet_barrier(MPI_COMM_WORLD);
}

}  // namespace toru::tune::shim
