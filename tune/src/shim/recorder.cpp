// SPDX-License-Identifier: BSD-3-Clause
#include "recorder.hpp"

#include "papi_probe.hpp"

#include <algorithm>
#include <cstdlib>
#include <string_view>

namespace toru::tune::shim {

const char* const function_names[fn_count] = {"MPI_Send",
                                              "MPI_Ssend",
                                              "MPI_Isend",
                                              "MPI_Recv",
                                              "MPI_Irecv",
                                              "MPI_Wait",
                                              "MPI_Waitall",
                                              "MPI_Test",
                                              "MPI_Sendrecv",
                                              "MPI_Barrier",
                                              "MPI_Bcast",
                                              "MPI_Reduce",
                                              "MPI_Allreduce",
                                              "MPI_Alltoall",
                                              "MPI_Alltoallv",
                                              "MPI_Allgather",
                                              "MPI_Allgatherv",
                                              "MPI_Gather",
                                              "MPI_Scatter",
                                              "open",
                                              "read",
                                              "write",
                                              "fsync",
                                              "close",
                                              "toru",
                                              "MPI_Alltoallw",
                                              "MPI_Gatherv",
                                              "MPI_Scatterv",
                                              "MPI_Reduce_scatter",
                                              "MPI_Reduce_scatter_block",
                                              "MPI_Scan",
                                              "MPI_Exscan",
                                              "MPI_Ibarrier",
                                              "MPI_Ibcast",
                                              "MPI_Ireduce",
                                              "MPI_Iallreduce",
                                              "MPI_Ialltoall",
                                              "MPI_Ialltoallv",
                                              "MPI_Ialltoallw",
                                              "MPI_Iallgather",
                                              "MPI_Iallgatherv",
                                              "MPI_Igather",
                                              "MPI_Igatherv",
                                              "MPI_Iscatter",
                                              "MPI_Iscatterv",
                                              "MPI_Ireduce_scatter",
                                              "MPI_Ireduce_scatter_block",
                                              "MPI_Iscan",
                                              "MPI_Iexscan",
                                              "MPI_Waitany",
                                              "MPI_Waitsome",
                                              "MPI_Testany",
                                              "MPI_Testall",
                                              "MPI_Testsome",
                                              "MPI_Probe",
                                              "MPI_Iprobe",
                                              "MPI_Sendrecv_replace",
                                              "MPI_Bsend",
                                              "MPI_Rsend",
                                              "MPI_Ibsend",
                                              "MPI_Issend",
                                              "MPI_Irsend",
                                              "MPI_Send_init",
                                              "MPI_Recv_init",
                                              "MPI_Start",
                                              "MPI_Startall",
                                              "MPI_Neighbor_allgather",
                                              "MPI_Neighbor_allgatherv",
                                              "MPI_Neighbor_alltoall",
                                              "MPI_Neighbor_alltoallv",
                                              "MPI_Neighbor_alltoallw",
                                              "MPI_Ineighbor_allgather",
                                              "MPI_Ineighbor_allgatherv",
                                              "MPI_Ineighbor_alltoall",
                                              "MPI_Ineighbor_alltoallv",
                                              "MPI_Ineighbor_alltoallw",
                                              "MPI_Put",
                                              "MPI_Get",
                                              "MPI_Accumulate",
                                              "MPI_Win_fence",
                                              "MPI_Win_lock",
                                              "MPI_Win_unlock",
                                              "MPI_Win_create",
                                              "MPI_Win_allocate",
                                              "MPI_Win_free",
                                              "MPI_File_open",
                                              "MPI_File_close",
                                              "MPI_File_read",
                                              "MPI_File_read_at",
                                              "MPI_File_read_all",
                                              "MPI_File_read_at_all",
                                              "MPI_File_write",
                                              "MPI_File_write_at",
                                              "MPI_File_write_all",
                                              "MPI_File_write_at_all",
                                              "MPI_Mprobe",
                                              "MPI_Improbe",
                                              "MPI_Mrecv",
                                              "MPI_Imrecv",
                                              "MPI_Win_flush",
                                              "MPI_Win_flush_all",
                                              "MPI_Win_flush_local",
                                              "MPI_Win_flush_local_all",
                                              "MPI_Win_lock_all",
                                              "MPI_Win_unlock_all",
                                              "MPI_Get_accumulate",
                                              "MPI_Fetch_and_op",
                                              "MPI_Compare_and_swap",
                                              "MPI_Rput",
                                              "MPI_Rget",
                                              "MPI_Raccumulate",
                                              "MPI_File_iread",
                                              "MPI_File_iread_at",
                                              "MPI_File_iwrite",
                                              "MPI_File_iwrite_at",
                                              "MPIX_Barrier_init",
                                              "MPIX_Bcast_init",
                                              "MPIX_Reduce_init",
                                              "MPIX_Allreduce_init",
                                              "MPIX_Alltoall_init",
                                              "MPIX_Alltoallv_init",
                                              "MPIX_Alltoallw_init",
                                              "MPIX_Allgather_init",
                                              "MPIX_Allgatherv_init",
                                              "MPIX_Gather_init",
                                              "MPIX_Gatherv_init",
                                              "MPIX_Scatter_init",
                                              "MPIX_Scatterv_init",
                                              "MPIX_Reduce_scatter_init",
                                              "MPIX_Reduce_scatter_block_init",
                                              "MPIX_Scan_init",
                                              "MPIX_Exscan_init",
                                              "MPI_File_read_shared",
                                              "MPI_File_write_shared",
                                              "MPI_File_read_ordered",
                                              "MPI_File_write_ordered",
                                              "MPI_File_iread_shared",
                                              "MPI_File_iwrite_shared",
                                              "MPIX_Neighbor_allgather_init",
                                              "MPIX_Neighbor_allgatherv_init",
                                              "MPIX_Neighbor_alltoall_init",
                                              "MPIX_Neighbor_alltoallv_init",
                                              "MPIX_Neighbor_alltoallw_init"};

thread_local int busy_guard::depth = 0;

namespace {
std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h * 0x100000001b3ULL;
}
std::size_t env_size(const char* name, std::size_t fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  const unsigned long long x = std::strtoull(v, &end, 10);
  return end && *end == '\0' ? static_cast<std::size_t>(x) : fallback;
}
}  // namespace

recorder& recorder::get() {
  // Never destroyed: wrappers may run during static destruction (I/O after main returns).
  static recorder* r = new recorder();
  return *r;
}

void recorder::on_init() {
  std::lock_guard lock(mu);
  max_events_ = env_size("TORU_TUNE_MAX_EVENTS", std::size_t{1} << 18);
  events.reserve(std::min<std::size_t>(max_events_, 1 << 16));
  main_thread_ = std::this_thread::get_id();
  papi_start();
  t_init = now();
  last_exit_ = t_init;
  active_.store(true, std::memory_order_relaxed);
}

int recorder::site_of(void* addr, std::uint16_t func) {
  const std::uint64_t k = mix(reinterpret_cast<std::uintptr_t>(addr), func);
  auto [it, fresh] = site_index_.try_emplace(k, static_cast<int>(sites.size()));
  if (fresh) sites.push_back(site{.addr = addr, .func = func});
  return it->second;
}

int recorder::mpi_call(void* addr, std::uint16_t func, double t0, double t1, std::uint64_t bytes, int partner) {
  const int s = site_of(addr, func);
  site& st = sites[static_cast<std::size_t>(s)];
  ++st.calls;
  st.time += t1 - t0;
  st.bytes += bytes;
  if (partner >= 0 && (st.partners.size() < 64 || st.partners.count(partner))) st.partners[partner] += bytes;
  if (std::this_thread::get_id() == main_thread_) {
    // Compute is the main thread's time outside MPI and outside I/O.
    const double gap = std::max(0.0, t0 - last_exit_ - io_in_gap);
    st.compute_before += gap;
    compute_time += gap;
    io_in_gap = 0;
    last_exit_ = t1;
  }
  mpi_time += t1 - t0;
  return s;
}

void recorder::credit(int s, std::uint64_t bytes, int partner) {
  site& st = sites[static_cast<std::size_t>(s)];
  st.bytes += bytes;
  if (partner >= 0 && (st.partners.size() < 64 || st.partners.count(partner))) st.partners[partner] += bytes;
}

void recorder::push(const event& e) {
  polling_ = false;
  if (events.size() < max_events_) {
    events.push_back(e);
    // The root-cause analysis compares the compute of ranks between two events by difference.
    events.back().compute = compute_time;
  } else
    truncated = true;
}

void recorder::poll(int s, std::uint16_t func, double t0, double t1) {
  if (polling_ || std::this_thread::get_id() != main_thread_) return;
  push(event{.t0 = t0, .t1 = t1, .tpost = t0, .site = s, .type = ev_type::other_mpi, .func = func});
  polling_ = true;
}

recorder::comm_info& recorder::info(MPI_Comm comm) {
  auto it = comms_.find(comm);
  if (it != comms_.end()) return it->second;
  comm_info ci;
  int size = 0;
  PMPI_Comm_size(comm, &size);
  MPI_Group g, wg;
  PMPI_Comm_group(comm, &g);
  PMPI_Comm_group(MPI_COMM_WORLD, &wg);
  std::vector<int> ranks(static_cast<std::size_t>(size));
  for (int i = 0; i < size; ++i) ranks[static_cast<std::size_t>(i)] = i;
  ci.world.resize(static_cast<std::size_t>(size));
  PMPI_Group_translate_ranks(g, size, ranks.data(), wg, ci.world.data());
  PMPI_Group_free(&g);
  PMPI_Group_free(&wg);
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (int w : ci.world) h = mix(h, static_cast<std::uint64_t>(w));
  // Communicators over the same ranks (a dup of MPI_COMM_WORLD) are told apart by the order in which
  // this process first used them; a program that creates and uses them in the same order on every
  // rank (as MPI's collective rules make most programs do) gets the same key everywhere.
  const int ordinal = group_ordinal_[h]++;
  ci.key = mix(h, static_cast<std::uint64_t>(ordinal));
  members.try_emplace(ci.key, ci.world);
  return comms_.emplace(comm, std::move(ci)).first->second;
}

std::uint64_t recorder::comm_key(MPI_Comm comm) { return info(comm).key; }

int recorder::world_rank_of(MPI_Comm comm, int rank) {
  const auto& w = info(comm).world;
  return rank >= 0 && rank < static_cast<int>(w.size()) ? w[static_cast<std::size_t>(rank)] : rank;
}

void recorder::forget_comm(MPI_Comm comm) { comms_.erase(comm); }

std::uint32_t recorder::next_send_seq(int dst, int tag, std::uint64_t key) {
  return seqs_[mix(mix(mix(key, 1), static_cast<std::uint64_t>(dst)), static_cast<std::uint64_t>(tag))]++;
}
std::uint32_t recorder::next_recv_seq(int src, int tag, std::uint64_t key) {
  return seqs_[mix(mix(mix(key, 2), static_cast<std::uint64_t>(src)), static_cast<std::uint64_t>(tag))]++;
}
std::uint32_t recorder::next_coll_seq(std::uint64_t key) { return seqs_[mix(key, 3)]++; }

void recorder::remember_window(MPI_Win win, MPI_Comm comm) {
  std::vector<int>& w = windows[win];
  w.clear();
  int size = 0;
  PMPI_Comm_size(comm, &size);
  for (int i = 0; i < size; ++i) w.push_back(world_rank_of(comm, i));
}

int recorder::world_rank_of(MPI_Win win, int rank) {
  auto it = windows.find(win);
  if (it == windows.end() || rank < 0 || static_cast<std::size_t>(rank) >= it->second.size()) return -1;
  return it->second[static_cast<std::size_t>(rank)];
}

void recorder::io(void* addr, std::uint16_t func, std::uint16_t kind, double t0, double t1, std::uint64_t bytes) {
  std::lock_guard lock(mu);
  const std::uint64_t k = mix(reinterpret_cast<std::uintptr_t>(addr), func);
  auto [it, fresh] = io_site_index_.try_emplace(k, static_cast<int>(io_sites.size()));
  if (fresh) io_sites.push_back(site{.addr = addr, .func = func});
  site& st = io_sites[static_cast<std::size_t>(it->second)];
  ++st.calls;
  st.time += t1 - t0;
  st.bytes += bytes;
  const int i = kind - f_io_open;
  ++io_counts[i];
  io_bytes[i] += bytes;
  io_times[i] += t1 - t0;
  io_time += t1 - t0;
  if (std::this_thread::get_id() == main_thread_) io_in_gap += t1 - t0;
  event e{.t0 = t0, .t1 = t1, .tpost = t0, .bytes = bytes, .site = it->second, .type = ev_type::io, .func = func};
  push(e);
}

void recorder::toru_event(int kind, const char* name, const char* detail, std::uint64_t bytes, double value) {
  const double t = now();
  std::lock_guard lock(mu);
  if (std::this_thread::get_id() != main_thread_) return;  // regions nest on the main thread only
  if (kind == 0) {                                         // begin
    const std::uint64_t k = mix(reinterpret_cast<std::uintptr_t>(name), reinterpret_cast<std::uintptr_t>(detail));
    auto [it, fresh] = region_index_.try_emplace(k, static_cast<int>(regions.size()));
    if (fresh) regions.push_back(toru_region{.name = name, .detail = detail});
    toru_region& r = regions[static_cast<std::size_t>(it->second)];
    ++r.count;
    r.bytes += bytes;
    r.value += value;
    open_regions_.emplace_back(it->second, t);
  } else if (kind == 1) {  // end: the innermost open region of that name
    for (auto o = open_regions_.rbegin(); o != open_regions_.rend(); ++o) {
      const int idx = o->first;
      if (std::string_view(regions[static_cast<std::size_t>(idx)].name) != name) continue;
      const double t0 = o->second;
      regions[static_cast<std::size_t>(idx)].time += t - t0;
      event e{.t0 = t0,
              .t1 = t,
              .tpost = t0,
              .key = static_cast<std::uint64_t>(idx),
              .type = ev_type::toru,
              .func = f_toru};
      push(e);
      open_regions_.erase(std::next(o).base());
      break;
    }
  } else {
    const std::uint64_t k = mix(reinterpret_cast<std::uintptr_t>(name), reinterpret_cast<std::uintptr_t>(detail));
    auto [it, fresh] = region_index_.try_emplace(k, static_cast<int>(regions.size()));
    if (fresh) regions.push_back(toru_region{.name = name, .detail = detail});
    toru_region& r = regions[static_cast<std::size_t>(it->second)];
    ++r.count;
    r.bytes += bytes;
    r.value += value;
  }
}

}  // namespace toru::tune::shim

// The hook toru's core looks up at load time (toru/core/events.hpp): toru's own phases are recorded
// whenever this library is in the process, linked or preloaded.
extern "C" __attribute__((visibility("default"))) void toru_events_sink(int kind, const char* name, const char* detail,
                                                                        std::uint64_t bytes, double value) noexcept {
  auto& r = toru::tune::shim::recorder::get();
  if (!r.active()) return;
  try {
    r.toru_event(kind, name, detail, bytes, value);
  } catch (...) {
  }
}
