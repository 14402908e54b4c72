// SPDX-License-Identifier: BSD-3-Clause
// A persistent collective (MPI-4: MPI_Alltoall_init, then MPI_Start / MPI_Wait as often as needed):
// a plan's *_init call checks its arguments collectively once and binds them; start() then begins
// the bound call with no argument checks and no communication beyond the call's own, and wait()
// completes it. For a solver that repeats one transform or exchange on the same buffers every step.
//
//   toru::request fwd = plan.forward_init(a.data(), b.data());   // collective: checked here, once
//   for (int step = 0; step < steps; ++step) {
//     fwd.start();          // collective, no checks
//     compute_something_else();
//     fwd.wait();           // b holds the transform; rethrows its error if it failed
//   }
//
// Between start() and wait() the caller touches neither bound buffer and runs nothing else on the
// plan (nor on another plan over its communicator); it calls MPI itself only under
// MPI_THREAD_MULTIPLE. The call runs on a thread of its own where MPI allows it
// (MPI_THREAD_SERIALIZED or more); below that start() runs it inline, correct but not overlapped.
// The plan must outlive its requests. A request is not thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <string>

namespace toru {

namespace detail {
class split_phase;
}

class request {
 public:
  /// An empty request (bound to nothing): start() and wait() throw errc::invalid_argument.
  request() noexcept;
  /// For plans: `what` names the call in error messages; `work` runs the bound call.
  request(std::string what, std::function<void()> work);
  /// Waits for a call in flight (its error, if any, is dropped: a destructor cannot throw).
  ~request();
  request(request&&) noexcept;
  request& operator=(request&&) noexcept;

  /// Collective: begins the bound call and returns. A second start() before wait() is
  /// errc::invalid_argument, thrown on the rank that makes it before anything runs.
  void start();
  /// Returns when the call is done; rethrows its error. Without a start(): errc::invalid_argument.
  void wait();
  /// start() followed by wait().
  void run();

  /// Bound to a call (made by a plan's *_init).
  explicit operator bool() const noexcept { return static_cast<bool>(work_); }
  /// Started and not yet completed by wait().
  bool active() const noexcept;

 private:
  std::string what_;
  std::function<void()> work_;
  std::unique_ptr<detail::split_phase> phase_;
};

}  // namespace toru
