// The shared state behind toru::comm::communicator.
#pragma once

#include <mpi.h>

#include <memory>
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

  bool spans_nodes = false;              // ranks on more than one shared-memory node
  std::unique_ptr<phase_worker> worker;  // phase-B thread; null when not threaded

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
