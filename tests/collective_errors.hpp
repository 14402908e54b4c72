// SPDX-License-Identifier: BSD-3-Clause
// Shared by the collective-error harnesses (tests/comm and tests/fft): a watchdog that turns a hang
// into a named failure and an exit, and one outcome type for C result codes and C++ exceptions.
#pragma once

#include <mpi.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "mpi_test.hpp"
#include "toru/core.h"
#include "toru/core/error.hpp"

namespace toru::test {

/// The watchdog's limit: 60 s, or TORU_TEST_WATCHDOG_S. Generous: every case takes milliseconds on
/// an oversubscribed machine; only a hang (or minutes of validation) trips it.
inline std::chrono::seconds watchdog_limit() {
  const char* env = std::getenv("TORU_TEST_WATCHDOG_S");
  return std::chrono::seconds(env && std::atoi(env) > 0 ? std::atoi(env) : 60);
}

/// Ends the whole job, naming the case, if the guarded scope does not end within the limit. Not
/// MPI_Abort: it can wait for the MPI progress lock that the hung call holds; a rank that exits
/// without MPI_Finalize makes mpiexec end the job.
class watchdog {
 public:
  explicit watchdog(std::string what, std::chrono::seconds limit = watchdog_limit())
      : what_(std::move(what)), thread_([this, limit] {
          std::unique_lock lock(m_);
          if (cv_.wait_for(lock, limit, [this] { return done_; })) return;
          std::fprintf(stderr,
                       "[rank %d] WATCHDOG: '%s' did not return within %lld s (a hang: some rank is left "
                       "waiting in a collective). Ending the job.\n",
                       rank(), what_.c_str(), static_cast<long long>(limit.count()));
          std::fflush(stderr);
          std::_Exit(124);
        }) {}
  ~watchdog() {
    {
      std::lock_guard lock(m_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  watchdog(const watchdog&) = delete;
  watchdog& operator=(const watchdog&) = delete;

 private:
  std::string what_;
  std::mutex m_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

/// What a call returned on this rank: a toru_result / toru::errc value (0 = success) and the message.
struct outcome {
  int code = 0;
  std::string message;
};

inline outcome from_c(toru_result r) { return {static_cast<int>(r), r == TORU_SUCCESS ? "" : toru_last_error()}; }

template <class F>
outcome from_cpp(F&& f) {
  try {
    f();
  } catch (const toru::error& e) {
    return {static_cast<int>(e.code()), e.what()};
  }
  return {};
}

}  // namespace toru::test
