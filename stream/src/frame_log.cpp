// SPDX-License-Identifier: BSD-3-Clause
#include "toru/stream/frame_log.hpp"

#include <algorithm>

#include "toru/core/error.hpp"
#include "toru/stream/server.hpp"

namespace toru::stream {

void detail::throw_io_error(const std::string& message) { throw error(errc::io, message); }

frame_log::frame_log(std::size_t cache_frames, segment_store* store)
    : cache_frames_(std::max<std::size_t>(1, cache_frames)), store_(store) {
  if (store_) cache_first_ = end_ = store_->size();
}

void frame_log::add(std::uint64_t seq, std::int64_t step, message_ptr msg) {
  std::lock_guard lock(m_);
  if (seq != end_) {  // a gap (cannot happen with consecutive seqs): restart the cache there
    cache_.clear();
    steps_.clear();
    cache_first_ = seq;
  }
  cache_.push_back(std::move(msg));
  steps_.push_back(step);
  end_ = seq + 1;
  while (cache_.size() > cache_frames_) cache_.pop_front(), steps_.pop_front(), ++cache_first_;
}

bool frame_log::refresh() {
  if (!store_) return false;
  store_->refresh();
  std::lock_guard lock(m_);
  const auto n = store_->size();
  const bool grew = n > end_;
  end_ = n;
  cache_first_ = std::max(cache_first_, end_ > cache_frames_ ? end_ - cache_frames_ : 0);
  cache_.clear();
  steps_.clear();
  cache_first_ = end_;
  return grew;
}

message_ptr frame_log::get(std::uint64_t seq) const {
  {
    std::lock_guard lock(m_);
    if (seq >= end_) return nullptr;
    if (seq >= cache_first_) return cache_[seq - cache_first_];
  }
  if (!store_) return nullptr;
  auto m = store_->get(seq);
  return m ? std::make_shared<const std::string>(std::move(*m)) : nullptr;
}

std::uint64_t frame_log::first() const {
  std::lock_guard lock(m_);
  return store_ ? 0 : cache_first_;
}

std::uint64_t frame_log::end() const {
  std::lock_guard lock(m_);
  return end_;
}

std::int64_t frame_log::step_of(std::uint64_t seq) const {
  {
    std::lock_guard lock(m_);
    if (seq >= cache_first_ && seq < end_) return steps_[seq - cache_first_];
  }
  if (store_)
    if (auto i = store_->info(seq)) return i->step;
  return INT64_MIN;
}

std::uint64_t frame_log::first_at_step(std::int64_t step, std::uint64_t from) const {
  std::unique_lock lock(m_);
  if (from >= cache_first_ || !store_) {
    auto lo = std::max(from, cache_first_);
    for (std::uint64_t q = lo; q < end_; ++q)
      if (steps_[q - cache_first_] >= step) return q;
    return end_;
  }
  const auto e = end_;
  lock.unlock();
  return std::min(e, store_->first_at_step(step, from));
}

}  // namespace toru::stream
