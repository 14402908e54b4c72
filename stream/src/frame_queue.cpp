#include "toru/stream/frame_queue.hpp"

#include <chrono>
#include <cstring>

#include "toru/core/error.hpp"

namespace toru::stream {

frame_queue::frame_queue(std::size_t slots, std::size_t slot_bytes, full_policy policy, double block_timeout_s)
    : slots_(slots), slot_bytes_(slot_bytes), policy_(policy), block_timeout_s_(block_timeout_s) {
  expect(slots >= 1 && slots <= 1024, "queue slots", "1 to 1024", std::to_string(slots));
  expect(block_timeout_s >= 0 && block_timeout_s <= 3600, "block timeout", "0 to 3600 s",
         std::to_string(block_timeout_s));
  for (auto& s : slots_) {
    s.data.resize(slot_bytes);
    s.name.reserve(256);
    s.shape.reserve(8);
    s.origin.reserve(8);
    s.global_shape.reserve(8);
  }
}

push_result frame_queue::push(const frame_view& f) {
  std::size_t pick = slots_.size();
  push_result result = push_result::queued;
  {
    std::unique_lock lock(m_);
    ++c_.offered;
    if (f.data.size() > slot_bytes_) {
      ++c_.refused;
      return push_result::refused_oversize;
    }
    auto find_free = [&] {
      for (std::size_t i = 0; i < slots_.size(); ++i)
        if (slots_[i].st == state::free) return pick = i, true;
      return false;
    };
    find_free();
    if (pick == slots_.size() && policy_ == full_policy::block) {
      // Waits for the encoder/recorder only (viewers read the log it fills and never hold a slot).
      // While stuck (the last wait timed out and nothing was freed since), drop at once rather
      // than costing the simulation another timeout per frame.
      bool got = false;
      if (!stuck_ && !closed_) {
        const auto t0 = std::chrono::steady_clock::now();
        got = freed_.wait_for(lock, std::chrono::duration<double>(block_timeout_s_), [&] {
          return find_free() || closed_;
        }) && pick != slots_.size();
        ++c_.blocked;
        c_.blocked_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      }
      if (!got) {
        stuck_ = true;
        ++c_.dropped;
        ++c_.block_timeouts;
        return push_result::dropped;
      }
    }
    if (pick == slots_.size()) {
      if (policy_ == full_policy::drop_newest) {
        ++c_.dropped;
        return push_result::dropped;
      }
      // latest_wins: steal the oldest frame the consumer has not taken yet.
      std::uint64_t oldest = UINT64_MAX;
      for (std::size_t i = 0; i < slots_.size(); ++i)
        if (slots_[i].st == state::ready && slots_[i].order < oldest) oldest = slots_[i].order, pick = i;
      if (pick == slots_.size()) {  // one slot, and the consumer holds it
        ++c_.dropped;
        return push_result::dropped;
      }
      ++c_.dropped;
      result = push_result::replaced_oldest;
    }
    slots_[pick].st = state::filling;
  }
  // The copy runs outside the lock: the consumer never waits for it, and it never waits for the consumer.
  slot& s = slots_[pick];
  std::memcpy(s.data.data(), f.data.data(), f.data.size());
  s.name.assign(f.name.substr(0, 256));
  s.shape.assign(f.shape.begin(), f.shape.end());
  s.origin.assign(f.origin.begin(), f.origin.end());
  s.global_shape.assign(f.global_shape.begin(), f.global_shape.end());
  s.meta = f;
  {
    std::lock_guard lock(m_);
    s.order = next_order_++;
    s.st = state::ready;
    ++c_.queued;
  }
  cv_.notify_one();
  return result;
}

std::optional<frame_queue::item> frame_queue::take(int timeout_ms) {
  std::unique_lock lock(m_);
  std::size_t pick = slots_.size();
  auto find = [&] {
    std::uint64_t oldest = UINT64_MAX;
    pick = slots_.size();
    for (std::size_t i = 0; i < slots_.size(); ++i)
      if (slots_[i].st == state::ready && slots_[i].order < oldest) oldest = slots_[i].order, pick = i;
    return pick != slots_.size() || closed_;
  };
  cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms), find);
  if (pick == slots_.size()) return std::nullopt;
  slot& s = slots_[pick];
  s.st = state::taken;
  ++c_.taken;
  frame_view v = s.meta;
  v.name = s.name;
  v.shape = s.shape;
  v.origin = s.origin;
  v.global_shape = s.global_shape;
  v.data = std::span<const std::byte>(s.data.data(), s.meta.data.size());
  return item{pick, std::move(v)};
}

void frame_queue::done(const item& it) {
  {
    std::lock_guard lock(m_);
    slots_[it.slot].st = state::free;
    stuck_ = false;
  }
  freed_.notify_one();
}

void frame_queue::close() {
  {
    std::lock_guard lock(m_);
    closed_ = true;
  }
  cv_.notify_all();
  freed_.notify_all();
}

queue_counters frame_queue::counters() const {
  std::lock_guard lock(m_);
  return c_;
}

std::size_t frame_queue::size() const {
  std::lock_guard lock(m_);
  std::size_t n = 0;
  for (const auto& s : slots_) n += s.st == state::ready;
  return n;
}

}  // namespace toru::stream
