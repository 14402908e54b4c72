// SPDX-License-Identifier: BSD-3-Clause
// The per-process state of libtoru_tune_pmpi.so: call-site statistics and a bounded event buffer, filled
// by the MPI (C and Fortran), POSIX I/O and toru-event wrappers, written out at MPI_Finalize.
#pragma once

#include <mpi.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "event.hpp"

namespace toru::tune::shim {

/// A call site: return address and the function called there.
struct site {
  void* addr = nullptr;
  std::uint16_t func = 0;
  std::uint64_t calls = 0;
  double time = 0;  // inclusive time in the call
  std::uint64_t bytes = 0;
  double compute_before = 0;                          // compute time (wall between calls minus I/O) ending at this site
  std::unordered_map<int, std::uint64_t> partners{};  // world rank -> bytes (bounded)
};

/// A toru region (events API): name and detail literal pointers.
struct toru_region {
  const char* name = nullptr;
  const char* detail = nullptr;
  std::uint64_t count = 0;
  double time = 0;
  std::uint64_t bytes = 0;
  double value = 0;  // summed (comm.alltoall: T_min bound)
};

/// A persistent request (Send_init, Recv_init; a persistent collective): what each MPI_Start of it
/// moves.
struct persistent_req {
  long long count;
  MPI_Datatype type;
  int peer;  // rank in comm; MPI_ANY_SOURCE or MPI_PROC_NULL as given
  int tag;
  MPI_Comm comm;
  bool recv;
  bool coll = false;
  std::uint64_t coll_bytes = 0;  // a collective's bytes per start (when coll_partners is empty)
  // A neighbourhood collective's destinations (world rank) with the bytes each start sends them.
  std::vector<std::pair<int, std::uint64_t>> coll_partners{};
  std::uint16_t init = 0;  // a collective's init function (fn): each start is a call of it
};

/// A pending nonblocking receive.
struct pending_recv {
  double posted;
  std::uint64_t key;
  int site;
  MPI_Comm comm;
  MPI_Datatype type;
};

class recorder {
 public:
  static recorder& get();

  double now() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  }
  bool active() const { return active_.load(std::memory_order_relaxed); }
  bool on_main_thread() const { return std::this_thread::get_id() == main_thread_; }
  void stop() { active_.store(false, std::memory_order_relaxed); }

  void on_init();      // after PMPI_Init
  void on_finalize();  // before PMPI_Finalize (collective over MPI_COMM_WORLD)

  /// Site index for (return address, function); creates it. Call with the lock held.
  int site_of(void* addr, std::uint16_t func);
  /// Records an MPI call: compute gap before t0 (main thread), site stats; returns the site index.
  int mpi_call(void* addr, std::uint16_t func, double t0, double t1, std::uint64_t bytes, int partner);
  void push(const event& e);
  /// An MPI_Iprobe at site s that found nothing: the first of a streak (until the next event)
  /// becomes an event, so a receive reached by probing is a wait from the streak's start.
  void poll(int s, std::uint16_t func, double t0, double t1);
  /// Adds bytes moved with `partner` (world rank) to a site already counted by mpi_call: completions
  /// and multi-partner calls (Startall, neighbourhood collectives) name their partners one by one.
  void credit(int site, std::uint64_t bytes, int partner);

  /// Communicator key and its ranks in MPI_COMM_WORLD (cached per handle).
  std::uint64_t comm_key(MPI_Comm comm);
  int world_rank_of(MPI_Comm comm, int rank);
  void forget_comm(MPI_Comm comm);
  std::uint32_t next_send_seq(int dst, int tag, std::uint64_t key);
  std::uint32_t next_recv_seq(int src, int tag, std::uint64_t key);
  std::uint32_t next_coll_seq(std::uint64_t key);

  /// An I/O call at addr; `kind` (f_io_open ... f_io_close) is the total it adds to, which differs
  /// from func for MPI-IO (MPI_File_write_all adds to the writes).
  void io(void* addr, std::uint16_t func, double t0, double t1, std::uint64_t bytes) {
    io(addr, func, func, t0, t1, bytes);
  }
  void io(void* addr, std::uint16_t func, std::uint16_t kind, double t0, double t1, std::uint64_t bytes);
  /// World ranks of a window's group (one-sided targets are ranks in it), kept from its creation.
  void remember_window(MPI_Win win, MPI_Comm comm);
  int world_rank_of(MPI_Win win, int rank);
  void toru_event(int kind, const char* name, const char* detail, std::uint64_t bytes, double value);

  std::mutex mu;  // guards everything below
  std::unordered_map<MPI_Request, pending_recv> pending;
  std::unordered_map<MPI_Request, persistent_req> persistent;
  std::unordered_map<MPI_Win, std::vector<int>> windows;
  std::unordered_map<MPI_Message, MPI_Comm> messages;  // matched by Mprobe/Improbe, until Mrecv/Imrecv
  std::vector<site> sites;
  std::vector<site> io_sites;
  std::vector<event> events;
  std::vector<toru_region> regions;
  // Every communicator's ranks in MPI_COMM_WORLD by key, kept after MPI_Comm_free: the analysis at
  // MPI_Finalize asks whether two ranks met in a collective on it.
  std::unordered_map<std::uint64_t, std::vector<int>> members;
  bool truncated = false;
  std::uint32_t next_group = 1;

  // Per-rank totals.
  double t_init = 0, t_final = 0;
  double mpi_time = 0, coll_time = 0, p2p_time = 0, io_time = 0, compute_time = 0, io_in_gap = 0;
  std::uint64_t p2p_msgs = 0, p2p_bytes = 0, coll_calls = 0;
  std::uint64_t io_counts[5] = {}, io_bytes[5] = {};
  double io_times[5] = {};

 private:
  recorder() = default;
  struct comm_info {
    std::uint64_t key;
    std::vector<int> world;
  };
  comm_info& info(MPI_Comm comm);

  std::atomic<bool> active_{false};
  std::unordered_map<std::uint64_t, int> site_index_;
  std::unordered_map<std::uint64_t, int> io_site_index_;
  std::unordered_map<MPI_Comm, comm_info> comms_;
  std::unordered_map<std::uint64_t, int> group_ordinal_;  // group hash -> communicators seen
  std::unordered_map<std::uint64_t, std::uint32_t> seqs_;
  std::unordered_map<std::uint64_t, int> region_index_;
  std::vector<std::pair<int, double>> open_regions_;  // (region, begin) stack, main thread
  std::size_t max_events_ = 0;
  double last_exit_ = 0;
  bool polling_ = false;
  std::thread::id main_thread_;
  friend struct finalize_access;
};

/// Guards against counting the tool's own work (its I/O at finalize, MPI inside MPI).
struct busy_guard {
  static thread_local int depth;
  busy_guard() { ++depth; }
  ~busy_guard() { --depth; }
  static bool busy() { return depth > 0; }
};

/// Writes the run directory (profile.json, trace/, report.html); rank 0 only after the gather.
void finalize_run(recorder& r);

}  // namespace toru::tune::shim
