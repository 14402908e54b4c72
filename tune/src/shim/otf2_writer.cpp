// SPDX-License-Identifier: BSD-3-Clause
#include "otf2_writer.hpp"

#include <otf2/otf2.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>

namespace toru::tune::shim {
namespace {

OTF2_FlushType pre_flush(void*, OTF2_FileType, OTF2_LocationRef, void*, bool) { return OTF2_FLUSH; }
OTF2_TimeStamp post_flush(void*, OTF2_FileType, OTF2_LocationRef) { return 0; }
OTF2_FlushCallbacks flush_callbacks = {pre_flush, post_flush};

void check(OTF2_ErrorCode rc, const char* what) {
  if (rc != OTF2_SUCCESS) throw std::runtime_error(std::string("OTF2: ") + what + ": " + OTF2_Error_GetName(rc));
}

}  // namespace

void write_otf2(const std::vector<rank_data>& ranks, const nlohmann::json& profile, const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::remove_all(dir, ec);  // OTF2 refuses to overwrite an archive
  fs::create_directories(fs::path(dir).parent_path(), ec);
  OTF2_Archive* archive = OTF2_Archive_Open(dir.c_str(), "traces", OTF2_FILEMODE_WRITE, 1024 * 1024, 4 * 1024 * 1024,
                                            OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  if (!archive) throw std::runtime_error("OTF2: cannot open the archive in " + dir);
  struct closer {
    OTF2_Archive* a;
    ~closer() { OTF2_Archive_Close(a); }
  } close_archive{archive};
  check(OTF2_Archive_SetFlushCallbacks(archive, &flush_callbacks, nullptr), "flush callbacks");
  check(OTF2_Archive_SetSerialCollectiveCallbacks(archive), "collective callbacks");
  check(OTF2_Archive_SetCreator(archive, "toru libtoru_tune_pmpi"), "creator");

  // Regions: MPI and I/O functions by name, toru regions by "toru:<name>".
  std::map<std::string, std::uint32_t> region_ids;
  auto region = [&](const std::string& name) {
    return region_ids.try_emplace(name, static_cast<std::uint32_t>(region_ids.size())).first->second;
  };
  double t_begin = 1e300, t_end = 0;
  for (const auto& r : ranks) {
    t_begin = std::min(t_begin, r.stats["t_init"].get<double>());
    for (const auto& e : r.events) t_end = std::max(t_end, e.t1);
  }
  auto ticks = [&](double t) { return static_cast<OTF2_TimeStamp>(std::max(0.0, t - t_begin) * 1e9); };

  check(OTF2_Archive_OpenEvtFiles(archive), "open event files");
  std::vector<std::uint64_t> counts(ranks.size());
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(archive, r);
    const auto& regions = ranks[r].stats["regions"];
    // Leave records must follow in time order; MPI events are recorded at exit, regions at end,
    // so sort by enter time and close enclosing regions last.
    std::vector<const event*> evs;
    for (const auto& e : ranks[r].events) evs.push_back(&e);
    std::stable_sort(evs.begin(), evs.end(),
                     [](const event* a, const event* b) { return a->t0 < b->t0 || (a->t0 == b->t0 && a->t1 > b->t1); });
    std::vector<std::pair<double, std::uint32_t>> open;  // (exit time, region) stack
    OTF2_TimeStamp last = 0;
    auto emit_leave = [&](double t, std::uint32_t id) {
      last = std::max(last, ticks(t));
      check(OTF2_EvtWriter_Leave(w, nullptr, last, id), "leave");
      counts[r] += 1;
    };
    for (const event* e : evs) {
      while (!open.empty() && open.back().first <= e->t0) {
        emit_leave(open.back().first, open.back().second);
        open.pop_back();
      }
      const std::string name = e->type == ev_type::toru && e->key < regions.size()
                                   ? "toru:" + regions[e->key]["name"].get<std::string>()
                                   : function_names[e->func];
      const std::uint32_t id = region(name);
      last = std::max(last, ticks(e->t0));
      check(OTF2_EvtWriter_Enter(w, nullptr, last, id), "enter");
      counts[r] += 1;
      // A child that outlives its parent (clock granularity) is clipped to it.
      const double exit = open.empty() ? e->t1 : std::min(e->t1, open.back().first);
      open.emplace_back(exit, id);
    }
    while (!open.empty()) {
      emit_leave(open.back().first, open.back().second);
      open.pop_back();
    }
    check(OTF2_Archive_CloseEvtWriter(archive, w), "close event writer");
  }
  check(OTF2_Archive_CloseEvtFiles(archive), "close event files");

  check(OTF2_Archive_OpenDefFiles(archive), "open definition files");
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    OTF2_DefWriter* dw = OTF2_Archive_GetDefWriter(archive, r);
    check(OTF2_Archive_CloseDefWriter(archive, dw), "close definition writer");
  }
  check(OTF2_Archive_CloseDefFiles(archive), "close definition files");

  OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(archive);
  check(OTF2_GlobalDefWriter_WriteClockProperties(g, 1000000000, 0, ticks(t_end) + 1, OTF2_UNDEFINED_TIMESTAMP),
        "clock");
  std::uint32_t next_string = 0;
  auto str = [&](const std::string& s) {
    check(OTF2_GlobalDefWriter_WriteString(g, next_string, s.c_str()), "string");
    return next_string++;
  };
  const std::uint32_t empty = str("");
  for (const auto& [name, id] : region_ids) {
    const bool toru = name.rfind("toru:", 0) == 0;
    const bool mpi = name.rfind("MPI_", 0) == 0;
    const std::uint32_t s = str(name);
    check(OTF2_GlobalDefWriter_WriteRegion(g, id, s, s, empty, OTF2_REGION_ROLE_FUNCTION,
                                           mpi    ? OTF2_PARADIGM_MPI
                                           : toru ? OTF2_PARADIGM_USER
                                                  : OTF2_PARADIGM_UNKNOWN,
                                           OTF2_REGION_FLAG_NONE, empty, 0, 0),
          "region");
  }
  const std::uint32_t node = str("node"), machine = str(profile.value("program", std::string("toru run")));
  check(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, machine, node, OTF2_UNDEFINED_SYSTEM_TREE_NODE), "system tree");
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const std::uint32_t name = str("MPI rank " + std::to_string(r));
    check(OTF2_GlobalDefWriter_WriteLocationGroup(g, r, name, OTF2_LOCATION_GROUP_TYPE_PROCESS, 0,
                                                  OTF2_UNDEFINED_LOCATION_GROUP),
          "location group");
    check(OTF2_GlobalDefWriter_WriteLocation(g, r, name, OTF2_LOCATION_TYPE_CPU_THREAD, counts[r], r), "location");
  }
}

}  // namespace toru::tune::shim
