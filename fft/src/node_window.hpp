// SPDX-License-Identifier: BSD-3-Clause
// Node-local shared-memory windows for one-copy transposes (docs/fft.md, "One-copy exchanges on a
// node"). A window has two buffers per rank, used alternately, so one barrier per transpose
// suffices: a rank writes buffer k%2 of its peers only after every rank passed the barrier of use
// k-1, which each rank enters only after it finished reading use k-2 (the same buffer).
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace toru::fft::detail {

class node_window {
 public:
  /// Every buffer (and every node_array part's run of parts) starts on a cache line.
  static constexpr std::size_t buffer_alignment = 64;
  /// Every rank's buffer `parity` (0 or 1), in this rank's address space.
  char* buffer(int rank, int parity) const { return base_[rank] + static_cast<std::size_t>(parity) * bytes_; }
  std::size_t bytes() const { return bytes_; }
  /// The buffer parity of the next use (collective order: every rank counts the same uses).
  int next_use() const { return static_cast<int>(uses_++ & 1); }
  /// Collective over the window's ranks: makes this rank's writes visible to all and waits until
  /// every rank's writes are done.
  void fence() const;

  node_window(MPI_Comm comm, std::size_t bytes);  // collective
  /// Collective: one buffer of `bytes` per rank (may differ between ranks), without
  /// alloc_shared_noncontig, so that MPI may place the ranks' parts end to end (see node_array).
  node_window(MPI_Comm comm, std::size_t bytes, bool contiguous);
  ~node_window();  // collective (MPI_Win_free)
  node_window(const node_window&) = delete;
  node_window& operator=(const node_window&) = delete;
  void release();  // collective; idempotent
  /// Whether every rank's buffer starts where the previous rank's ends (contiguous windows only;
  /// the same answer on every rank).
  bool end_to_end() const { return end_to_end_; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Win win_ = MPI_WIN_NULL;
  std::size_t bytes_ = 0;
  std::vector<char*> base_;
  mutable std::uint64_t uses_ = 0;
  bool end_to_end_ = false;
};

/// One array of the node, split over the ranks in rank order and addressable whole by every rank:
/// rank r's part (its own bytes) starts where rank r-1's ends. The slab's middle layout M
/// ([i1 part][i0][w] on each rank) concatenated over the ranks is the whole M array [i1][i0][w],
/// so a local FFT can write (or read) every rank's part with one stride: no copy at all between
/// the stages (docs/fft.md, "Direct window"). Two arrays used alternately, one fence per use, as
/// node_window's two buffers.
class node_array {
 public:
  /// Rank 0's part of array `parity`, in this rank's address space; the rest follows.
  char* base(int parity) const { return half_[parity]->buffer(0, 0); }
  char* part(int rank, int parity) const { return half_[parity]->buffer(rank, 0); }
  int next_use() const { return static_cast<int>(uses_++ & 1); }
  void fence(int parity) const { half_[parity]->fence(); }
  const std::vector<unsigned long long>& part_bytes() const { return parts_; }

  node_array(std::vector<unsigned long long> parts, std::unique_ptr<node_window> a, std::unique_ptr<node_window> b)
      : parts_(std::move(parts)), half_{std::move(a), std::move(b)} {}

 private:
  std::vector<unsigned long long> parts_;
  std::unique_ptr<node_window> half_[2];
  mutable std::uint64_t uses_ = 0;
};

/// Collective over comm: true when every rank of comm shares memory with every other (one node),
/// so that a node_window spans comm. TORU_FFT_WINDOW=0 in the environment makes it false everywhere.
bool window_applicable(MPI_Comm comm);

/// Collective over comm (call only where window_applicable(comm)): a window of comm's cache with at
/// least `bytes` per rank and buffer (the maximum over ranks), allocated when none fits. Windows
/// live as long as comm: freed by an attribute delete callback when comm is freed, or when
/// MPI_Finalize starts, never by a plan's destructor (docs/fft.md).
const node_window* shared_window(MPI_Comm comm, std::size_t bytes);

/// Collective over comm (call only where window_applicable(comm)): comm's cached node_array whose
/// parts are `bytes` on this rank (each rank its own size), allocated when none matches; nullptr on
/// every rank when MPI did not place the parts end to end. Same lifetime as shared_window's.
const node_array* shared_array(MPI_Comm comm, std::size_t bytes);

/// A window of comm's cache lent to one holder (a plan's shared_out()): one buffer per rank,
/// buffer(rank, 0), in use while `busy`.
struct lent_window {
  const node_window* window = nullptr;
  std::shared_ptr<std::atomic<bool>> busy;  // the holder clears it (locally) when done
};

/// Collective over comm (call only where window_applicable(comm)): a window of comm's cache with
/// one buffer of at least `bytes` (rounded to whole cache lines) per rank, lent to the caller
/// alone. A later call lends it again only once every rank's holder has cleared busy, which is
/// local (a plan's destructor); never freed before comm, as shared_window's windows.
lent_window lend_window(MPI_Comm comm, std::size_t bytes);

/// Windows allocated and not yet freed, on this rank (for tests of the lifetime).
int live_windows();

}  // namespace toru::fft::detail
