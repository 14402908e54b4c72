// SPDX-License-Identifier: BSD-3-Clause
// The bounded, pre-allocated queue between the simulation and the publisher's encoder thread.
// push() copies a frame into a free slot, taking no lock and waking nobody (the consumer polls;
// see the private section). When no slot is free the policy decides: latest_wins replaces
// the oldest frame not yet taken (ZeroMQ CONFLATE / ADIOS2 SST AlwaysProvideLatest), drop_newest
// refuses the new one (either way the loss is counted), and block waits for the consumer to free
// a slot: lossless, for recordings. The consumer is the encoder/recorder, never a viewer, so block
// waits on local encoding and disk throughput only; the time waited is counted. A wait longer than
// block_timeout_s (a hung disk) drops that frame, and later pushes drop at once, without waiting,
// until the consumer frees a slot again: the simulation never hangs on a stuck recorder.
//
// Thread safety: one producer thread and one consumer thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "toru/stream/frame.hpp"

namespace toru::stream {

enum class full_policy { latest_wins, drop_newest, block };

enum class push_result {
  queued,            // in a free slot
  replaced_oldest,   // latest_wins: an older, unsent frame was dropped for it
  dropped,           // drop_newest: the queue was full, this frame was dropped (block: the wait timed out)
  refused_oversize,  // larger than the slot size: never queued
};

struct queue_counters {
  std::uint64_t offered = 0, queued = 0, dropped = 0, refused = 0, taken = 0;
  std::uint64_t blocked = 0;         // block: pushes that waited for a free slot
  std::uint64_t block_timeouts = 0;  // block: pushes dropped after block_timeout_s (or while stuck)
  double blocked_s = 0;              // block: seconds the producer waited, in all
};

class frame_queue {
 public:
  /// slots >= 1 frames of at most slot_bytes payload each, allocated here and never again.
  frame_queue(std::size_t slots, std::size_t slot_bytes, full_policy policy, double block_timeout_s = 10);

  /// Copies f (already validated) into a slot. Waits for the consumer only under full_policy::block
  /// (at most block_timeout_s).
  push_result push(const frame_view& f);

  /// A frame taken by the consumer; release it with done().
  struct item {
    std::size_t slot;
    frame_view view;  // points into the slot until done()
  };
  /// Waits up to `timeout_ms` for a frame (the oldest first; polled every 5 ms, as push() wakes
  /// nobody); nullopt on timeout or after close().
  std::optional<item> take(int timeout_ms);
  void done(const item& it);
  /// Wakes a waiting take() for good.
  void close();

  queue_counters counters() const;
  std::size_t slot_bytes() const { return slot_bytes_; }
  std::size_t size() const;  // frames waiting

 private:
  // Slot states change by atomic compare-and-swap, and push() makes no system call: it never
  // takes a lock the encoder thread may hold (at nice +10 on a loaded node that thread can be
  // preempted for milliseconds inside a critical section) and never wakes it (the woken thread
  // takes the caller's core; see push()). The consumer polls in short slices instead. The
  // mutexes below only pair with the condition variables (close(), and the block wait, which
  // done() wakes: there the encoder wakes the producer, which is waiting anyway).
  enum state : int { free, filling, ready, taken };
  struct slot {
    std::atomic<int> st{free};
    std::atomic<std::uint64_t> order{0};  // read by both sides' scans
    std::vector<std::byte> data;
    std::string name;  // capacity reserved up front: assigning a name <= 256 chars never allocates
    std::vector<std::int64_t> shape, origin, global_shape;  // capacity 8 each
    frame_view meta;
  };
  std::size_t claim(int from);  // a slot in state `from` moved to filling; size() if none
  std::size_t claim_oldest_ready(int to);
  mutable std::mutex m_, freed_m_;
  std::condition_variable cv_, freed_;
  std::unique_ptr<slot[]> slots_;
  std::size_t nslots_;
  std::size_t slot_bytes_;
  full_policy policy_;
  double block_timeout_s_;
  std::atomic<bool> stuck_{false};  // a block wait timed out and no slot has been freed since
  std::atomic<bool> producer_waiting_{false}, closed_{false};
  std::uint64_t next_order_ = 0;  // the producer's
  // Written by one thread each (the producer, or taken by the consumer), read by any.
  std::atomic<std::uint64_t> offered_{0}, queued_{0}, dropped_{0}, refused_{0}, taken_{0}, blocked_{0},
      block_timeouts_{0};
  std::atomic<double> blocked_s_{0};
};

}  // namespace toru::stream
