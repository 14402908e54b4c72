// SPDX-License-Identifier: BSD-3-Clause
// MPI_Finalize: clock offsets, symbolisation, the gather of every rank's statistics and events to
// rank 0, the wait-state analysis (late sender, late receiver, wait at collective), and the run
// directory (profile.json, findings.json, report.html, trace/ in OTF2).
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
#include "papi_probe.hpp"
#include "recorder.hpp"

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
  const double offset = clock_offset(*this, rank, nranks);
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
  for (const auto& s : sites) js.push_back(site_json(s));
  for (const auto& s : io_sites) jio.push_back(site_json(s));
  for (const auto& g : regions)
    jr.push_back({{"name", g.name},
                  {"detail", g.detail},
                  {"count", g.count},
                  {"time", g.time},
                  {"bytes", g.bytes},
                  {"value", g.value}});
  me["sites"] = std::move(js);
  me["io_sites"] = std::move(jio);
  me["regions"] = std::move(jr);
  for (auto& e : events) {
    e.t0 -= offset;
    e.t1 -= offset;
    e.tpost -= offset;
  }

  const std::string text = me.dump();
  std::vector<int> sizes, displs;
  const auto all_stats = gather_bytes(std::vector<char>(text.begin(), text.end()), rank, nranks, sizes, displs);
  std::vector<int> esizes, edispls;
  const auto* eb = reinterpret_cast<const char*>(events.data());
  const auto all_events =
      gather_bytes(std::vector<char>(eb, eb + events.size() * sizeof(event)), rank, nranks, esizes, edispls);
  std::string dir;
  if (rank == 0) {
    const char* d = std::getenv("TORU_TUNE_DIR");
    dir = d && *d ? d : default_run_dir();
  }
  if (rank == 0) {
    std::vector<rank_data> ranks(static_cast<std::size_t>(nranks));
    for (int i = 0; i < nranks; ++i) {
      const auto u = static_cast<std::size_t>(i);
      ranks[u].stats = json::parse(all_stats.begin() + displs[u], all_stats.begin() + displs[u] + sizes[u]);
      ranks[u].events.resize(static_cast<std::size_t>(esizes[u]) / sizeof(event));
      // A rank may have no events (neighbourhood collectives are none): memcpy from nullptr is UB.
      if (esizes[u] > 0)
        std::memcpy(ranks[u].events.data(), all_events.data() + edispls[u], static_cast<std::size_t>(esizes[u]));
    }
    try {
      write_run(ranks, dir);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "libtoru_tune_pmpi: could not write the run directory %s: %s\n", dir.c_str(), e.what());
    }
  }
  PMPI_Barrier(MPI_COMM_WORLD);
}

}  // namespace toru::tune::shim
