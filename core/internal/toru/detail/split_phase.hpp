// SPDX-License-Identifier: BSD-3-Clause
// The split-phase form of a blocking toru collective (MPI-4's MPI_Start / MPI_Wait on a persistent
// collective): start() runs the call on a thread of its own, so the caller computes while it is in
// flight, and wait() returns when it is done, with its error if it failed. MPI must allow a thread
// other than the caller's to call it (MPI_THREAD_SERIALIZED, or MULTIPLE if the caller calls MPI
// itself before wait()); below that the call runs inline in start(), correct but not overlapped.
#pragma once

#include <mpi.h>

#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include "toru/core/error.hpp"

namespace toru::detail {

class split_phase {
 public:
  split_phase() = default;
  split_phase(const split_phase&) = delete;
  split_phase& operator=(const split_phase&) = delete;
  // A plan destroyed with a call in flight waits for it (its error is dropped: a destructor cannot throw).
  ~split_phase() {
    if (thread_.joinable()) thread_.join();
  }

  /// Starts work. A second start before wait() is errc::invalid_argument (on every rank that makes
  /// it, before anything runs); `what` names the call in that message.
  void start(std::string_view what, std::function<void()> work) {
    if (started_)
      throw error(errc::invalid_argument,
                  std::string(what) + ": start() called again before wait() completed the previous start()");
    error_ = nullptr;
    int provided = MPI_THREAD_SINGLE;
    MPI_Query_thread(&provided);
    auto run = [this, work = std::move(work)] {
      try {
        work();
      } catch (...) {
        error_ = std::current_exception();
      }
    };
    if (provided >= MPI_THREAD_SERIALIZED)
      thread_ = std::thread(std::move(run));
    else
      run();
    started_ = true;
  }

  /// Returns when the started work is done; rethrows its error. Without a start: errc::invalid_argument.
  void wait(std::string_view what) {
    if (!started_) throw error(errc::invalid_argument, std::string(what) + ": wait() without a start()");
    if (thread_.joinable()) thread_.join();
    started_ = false;
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  }

  bool in_flight() const { return started_; }

 private:
  std::thread thread_;
  std::exception_ptr error_;
  bool started_ = false;
};

/// For a plan's lazily created split_phase: start on it (creating it), wait on it (none: an error).
inline void start_split_phase(std::unique_ptr<split_phase>& p, std::string_view what, std::function<void()> work) {
  if (!p) p = std::make_unique<split_phase>();
  p->start(what, std::move(work));
}
inline void wait_split_phase(const std::unique_ptr<split_phase>& p, std::string_view what) {
  if (!p) throw error(errc::invalid_argument, std::string(what) + ": wait() without a start()");
  p->wait(what);
}

}  // namespace toru::detail
