// SPDX-License-Identifier: BSD-3-Clause
#include "node_window.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>

#include <unistd.h>

#include <fmt/format.h>

#include "toru/core/error.hpp"
#include "toru/core/mpi.hpp"

namespace toru::fft::detail {

namespace {

// Windows of one communicator, on an attribute of it. `comm` is a duplicate, so the barriers never
// meet traffic of the communicator's own users (toru::comm's thread).
struct window_cache {
  MPI_Comm comm = MPI_COMM_NULL;
  std::vector<std::unique_ptr<node_window>> windows;     // increasing size
  std::vector<std::unique_ptr<node_array>> arrays;       // in creation order
  std::vector<std::vector<unsigned long long>> refused;  // part sizes MPI did not place end to end
  std::vector<lent_window> lent;                         // in creation order
  std::vector<std::unique_ptr<node_window>> lent_windows;
};

std::mutex registry_mutex;
// Every live window in creation order, which is the same on every rank (windows are created
// collectively), so freeing them in this order at MPI_Finalize cannot deadlock.
std::vector<node_window*> registry;
int live = 0;
int cache_keyval = MPI_KEYVAL_INVALID;
int finalize_keyval = MPI_KEYVAL_INVALID;

int delete_cache(MPI_Comm, int, void* value, void*) {
  auto* c = static_cast<window_cache*>(value);
  for (auto& w : c->windows) w->release();
  // The arrays' windows were created after some of the windows above: any order the same on every
  // rank frees them without deadlock (each MPI_Win_free is collective over the same ranks).
  c->arrays.clear();
  c->lent_windows.clear();
  if (c->comm != MPI_COMM_NULL) MPI_Comm_free(&c->comm);
  delete c;
  return MPI_SUCCESS;
}

// MPI_COMM_SELF's attributes are deleted first in MPI_Finalize, in the reverse order of setting:
// this one (set after fft's communicator cache's) runs before the communicators go.
int finalize_windows(MPI_Comm, int, void*, void*) {
  std::vector<node_window*> all;
  {
    std::lock_guard lock(registry_mutex);
    all = registry;
  }
  for (node_window* w : all) w->release();
  return MPI_SUCCESS;
}

void ensure_keyvals() {
  if (cache_keyval != MPI_KEYVAL_INVALID) return;
  check_mpi(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_cache, &cache_keyval, nullptr),
            "MPI_Comm_create_keyval");
  check_mpi(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, finalize_windows, &finalize_keyval, nullptr),
            "MPI_Comm_create_keyval");
  check_mpi(MPI_Comm_set_attr(MPI_COMM_SELF, finalize_keyval, nullptr), "MPI_Comm_set_attr");
}

// comm's window cache, created (collectively: MPI_Comm_dup) on first use.
window_cache* cache_of(MPI_Comm comm) {
  void* value = nullptr;
  int found = 0;
  check_mpi(MPI_Comm_get_attr(comm, cache_keyval, &value, &found), "MPI_Comm_get_attr");
  if (found) return static_cast<window_cache*>(value);
  auto* cache = new window_cache;
  check_mpi(MPI_Comm_dup(comm, &cache->comm), "MPI_Comm_dup");
  check_mpi(MPI_Comm_set_attr(comm, cache_keyval, cache), "MPI_Comm_set_attr");
  return cache;
}

std::uint64_t pad_to_line(const char* p) {
  const auto a = reinterpret_cast<std::uintptr_t>(p) % node_window::buffer_alignment;
  return a == 0 ? 0 : node_window::buffer_alignment - a;
}

}  // namespace

node_window::node_window(MPI_Comm comm, std::size_t bytes) : node_window(comm, bytes, false) {}

node_window::node_window(MPI_Comm comm, std::size_t bytes, bool contiguous) : comm_(comm), bytes_(bytes) {
  const int P = mpi_size(comm), me = mpi_rank(comm);
  void* mine = nullptr;
  MPI_Info info = MPI_INFO_NULL;
  check_mpi(MPI_Info_create(&info), "MPI_Info_create");
  // Each rank's segment separately (page aligned, first-touched by its owner): no false sharing.
  // A contiguous array needs MPI's default placement instead (parts end to end).
  if (!contiguous) MPI_Info_set(info, "alloc_shared_noncontig", "true");
  // MPI only promises byte alignment (Open MPI's segments start 8 bytes past a 64-byte line), and
  // FFTW runs its scalar codelets on anything not SIMD-aligned, 1.5-3x slower than on the same
  // data aligned: every buffer starts on a cache line. Separate segments get the slack each (both
  // buffers rounded to lines); a contiguous array shifts as a whole, so only its last part has it.
  const std::size_t line_bytes = (bytes + buffer_alignment - 1) / buffer_alignment * buffer_alignment;
  if (!contiguous) bytes_ = line_bytes;
  const std::size_t total = contiguous ? bytes + (me == P - 1 ? buffer_alignment : 0) : 2 * bytes_ + buffer_alignment;
  const int rc = MPI_Win_allocate_shared(static_cast<MPI_Aint>(total), 1, info, comm, &mine, &win_);
  MPI_Info_free(&info);
  if (rc != MPI_SUCCESS)
    throw error(errc::out_of_memory,
                fmt::format("MPI_Win_allocate_shared: could not allocate {} bytes of node-shared FFT window", total));
  base_.resize(P);
  std::vector<MPI_Aint> sizes(P);
  int end_to_end = 1;
  char* next = nullptr;
  for (int r = 0; r < P; ++r) {
    int unit = 0;
    void* p = nullptr;
    check_mpi(MPI_Win_shared_query(win_, r, &sizes[r], &unit, &p), "MPI_Win_shared_query");
    base_[r] = static_cast<char*>(p);
    // An empty part may report any address; every other one must follow its predecessor.
    if (sizes[r] > 0) {
      if (next && base_[r] != next) end_to_end = 0;
      next = base_[r] + sizes[r];
    } else if (next) {
      base_[r] = next;
    }
  }
  // Each rank touches its own segment first, here, not in the plan's first transforms (its pages
  // then lie by its core), then maps every peer's pages into its own page table with a read of
  // each: a transform's first runs then cost what the later ones do. (The buffers alternate
  // between uses: MEASURE's first figure of the direct window, whose timed run was the second
  // buffer's first use, read 2.3x its second at 384^3 on 2 ranks.) The barrier keeps a peer from
  // reading or writing a segment still being cleared.
  if (mine && total > 0) std::memset(mine, 0, total);
  check_mpi(MPI_Barrier(comm), "MPI_Barrier");
  {
    const auto page = static_cast<MPI_Aint>(sysconf(_SC_PAGESIZE));
    unsigned char sink = 0;
    for (int r = 0; r < P; ++r)
      if (r != me)
        for (MPI_Aint off = 0; off < sizes[r]; off += page)
          sink ^= *static_cast<volatile const unsigned char*>(static_cast<void*>(base_[r] + off));
    static_cast<void>(sink);
  }
  if (contiguous) {
    int all = 0;
    check_mpi(MPI_Allreduce(&end_to_end, &all, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
    end_to_end_ = all == 1;
  }
  // The shift to the next line, as the owner of the memory sees it: every rank then addresses the
  // same bytes (an address taken modulo 64 could differ between the ranks' mappings).
  std::vector<std::uint64_t> shift(P);
  if (contiguous) {
    std::uint64_t s0 = pad_to_line(base_[0]);
    check_mpi(MPI_Bcast(&s0, 1, MPI_UINT64_T, 0, comm), "MPI_Bcast");
    std::fill(shift.begin(), shift.end(), s0);  // the parts stay end to end
  } else {
    const std::uint64_t own = sizes[me] > 0 ? pad_to_line(base_[me]) : 0;
    check_mpi(MPI_Allgather(&own, 1, MPI_UINT64_T, shift.data(), 1, MPI_UINT64_T, comm), "MPI_Allgather");
  }
  for (int r = 0; r < P; ++r) base_[r] += shift[r];
  // One passive epoch for the window's life: MPI_Win_sync needs one.
  check_mpi(MPI_Win_lock_all(MPI_MODE_NOCHECK, win_), "MPI_Win_lock_all");
  std::lock_guard lock(registry_mutex);
  registry.push_back(this);
  ++live;
}

void node_window::fence() const {
  MPI_Win_sync(win_);
  MPI_Barrier(comm_);
  MPI_Win_sync(win_);
}

void node_window::release() {
  if (win_ == MPI_WIN_NULL) return;
  MPI_Win_unlock_all(win_);
  MPI_Win_free(&win_);
  std::lock_guard lock(registry_mutex);
  std::erase(registry, this);
  --live;
}

node_window::~node_window() { release(); }

int live_windows() {
  std::lock_guard lock(registry_mutex);
  return live;
}

bool window_applicable(MPI_Comm comm) {
  int local = 1;
  if (const char* e = std::getenv("TORU_FFT_WINDOW"); e && std::strcmp(e, "0") == 0) local = 0;
  MPI_Comm node = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node), "MPI_Comm_split_type");
  if (mpi_size(node) != mpi_size(comm)) local = 0;
  MPI_Comm_free(&node);
  int all = 0;
  check_mpi(MPI_Allreduce(&local, &all, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
  return all == 1;
}

const node_window* shared_window(MPI_Comm comm, std::size_t bytes) {
  unsigned long long need = std::max<std::size_t>(bytes, 64), agreed = 0;
  check_mpi(MPI_Allreduce(&need, &agreed, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm), "MPI_Allreduce");
  {
    std::lock_guard lock(registry_mutex);
    ensure_keyvals();
  }
  window_cache* cache = cache_of(comm);
  // Same cache history on every rank (plans are built collectively): the same window everywhere.
  for (auto& w : cache->windows)
    if (w->bytes() >= agreed) return w.get();
  // Page-rounded, so that plans of slightly different sizes share one window.
  const std::size_t size = (agreed + 4095) / 4096 * 4096;
  cache->windows.push_back(std::make_unique<node_window>(cache->comm, size));
  return cache->windows.back().get();
}

const node_array* shared_array(MPI_Comm comm, std::size_t bytes) {
  const int P = mpi_size(comm);
  std::vector<unsigned long long> parts(static_cast<std::size_t>(P));
  const unsigned long long mine = bytes;
  check_mpi(MPI_Allgather(&mine, 1, MPI_UNSIGNED_LONG_LONG, parts.data(), 1, MPI_UNSIGNED_LONG_LONG, comm),
            "MPI_Allgather");
  {
    std::lock_guard lock(registry_mutex);
    ensure_keyvals();
  }
  window_cache* cache = cache_of(comm);
  for (auto& a : cache->arrays)
    if (a->part_bytes() == parts) return a.get();
  for (auto& r : cache->refused)
    if (r == parts) return nullptr;
  // An empty part has no address of its own to check the placement with.
  if (std::find(parts.begin(), parts.end(), 0ULL) != parts.end()) return nullptr;
  auto a = std::make_unique<node_window>(cache->comm, bytes, true);
  auto b = std::make_unique<node_window>(cache->comm, bytes, true);
  if (!a->end_to_end() || !b->end_to_end()) {
    // Freed now (collective, the same decision on every rank) and remembered, so that the next
    // plan of these sizes does not allocate again.
    a->release();
    b->release();
    cache->refused.push_back(parts);
    return nullptr;
  }
  cache->arrays.push_back(std::make_unique<node_array>(std::move(parts), std::move(a), std::move(b)));
  return cache->arrays.back().get();
}

lent_window lend_window(MPI_Comm comm, std::size_t bytes) {
  {
    std::lock_guard lock(registry_mutex);
    ensure_keyvals();
  }
  window_cache* cache = cache_of(comm);
  // Whole lines per rank: every part starts on one (the contiguous window shifts as a whole).
  const std::size_t need = (std::max<std::size_t>(bytes, 1) + node_window::buffer_alignment - 1) /
                           node_window::buffer_alignment * node_window::buffer_alignment;
  // Which lent windows this rank could take (let go and large enough), agreed by a logical AND:
  // the same list on every rank (windows are lent collectively), the first free everywhere wins.
  std::vector<int> free(cache->lent.size());
  for (std::size_t i = 0; i < free.size(); ++i)
    free[i] = !cache->lent[i].busy->load() && cache->lent[i].window->bytes() >= need;
  if (!free.empty())
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, free.data(), static_cast<int>(free.size()), MPI_INT, MPI_LAND, comm),
              "MPI_Allreduce");
  for (std::size_t i = 0; i < free.size(); ++i)
    if (free[i]) {
      cache->lent[i].busy->store(true);
      return cache->lent[i];
    }
  cache->lent_windows.push_back(std::make_unique<node_window>(cache->comm, need, true));
  cache->lent.push_back({cache->lent_windows.back().get(), std::make_shared<std::atomic<bool>>(true)});
  return cache->lent.back();
}

}  // namespace toru::fft::detail
