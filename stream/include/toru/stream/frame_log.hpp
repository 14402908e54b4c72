// SPDX-License-Identifier: BSD-3-Clause
// The frames a server can send: the newest `cache_frames` messages in memory, and, when a
// recording is attached, every frame ever recorded (read back from the segment store). It is the
// frame_index the flow controllers consult.
//
// Thread safety: add() from one thread (the publisher's encoder, or a tailing reader); get() and
// the index from any thread.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "toru/stream/flow_control.hpp"
#include "toru/stream/segment_store.hpp"

namespace toru::stream {

using message_ptr = std::shared_ptr<const std::string>;

class frame_log : public frame_index {
 public:
  /// store may be null (live only: frames older than the cache are gone).
  frame_log(std::size_t cache_frames, segment_store* store);

  /// Adds message seq (seqs are consecutive; with a store, the seq the store gave it).
  void add(std::uint64_t seq, std::int64_t step, message_ptr msg);
  /// Read-only recordings: picks up what the writer appended. Returns true if anything is new.
  bool refresh();
  message_ptr get(std::uint64_t seq) const;

  std::uint64_t first() const override;
  std::uint64_t end() const override;
  std::int64_t step_of(std::uint64_t seq) const override;
  std::uint64_t first_at_step(std::int64_t step, std::uint64_t from) const override;

 private:
  mutable std::mutex m_;
  std::size_t cache_frames_;
  segment_store* store_;
  std::uint64_t cache_first_ = 0, end_ = 0;
  std::deque<message_ptr> cache_;
  std::deque<std::int64_t> steps_;  // live only (no store): steps of the cached frames
};

}  // namespace toru::stream
