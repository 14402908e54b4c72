// SPDX-License-Identifier: BSD-3-Clause
#include "toru/train/emulated_device.hpp"

#include <cstring>

#include "toru/core/error.hpp"

namespace toru::train {

void event::wait() const {
  std::unique_lock lock(mutex_);
  cv_.wait(lock, [&] { return done_; });
}

bool event::done() const {
  std::lock_guard lock(mutex_);
  return done_;
}

double event::start() const {
  std::lock_guard lock(mutex_);
  return start_;
}

double event::end() const {
  std::lock_guard lock(mutex_);
  return end_;
}

void event::complete(double start, double end) {
  {
    std::lock_guard lock(mutex_);
    done_ = true;
    start_ = start;
    end_ = end;
  }
  cv_.notify_all();
}

copy_engine::copy_engine(const link_spec& link, clock::time_point epoch) : link_(link), epoch_(epoch) {
  if (!(link.bandwidth > 0) || !(link.latency >= 0))
    throw error(errc::invalid_argument, "copy_engine: expected bandwidth > 0 and latency >= 0");
  thread_ = std::thread([this] { serve(); });
}

copy_engine::~copy_engine() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void copy_engine::set_epoch(clock::time_point epoch) {
  std::lock_guard lock(mutex_);
  epoch_ = epoch;
}

event_ptr copy_engine::enqueue(void* dst, const void* src, std::size_t bytes, std::vector<event_ptr> after) {
  auto done = std::make_shared<event>();
  {
    std::lock_guard lock(mutex_);
    queue_.push_back({dst, src, bytes, std::move(after), done});
    last_ = done;
  }
  cv_.notify_all();
  return done;
}

void copy_engine::synchronize() {
  event_ptr last;
  {
    std::lock_guard lock(mutex_);
    last = last_;
  }
  if (last) last->wait();
}

void copy_engine::serve() {
  for (;;) {
    task t;
    clock::time_point epoch;
    {
      std::unique_lock lock(mutex_);
      cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping with nothing left
      t = std::move(queue_.front());
      queue_.pop_front();
      epoch = epoch_;
    }
    for (const auto& e : t.after)
      if (e) e->wait();
    const auto t0 = clock::now();
    if (t.bytes > 0) std::memcpy(t.dst, t.src, t.bytes);
    const auto until = t0 + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(
                                link_.latency + static_cast<double>(t.bytes) / link_.bandwidth));
    std::this_thread::sleep_until(until);
    const auto t1 = std::max(clock::now(), until);
    auto secs = [&](clock::time_point p) { return std::chrono::duration<double>(p - epoch).count(); };
    t.done->complete(secs(t0), secs(t1));
  }
}

}  // namespace toru::train
