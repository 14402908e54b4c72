// SPDX-License-Identifier: BSD-3-Clause
// A host-emulated accelerator for CPU-only machines and CI: the device memory is the model's
// allocator with a hard capacity (device_memory: an allocation past it throws
// errc::out_of_memory like a GPU's allocator, and keeps a high-water mark), and two copy engines,
// one per direction, each a thread that moves bytes between "device" and pinned-host buffers at a
// set bandwidth and latency. Compute runs on the calling thread (the compute stream), so copies
// really overlap compute and the overlap is measurable with a wall clock.
//
// Streams and events follow CUDA's model, as the planner's time model assumes: a copy enqueued on
// a stream starts when the stream is free and the events it waits for have completed; it records
// its own completion event. A copy of B bytes occupies its stream for latency + B / bandwidth
// seconds (the memcpy runs first, then the engine sleeps out the rest; if the memcpy alone is
// slower, the copy takes as long as the memcpy).
//
// Thread-safety: enqueue from one thread (the compute stream); events may be waited on from any.
//
//   toru::train::copy_engine d2h({.bandwidth = 2e9, .latency = 10e-6});
//   auto done = d2h.enqueue(host, device, bytes, {});
//   done->wait();
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace toru::train {

/// A completion flag with the interval the work occupied (seconds since the engine's epoch).
class event {
 public:
  void wait() const;
  bool done() const;
  /// Start and end of the copy (valid once done()).
  double start() const;
  double end() const;
  /// Marks the event complete (the engine calls this).
  void complete(double start, double end);

 private:
  mutable std::mutex mutex_;
  mutable std::condition_variable cv_;
  bool done_ = false;
  double start_ = 0, end_ = 0;
};
using event_ptr = std::shared_ptr<event>;

struct link_spec {
  double bandwidth = 12e9;  // bytes/s, per direction
  double latency = 10e-6;   // seconds per copy
};

/// One copy stream served by its own thread.
class copy_engine {
 public:
  using clock = std::chrono::steady_clock;
  /// Times are reported relative to `epoch`.
  explicit copy_engine(const link_spec& link, clock::time_point epoch = clock::now());
  ~copy_engine();
  copy_engine(const copy_engine&) = delete;
  copy_engine& operator=(const copy_engine&) = delete;

  /// Copies `bytes` from src to dst once every event in `after` has completed and the stream is
  /// free. The buffers must stay valid until the returned event completes.
  event_ptr enqueue(void* dst, const void* src, std::size_t bytes, std::vector<event_ptr> after);
  /// Waits until every enqueued copy has completed.
  void synchronize();
  void set_epoch(clock::time_point epoch);
  const link_spec& link() const noexcept { return link_; }

 private:
  struct task {
    void* dst;
    const void* src;
    std::size_t bytes;
    std::vector<event_ptr> after;
    event_ptr done;
  };
  void serve();

  link_spec link_;
  clock::time_point epoch_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<task> queue_;
  event_ptr last_;
  bool stop_ = false;
  std::thread thread_;
};

/// The emulated device's copy side: a device-to-host and a host-to-device stream.
struct emulated_link {
  link_spec d2h, h2d;
};

}  // namespace toru::train
