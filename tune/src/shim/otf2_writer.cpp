// SPDX-License-Identifier: BSD-3-Clause
#include "otf2_writer.hpp"

#include <otf2/otf2.h>
// OTF2's collectives call PMPI_*: inside the MPI_Finalize wrapper the MPI_* names are this library's.
#define OTF2_MPI_USE_PMPI
#include <otf2/OTF2_MPI_Collectives.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace toru::tune::shim {
namespace {

namespace fs = std::filesystem;

// Records are written from memory at once; a flush in the middle (OTF2 out of chunk memory) is stamped
// with the last timestamp written, so the location's timestamps stay monotone.
struct flush_state {
  OTF2_TimeStamp last = 0;
};
OTF2_FlushType pre_flush(void*, OTF2_FileType, OTF2_LocationRef, void*, bool) { return OTF2_FLUSH; }
OTF2_TimeStamp post_flush(void* data, OTF2_FileType, OTF2_LocationRef) { return static_cast<flush_state*>(data)->last; }
const OTF2_FlushCallbacks flush_callbacks = {pre_flush, post_flush};

void check(OTF2_ErrorCode rc, const char* what) {
  if (rc != OTF2_SUCCESS)
    throw std::runtime_error(std::string(what) + ": " + OTF2_Error_GetName(rc) + " (" + OTF2_Error_GetDescription(rc) +
                             ")");
}

void check_mpi(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  PMPI_Error_string(rc, text, &len);
  throw std::runtime_error(std::string("OTF2 trace: ") + what + ": " +
                           std::string(text, static_cast<std::size_t>(len)));
}

// The name of a function event's region; index fn_count stands for a function the table lacks.
constexpr std::size_t unknown_fn = fn_count;
std::string function_name(std::size_t f) { return f < fn_count ? function_names[f] : "unknown"; }

// The phases of the write. Each runs on every rank; a failure on any rank is thrown on every rank
// with the message of the lowest failing rank (agree). A phase calls at most one collective, first,
// and the plain MPI exchanges run between phases, so a rank that failed never leaves another waiting
// in a collective it skipped. (A failing MPI call itself is thrown by the rank that saw it.)
class phases {
 public:
  phases(MPI_Comm comm, std::string dir) : dir_(std::move(dir)) {
    check_mpi(PMPI_Comm_dup(comm, &comm_), "MPI_Comm_dup");
    PMPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    PMPI_Comm_rank(comm_, &rank_);
    PMPI_Comm_size(comm_, &nranks_);
  }
  ~phases() { PMPI_Comm_free(&comm_); }
  phases(const phases&) = delete;
  phases& operator=(const phases&) = delete;

  MPI_Comm comm() const { return comm_; }
  int rank() const { return rank_; }
  int nranks() const { return nranks_; }

  template <class F>
  void run(F&& f) {
    std::string error;
    try {
      f();
    } catch (const std::exception& e) {
      error = e.what();
      if (error.empty()) error = "unknown error";
    }
    agree(error);
  }

 private:
  void agree(const std::string& error) {
    int mine = error.empty() ? nranks_ : rank_, first = nranks_;
    check_mpi(PMPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm_), "agreeing on errors");
    if (first == nranks_) return;
    std::uint64_t size = error.size();
    check_mpi(PMPI_Bcast(&size, 1, MPI_UINT64_T, first, comm_), "agreeing on errors");
    std::string text = rank_ == first ? error : std::string(size, '\0');
    check_mpi(PMPI_Bcast(text.data(), static_cast<int>(size), MPI_CHAR, first, comm_), "agreeing on errors");
    throw std::runtime_error("OTF2 trace in " + dir_ + ": rank " + std::to_string(first) + ": " + text);
  }

  std::string dir_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, nranks_ = 1;
};

// Closes the archive on every exit; all ranks leave write_otf2 from the same agreement, so all close.
struct archive_closer {
  OTF2_Archive* archive = nullptr;
  ~archive_closer() {
    if (archive) OTF2_Archive_Close(archive);
  }
};

std::string join(const std::set<std::string>& names) {
  std::string blob;
  for (const auto& n : names) blob.append(n).push_back('\0');
  return blob;
}

void split_into(std::set<std::string>& names, const char* blob, std::size_t size) {
  for (std::size_t i = 0; i < size;) {
    const std::string n(blob + i);
    i += n.size() + 1;
    names.insert(n);
  }
}

}  // namespace

void write_otf2(const std::vector<event>& events, const std::vector<std::string>& toru_regions, double t_begin,
                const std::string& program, const std::string& dir, MPI_Comm comm) {
  phases ph(comm, dir);
  const int rank = ph.rank(), nranks = ph.nranks();
  const bool root = rank == 0;
  constexpr std::size_t mask_words = (fn_count + 1 + 63) / 64;

  // This rank's part: the events in enter order (enclosing first on ties), the functions and toru
  // regions they name, and their last timestamp (ns since t_begin).
  std::vector<const event*> order;
  std::vector<std::uint64_t> used_fns(mask_words, 0);
  std::vector<bool> used_regions(toru_regions.size(), false);
  std::string my_names;
  OTF2_TimeStamp t_end = 0;  // the last timestamp this rank writes
  const std::uint64_t my_records = 2 * static_cast<std::uint64_t>(events.size());
  auto is_region = [&](const event& e) { return e.type == ev_type::toru && e.key < toru_regions.size(); };
  auto ticks = [&](double t) -> OTF2_TimeStamp {
    const double ns = (t - t_begin) * 1e9;
    if (!(ns > 0)) return 0;                        // before the start, or NaN
    if (ns >= 9e18) return 9000000000000000000ULL;  // 285 years
    return static_cast<OTF2_TimeStamp>(ns + 0.5);
  };
  ph.run([&] {
    order.reserve(events.size());
    std::set<std::string> names;
    for (const auto& e : events) {
      order.push_back(&e);
      t_end = std::max({t_end, ticks(e.t0), ticks(e.t1)});
      if (is_region(e)) {
        if (!used_regions[e.key]) names.insert("toru:" + toru_regions[e.key]);
        used_regions[e.key] = true;
      } else {
        const std::size_t f = std::min<std::size_t>(e.func, unknown_fn);
        used_fns[f / 64] |= std::uint64_t{1} << (f % 64);
      }
    }
    std::stable_sort(order.begin(), order.end(),
                     [](const event* a, const event* b) { return a->t0 < b->t0 || (a->t0 == b->t0 && a->t1 > b->t1); });
    my_names = join(names);
    if (my_names.size() > INT_MAX / 2) throw std::runtime_error("toru region names exceed 1 GB");
  });

  // Rank 0 learns every rank's region names and record count; all learn the functions used and the end.
  std::vector<std::uint64_t> all_fns(mask_words, 0), records(root ? nranks : 0);
  std::vector<int> name_sizes(root ? nranks : 0), displs(root ? nranks : 0);
  OTF2_TimeStamp t_end_all = 0;
  const int my_size = static_cast<int>(my_names.size());
  check_mpi(
      PMPI_Allreduce(used_fns.data(), all_fns.data(), static_cast<int>(mask_words), MPI_UINT64_T, MPI_BOR, ph.comm()),
      "MPI_Allreduce of the functions used");
  check_mpi(PMPI_Allreduce(&t_end, &t_end_all, 1, MPI_UINT64_T, MPI_MAX, ph.comm()), "MPI_Allreduce of the end");
  check_mpi(PMPI_Gather(&my_size, 1, MPI_INT, name_sizes.data(), 1, MPI_INT, 0, ph.comm()), "MPI_Gather");
  check_mpi(PMPI_Gather(&my_records, 1, MPI_UINT64_T, records.data(), 1, MPI_UINT64_T, 0, ph.comm()), "MPI_Gather");
  std::string gathered;
  ph.run([&] {
    if (!root) return;
    long long total = 0;
    for (int r = 0; r < nranks; ++r) {
      displs[r] = static_cast<int>(total);
      total += name_sizes[r];
      if (total > INT_MAX) throw std::runtime_error("the ranks' toru region names exceed 2 GB");
    }
    gathered.resize(static_cast<std::size_t>(total));
  });
  check_mpi(PMPI_Gatherv(my_names.data(), my_size, MPI_CHAR, gathered.data(), name_sizes.data(), displs.data(),
                         MPI_CHAR, 0, ph.comm()),
            "MPI_Gatherv of the region names");

  // The sorted union of the toru regions, broadcast: region ids agree across ranks.
  std::string merged;
  std::uint64_t merged_size = 0;
  ph.run([&] {
    if (!root) return;
    std::set<std::string> names;
    split_into(names, gathered.data(), gathered.size());
    merged = join(names);
    if (merged.size() > INT_MAX) throw std::runtime_error("the toru region names exceed 2 GB");
    merged_size = merged.size();
  });
  check_mpi(PMPI_Bcast(&merged_size, 1, MPI_UINT64_T, 0, ph.comm()), "MPI_Bcast");
  ph.run([&] { merged.resize(merged_size); });
  check_mpi(PMPI_Bcast(merged.data(), static_cast<int>(merged_size), MPI_CHAR, 0, ph.comm()), "MPI_Bcast");

  // Region ids: index in the sorted list of every function used on any rank and every toru region.
  std::vector<std::string> regions;
  std::vector<std::uint32_t> fn_id(fn_count + 1, 0), region_id(toru_regions.size(), 0);
  ph.run([&] {
    std::set<std::string> names;
    split_into(names, merged.data(), merged.size());
    for (std::size_t f = 0; f <= unknown_fn; ++f)
      if (all_fns[f / 64] >> (f % 64) & 1) names.insert(function_name(f));
    regions.assign(names.begin(), names.end());
    auto id = [&](const std::string& n) {
      return static_cast<std::uint32_t>(std::lower_bound(regions.begin(), regions.end(), n) - regions.begin());
    };
    for (std::size_t f = 0; f <= unknown_fn; ++f)
      if (used_fns[f / 64] >> (f % 64) & 1) fn_id[f] = id(function_name(f));
    for (std::size_t k = 0; k < toru_regions.size(); ++k)
      if (used_regions[k]) region_id[k] = id("toru:" + toru_regions[k]);
    if (root) {
      // OTF2 creates dir/traces itself and refuses to overwrite an archive: remove an old one.
      std::error_code ec;
      fs::create_directories(dir, ec);
      if (ec) throw std::runtime_error("cannot create the directory: " + ec.message());
      fs::remove_all(fs::path(dir) / "traces", ec);
      if (!ec) fs::remove(fs::path(dir) / "traces.otf2", ec);
      if (!ec) fs::remove(fs::path(dir) / "traces.def", ec);
      if (ec) throw std::runtime_error("cannot remove the old archive: " + ec.message());
    }
  });

  archive_closer closer;
  OTF2_Archive*& archive = closer.archive;
  flush_state flushed;
  ph.run([&] {
    archive = OTF2_Archive_Open(dir.c_str(), "traces", OTF2_FILEMODE_WRITE, 1024 * 1024, 4 * 1024 * 1024,
                                OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    if (!archive) throw std::runtime_error("cannot open the archive");
    check(OTF2_Archive_SetFlushCallbacks(archive, &flush_callbacks, &flushed), "flush callbacks");
    check(OTF2_Archive_SetCreator(archive, "toru libtoru_tune_pmpi"), "creator");
  });
  // Collective: rank 0 creates the archive's directories and tells the others whether it could.
  ph.run([&] {
    check(OTF2_MPI_Archive_SetCollectiveCallbacks(archive, ph.comm(), MPI_COMM_NULL), "collective callbacks");
  });

  // This rank's location. Records are recorded at exit (MPI, I/O) or region end, so they are replayed
  // in enter order; a region closes when the next event starts after its end, enclosing ones last.
  ph.run([&] {
    check(OTF2_Archive_OpenEvtFiles(archive), "open event files");
    OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(archive, static_cast<OTF2_LocationRef>(rank));
    if (!w) throw std::runtime_error("no event writer");
    OTF2_TimeStamp& last = flushed.last;
    std::vector<std::pair<double, std::uint32_t>> open;  // (exit time, region) stack
    auto leave = [&] {
      last = std::max(last, ticks(open.back().first));
      check(OTF2_EvtWriter_Leave(w, nullptr, last, open.back().second), "leave");
      open.pop_back();
    };
    for (const event* e : order) {
      while (!open.empty() && open.back().first <= e->t0) leave();
      const std::uint32_t id = is_region(*e) ? region_id[e->key] : fn_id[std::min<std::size_t>(e->func, unknown_fn)];
      last = std::max(last, ticks(e->t0));
      check(OTF2_EvtWriter_Enter(w, nullptr, last, id), "enter");
      // A child that outlives its parent (clock granularity) is clipped to it.
      open.emplace_back(open.empty() ? e->t1 : std::min(e->t1, open.back().first), id);
    }
    while (!open.empty()) leave();
    check(OTF2_Archive_CloseEvtWriter(archive, w), "close the event writer");
  });
  ph.run([&] { check(OTF2_Archive_CloseEvtFiles(archive), "close event files"); });

  // Empty local definitions: readers expect one file per location.
  ph.run([&] {
    check(OTF2_Archive_OpenDefFiles(archive), "open definition files");
    OTF2_DefWriter* dw = OTF2_Archive_GetDefWriter(archive, static_cast<OTF2_LocationRef>(rank));
    if (!dw) throw std::runtime_error("no definition writer");
    check(OTF2_Archive_CloseDefWriter(archive, dw), "close the definition writer");
  });
  ph.run([&] { check(OTF2_Archive_CloseDefFiles(archive), "close definition files"); });

  ph.run([&] {
    if (!root) return;
    OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(archive);
    if (!g) throw std::runtime_error("no global definition writer");
    check(OTF2_GlobalDefWriter_WriteClockProperties(g, 1000000000, 0, t_end_all + 1, OTF2_UNDEFINED_TIMESTAMP),
          "clock");
    std::uint32_t next_string = 0;
    auto str = [&](const std::string& s) {
      check(OTF2_GlobalDefWriter_WriteString(g, next_string, s.c_str()), "string");
      return next_string++;
    };
    const std::uint32_t empty = str("");
    for (std::size_t id = 0; id < regions.size(); ++id) {
      const std::string& name = regions[id];
      const bool toru = name.starts_with("toru:"), mpi = name.starts_with("MPI");
      const std::uint32_t s = str(name);
      check(OTF2_GlobalDefWriter_WriteRegion(g, static_cast<OTF2_RegionRef>(id), s, s, empty, OTF2_REGION_ROLE_FUNCTION,
                                             mpi    ? OTF2_PARADIGM_MPI
                                             : toru ? OTF2_PARADIGM_USER
                                                    : OTF2_PARADIGM_UNKNOWN,
                                             OTF2_REGION_FLAG_NONE, empty, 0, 0),
            "region");
    }
    const std::uint32_t node = str("node"), machine = str(program.empty() ? "toru run" : program);
    check(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, machine, node, OTF2_UNDEFINED_SYSTEM_TREE_NODE),
          "system tree");
    for (int r = 0; r < nranks; ++r) {
      const std::uint32_t name = str("MPI rank " + std::to_string(r));
      const auto ref = static_cast<std::uint64_t>(r);
      check(OTF2_GlobalDefWriter_WriteLocationGroup(g, static_cast<OTF2_LocationGroupRef>(ref), name,
                                                    OTF2_LOCATION_GROUP_TYPE_PROCESS, 0, OTF2_UNDEFINED_LOCATION_GROUP),
            "location group");
      check(OTF2_GlobalDefWriter_WriteLocation(g, ref, name, OTF2_LOCATION_TYPE_CPU_THREAD, records[r],
                                               static_cast<OTF2_LocationGroupRef>(ref)),
            "location");
    }
    check(OTF2_Archive_CloseGlobalDefWriter(archive, g), "close the global definition writer");
  });

  // Collective. Rank 0 writes the anchor file here, and OTF2 reports no failure of it: look for it.
  ph.run([&] {
    OTF2_Archive* a = archive;
    archive = nullptr;
    check(OTF2_Archive_Close(a), "close the archive");
    if (root && !fs::is_regular_file(fs::path(dir) / "traces.otf2"))
      throw std::runtime_error("the anchor file traces.otf2 is missing");
  });
}

}  // namespace toru::tune::shim
