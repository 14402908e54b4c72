// SPDX-License-Identifier: BSD-3-Clause
// toru's internal events: named phases (begin/end, with bytes and a value) that toru's modules emit
// and a performance tool (tune/'s libtoru_tune_pmpi.so, a trainer's profiler, a test) receives.
//
//   {
//     toru::events::scope s("comm.alltoall", bytes, "pairwise");   // begin now, end at scope exit
//     ...
//   }
//   toru::events::mark("comm.alltoall.chunk", 0, "", chunk_index);  // a point event
//
// Cost: with no sink, an emission is one relaxed atomic load and a predictable branch (no call, no
// clock read); a scope remembers the answer so its end costs nothing either. With a sink, the sink
// is called on the emitting thread; it must be thread-safe and must not throw.
//
// Sinks: set_sink() installs one (nullptr removes it). Without one, the first use looks, once at
// load time, for a C function `toru_events_sink` (the events_sink_fn signature) in the process —
// libtoru_tune_pmpi.so exports it — so an application merely run under LD_PRELOAD=libtoru_tune_pmpi.so has
// toru's events recorded without linking anything.
//
// Names and details must be string literals (or otherwise live for the whole run): sinks keep the
// pointers. Convention: "<module>.<phase>[.<sub-phase>]", e.g. "comm.alltoall", "fft.transpose",
// "fft.local_fft", "train.bucket", "swap.copy". Events toru emits today:
//   comm.alltoall         scope  bytes sent by this rank; detail = algorithm; value = T_min (s) of the
//                                exchange on the communicator's torus model (0 when unknown)
//   comm.alltoall.hook    scope  the caller's per-chunk work (overlap); value = chunk index
//   comm.alltoall.a_post, .a_done, .b_post, .b_done
//                         marks  the indirect algorithm's chunk (value) posts / completes its phase A
//                                (plane) or B (line); b_done on the phase-B thread when there is one
//   fft.execute           scope  one 3D transform; detail = "forward" or "backward"
//   fft.local_fft         scope  a batched local FFT stage
//   fft.transpose         scope  a transpose stage (pack, exchange, unpack + overlapped FFTs); bytes
//   train.bucket          mark   a gradient bucket's reduction starts; bytes; value = bucket index;
//                                detail = "ordered", "mpi" or "nccl"
//   train.comm_wait       scope  the data-parallel step waiting for gradient communication
#pragma once

#include <atomic>
#include <cstdint>

namespace toru::events {

enum class kind : int { begin = 0, end = 1, mark = 2 };

/// kind as int (events::kind), name and detail string literals, bytes, a free value (seconds, index).
using sink_fn = void (*)(int kind, const char* name, const char* detail, std::uint64_t bytes, double value) noexcept;

namespace detail {
extern std::atomic<sink_fn> sink;
}

/// Installs `fn` as the sink (nullptr: none). Thread-safe; events in flight on other threads may
/// still reach the previous sink.
void set_sink(sink_fn fn) noexcept;
/// The current sink, or nullptr.
inline sink_fn current_sink() noexcept { return detail::sink.load(std::memory_order_relaxed); }
/// Whether a sink is installed (cheap: for skipping work that only feeds events).
inline bool enabled() noexcept { return current_sink() != nullptr; }

inline void emit(kind k, const char* name, std::uint64_t bytes = 0, const char* detail = "",
                 double value = 0) noexcept {
  if (sink_fn s = current_sink()) s(static_cast<int>(k), name, detail, bytes, value);
}
inline void mark(const char* name, std::uint64_t bytes = 0, const char* detail = "", double value = 0) noexcept {
  emit(kind::mark, name, bytes, detail, value);
}

/// begin at construction, end at destruction (to the sink present at construction).
class scope {
 public:
  explicit scope(const char* name, std::uint64_t bytes = 0, const char* detail = "", double value = 0) noexcept
      : sink_(current_sink()), name_(name) {
    if (sink_) sink_(static_cast<int>(kind::begin), name, detail, bytes, value);
  }
  ~scope() {
    if (sink_) sink_(static_cast<int>(kind::end), name_, "", 0, 0);
  }
  scope(const scope&) = delete;
  scope& operator=(const scope&) = delete;

 private:
  sink_fn sink_;
  const char* name_;
};

}  // namespace toru::events
