// SPDX-License-Identifier: BSD-3-Clause
// A communication thread that runs submitted tasks in order (phase B of the indirect all-to-all).
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace toru::comm::detail {

class phase_worker {
 public:
  /// Starts the thread, which runs `setup` (e.g. its CPU binding; must not throw) before any task.
  explicit phase_worker(std::function<void()> setup);
  ~phase_worker();
  phase_worker(const phase_worker&) = delete;
  phase_worker& operator=(const phase_worker&) = delete;

  /// Queues a task; tasks run one at a time in submission order. A task must not throw (wrap it).
  void submit(std::function<void()> task);

 private:
  void loop();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> tasks_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace toru::comm::detail
