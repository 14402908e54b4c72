// SPDX-License-Identifier: BSD-3-Clause
#include "toru/stream/frame_queue.hpp"

#include <algorithm>
#include <chrono>

#include "toru/core/error.hpp"

namespace toru::stream {

namespace {
using clock_type = std::chrono::steady_clock;
constexpr auto wait_slice = std::chrono::milliseconds(20);  // the producer's block wait
constexpr auto poll_slice = std::chrono::milliseconds(5);   // the consumer's: its added latency
}  // namespace

frame_queue::frame_queue(std::size_t slots, std::size_t slot_bytes, full_policy policy, double block_timeout_s)
    : nslots_(slots), slot_bytes_(slot_bytes), policy_(policy), block_timeout_s_(block_timeout_s) {
  expect(slots >= 1 && slots <= 1024, "queue slots", "1 to 1024", std::to_string(slots));
  expect(block_timeout_s >= 0 && block_timeout_s <= 3600, "block timeout", "0 to 3600 s",
         std::to_string(block_timeout_s));
  slots_ = std::make_unique<slot[]>(slots);
  for (std::size_t i = 0; i < nslots_; ++i) {
    auto& s = slots_[i];
    s.data.resize(slot_bytes);
    s.name.reserve(256);
    s.shape.reserve(8);
    s.origin.reserve(8);
    s.global_shape.reserve(8);
  }
}

std::size_t frame_queue::claim(int from) {
  for (std::size_t i = 0; i < nslots_; ++i) {
    int expected = from;
    if (slots_[i].st.load(std::memory_order_relaxed) == from &&
        slots_[i].st.compare_exchange_strong(expected, filling, std::memory_order_acquire))
      return i;
  }
  return nslots_;
}

// The oldest ready slot moved to `to`. The other side may take a slot between the scan and the
// swap; then the scan starts over (each retry means a slot changed hands, so it ends).
std::size_t frame_queue::claim_oldest_ready(int to) {
  while (true) {
    std::size_t pick = nslots_;
    std::uint64_t oldest = UINT64_MAX;
    for (std::size_t i = 0; i < nslots_; ++i)
      if (slots_[i].st.load(std::memory_order_acquire) == ready) {
        const auto o = slots_[i].order.load(std::memory_order_relaxed);
        if (o < oldest) oldest = o, pick = i;
      }
    if (pick == nslots_) return pick;
    int expected = ready;
    if (slots_[pick].st.compare_exchange_strong(expected, to, std::memory_order_acquire)) return pick;
  }
}

push_result frame_queue::push(const frame_view& f) {
  offered_.fetch_add(1, std::memory_order_relaxed);
  if (f.data.size() > slot_bytes_) {
    refused_.fetch_add(1, std::memory_order_relaxed);
    return push_result::refused_oversize;
  }
  push_result result = push_result::queued;
  std::size_t pick = claim(free);
  if (pick == nslots_ && policy_ == full_policy::block) {
    // Waits for the encoder/recorder only (viewers read the log it fills and never hold a slot).
    // While stuck (the last wait timed out and nothing was freed since), drop at once rather
    // than costing the simulation another timeout per frame.
    if (!stuck_ && !closed_) {
      const auto t0 = clock_type::now();
      const auto until =
          t0 + std::chrono::duration_cast<clock_type::duration>(std::chrono::duration<double>(block_timeout_s_));
      blocked_.fetch_add(1, std::memory_order_relaxed);
      producer_waiting_ = true;
      while ((pick = claim(free)) == nslots_ && !closed_) {
        const auto now = clock_type::now();
        if (now >= until) break;
        std::unique_lock lock(freed_m_);
        freed_.wait_for(lock, std::min<clock_type::duration>(until - now, wait_slice));
      }
      producer_waiting_ = false;
      blocked_s_.store(blocked_s_.load() + std::chrono::duration<double>(clock_type::now() - t0).count());
    }
    if (pick == nslots_) {
      stuck_ = true;
      dropped_.fetch_add(1, std::memory_order_relaxed);
      block_timeouts_.fetch_add(1, std::memory_order_relaxed);
      return push_result::dropped;
    }
  }
  if (pick == nslots_) {
    if (policy_ == full_policy::drop_newest) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return push_result::dropped;
    }
    // latest_wins: steal the oldest frame the consumer has not taken yet. The consumer may free
    // a slot and take the frame meant for stealing meanwhile: then a free slot is there instead.
    while (true) {
      if ((pick = claim_oldest_ready(filling)) != nslots_) {
        dropped_.fetch_add(1, std::memory_order_relaxed);
        result = push_result::replaced_oldest;
        break;
      }
      if ((pick = claim(free)) != nslots_) break;
      // The consumer holds one slot at a time: with two or more, one is free or ready at every
      // instant and the loop ends; with one, the consumer may hold it.
      if (nslots_ == 1 && size() == 0) {
        dropped_.fetch_add(1, std::memory_order_relaxed);
        return push_result::dropped;
      }
    }
  }
  slot& s = slots_[pick];
  // A frame without data has null data(), which memcpy does not allow even for 0 bytes.
  std::copy_n(f.data.data(), f.data.size(), s.data.data());
  s.name.assign(f.name.substr(0, 256));
  s.shape.assign(f.shape.begin(), f.shape.end());
  s.origin.assign(f.origin.begin(), f.origin.end());
  s.global_shape.assign(f.global_shape.begin(), f.global_shape.end());
  s.meta = f;
  s.order.store(next_order_++, std::memory_order_relaxed);
  s.st.store(ready, std::memory_order_release);
  queued_.fetch_add(1, std::memory_order_relaxed);
  // No wake-up: the consumer polls (take() waits in slices of poll_slice). Waking it from here
  // was most of publish()'s time on a node whose cores all run ranks: the kernel runs the woken
  // encoder on the caller's core, and the rank waits for its turn again (toru-dns 64^3, 2 ranks,
  // load 8: 6.5 ms of queue time per step with the wake-up, 0.02 ms without;
  // docs/history/benchmarks-2026-12.md#stream).
  return result;
}

std::optional<frame_queue::item> frame_queue::take(int timeout_ms) {
  const auto until = clock_type::now() + std::chrono::milliseconds(timeout_ms);
  std::size_t pick;
  while ((pick = claim_oldest_ready(taken)) == nslots_) {
    const auto now = clock_type::now();
    if (closed_ || now >= until) return std::nullopt;
    std::unique_lock lock(m_);
    if (!closed_) cv_.wait_for(lock, std::min<clock_type::duration>(until - now, poll_slice));  // close() wakes it
  }
  taken_.fetch_add(1, std::memory_order_relaxed);
  slot& s = slots_[pick];
  frame_view v = s.meta;
  v.name = s.name;
  v.shape = s.shape;
  v.origin = s.origin;
  v.global_shape = s.global_shape;
  v.data = std::span<const std::byte>(s.data.data(), s.meta.data.size());
  return item{pick, std::move(v)};
}

void frame_queue::done(const item& it) {
  slots_[it.slot].st.store(free, std::memory_order_release);
  stuck_ = false;
  if (producer_waiting_) freed_.notify_one();
}

void frame_queue::close() {
  {
    std::lock_guard lock(m_);  // so a take() between its check and its wait cannot miss it
    closed_ = true;
  }
  cv_.notify_all();
  freed_.notify_all();
}

queue_counters frame_queue::counters() const {
  queue_counters c;
  c.offered = offered_.load(), c.queued = queued_.load(), c.dropped = dropped_.load(), c.refused = refused_.load();
  c.taken = taken_.load(), c.blocked = blocked_.load(), c.block_timeouts = block_timeouts_.load();
  c.blocked_s = blocked_s_.load();
  return c;
}

std::size_t frame_queue::size() const {
  std::size_t n = 0;
  for (std::size_t i = 0; i < nslots_; ++i) n += slots_[i].st.load() == ready;
  return n;
}

}  // namespace toru::stream
