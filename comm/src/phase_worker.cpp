// SPDX-License-Identifier: BSD-3-Clause
#include "phase_worker.hpp"

#include <utility>

namespace toru::comm::detail {

phase_worker::phase_worker(std::function<void()> setup) {
  thread_ = std::thread([this, setup = std::move(setup)] {
    if (setup) setup();
    loop();
  });
}

phase_worker::~phase_worker() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void phase_worker::submit(std::function<void()> task) {
  {
    std::lock_guard lock(mutex_);
    tasks_.push_back(std::move(task));
  }
  wake_.notify_one();
}

void phase_worker::loop() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stop_ || !tasks_.empty(); });
      if (tasks_.empty()) return;  // stop_ and drained
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
  }
}

}  // namespace toru::comm::detail
