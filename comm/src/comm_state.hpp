// SPDX-License-Identifier: BSD-3-Clause
// The shared state behind toru::comm::communicator.
#pragma once

#include <mpi.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "phase_worker.hpp"
#include "toru/comm/communicator.hpp"

namespace toru::comm::detail {

struct comm_state {
  std::optional<topology::cart> cart;  // owns the duplicate communicator and the line/plane ones
  MPI_Comm comm = MPI_COMM_NULL;       // cart->comm()
  int rank = 0;
  int size = 1;
  bool torus_given = false;
  int bottleneck = 0;

  // Two-level layout of the indirect algorithm: plane rank p (position in the plane orthogonal to the
  // bottleneck axis) and line rank z (coordinate on the bottleneck axis). Rank (p, z) of one plane
  // and rank (p, z') of another lie on the same line.
  MPI_Comm plane = MPI_COMM_NULL;
  MPI_Comm line = MPI_COMM_NULL;
  int plane_size = 1;          // Q
  int line_size = 1;           // Z
  std::vector<int> global_of;  // [p * Z + z] -> rank in comm

  bool spans_nodes = false;  // ranks on more than one shared-memory node

  // The phase-B thread starts with the first plan that has phase B to overlap (start_worker), never
  // for communicators whose plans do not: most programs never need it.
  bool may_thread = false;     // threads == 1 and MPI_THREAD_MULTIPLE
  bool thread_wanted = false;  // threads == 1 (whatever MPI provides)
  bool bind_threads = true;    // communicator_options::bind_threads
  int binding_index = 0;       // this rank among the node's ranks bound to the same CPU set
  int binding_sharing = 1;     // how many they are
  /// The thread if it has been started, else null. Safe to call from any thread.
  phase_worker* worker() const;
  /// Called at plan construction by every plan that would use the thread: starts it once (local,
  /// not collective) and returns it, or returns null when the thread cannot run (threads == 0, or
  /// MPI without MPI_THREAD_MULTIPLE, which rank 0 of the communicator reports once per process).
  phase_worker* start_worker() const;

  mutable std::mutex worker_mutex;
  mutable std::unique_ptr<phase_worker> worker_;
  mutable std::atomic<phase_worker*> started_{nullptr};

  comm_state() = default;
  comm_state(const comm_state&) = delete;
  comm_state& operator=(const comm_state&) = delete;
  ~comm_state();
};

/// How comm's own sources reach a communicator's state: the public class keeps it private and
/// befriends this struct, which only this uninstalled header defines.
struct comm_access {
  static const comm_state& state(const communicator& c) { return *c.state_; }
};

}  // namespace toru::comm::detail
