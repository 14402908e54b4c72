// SPDX-License-Identifier: BSD-3-Clause
// Open MPI progresses every pending request of the process in whichever thread calls into it: the
// indirect all-to-all's phase worker, testing its phase-B exchange, may copy the caller's phase-A
// send buffer or deliver its receive buffer, and the caller then learns of the completion through
// the library's own atomics, which ThreadSanitizer does not see (Open MPI is not instrumented). So
// under TSan the accesses the library makes on the caller's buffers inside an MPI call are left
// unrecorded (reads and writes only; synchronisation stays visible): toru's own accesses around
// the calls are checked, and the data the calls move is checked by the all-to-all tests against
// MPI_Alltoall. Compiles to nothing without TSan.
#pragma once

#if defined(__SANITIZE_THREAD__)
extern "C" void __tsan_ignore_thread_begin();
extern "C" void __tsan_ignore_thread_end();
#endif

namespace toru::comm::detail {

class mpi_progress_scope {
 public:
  mpi_progress_scope() {
#if defined(__SANITIZE_THREAD__)
    __tsan_ignore_thread_begin();
#endif
  }
  ~mpi_progress_scope() {
#if defined(__SANITIZE_THREAD__)
    __tsan_ignore_thread_end();
#endif
  }
  mpi_progress_scope(const mpi_progress_scope&) = delete;
  mpi_progress_scope& operator=(const mpi_progress_scope&) = delete;
};

}  // namespace toru::comm::detail
