// SPDX-License-Identifier: BSD-3-Clause
// toru::comm::communicator — an MPI communicator together with its torus model, rank mapping,
// the line/plane sub-communicators of the indirect all-to-all, and a communication thread.
//
//   MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);   // the caller's job
//   toru::comm::communicator comm(MPI_COMM_WORLD, {.torus = "2x2x4"});
//   toru::comm::alltoall_plan plan(comm, n, MPI_DOUBLE);
//
// Never calls MPI_Init. Copies share one state (a cheap handle); the sub-communicators and the thread
// (if a plan started one) are released when the last copy (including those held by plans) goes away, which must happen
// before MPI_Finalize.
#pragma once

#include <mpi.h>

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "toru/topology/cart.hpp"
#include "toru/topology/mapping.hpp"
#include "toru/topology/torus.hpp"

namespace toru::comm {

/// Every field must be equal on all ranks (agreed collectively: errc::mismatch naming the field otherwise).
struct communicator_options {
  /// Torus spec of THIS communicator as toru::topology::torus::parse takes it ("16x16x32", with
  /// per-axis bandwidth and latency where known); its size must be the communicator's. Empty: the
  /// torus is inherited, from the parent communicator (the constructor with a parent) or else from the
  /// environment variable TORU_TORUS, which describes MPI_COMM_WORLD (rank r on node r): a communicator
  /// whose ranks occupy a sub-torus of it (all of it, a line, a plane, ...) gets that sub-torus
  /// (topology::sub_mapping); one that occupies none, or with nothing to inherit, gets a model derived
  /// from the communicator (nodes x ranks per node), which makes the indirect algorithm node-aware
  /// aggregation.
  std::string torus{};
  /// Rank order for the mapping, as toru::topology::mapping::from_order takes it (e.g. "XYZ");
  /// empty: rank r has the coordinates of node r (axis 0 fastest) of the given torus, or the
  /// coordinates its ranks have in the inherited one.
  std::string order{};
  /// Communication threads for the pipelined all-to-all (0 or 1). With 1, phase B of the indirect
  /// algorithm runs on its own thread, started by the first plan that has a phase A to overlap it
  /// with (none is started for plans that do not). It needs MPI_THREAD_MULTIPLE; otherwise rank 0
  /// logs once, when a plan would have used it, and one thread drives nonblocking operations instead.
  int threads = 1;
  /// Bind the communication thread with hwloc inside the rank's current CPU binding (mpirun's
  /// --bind-to, taskset, cgroups): the ranks of a node bound to the same CPU set split its cores in
  /// equal slices, and the thread takes the last core of its rank's slice. Left with the rank's
  /// binding when the set has fewer than two cores per rank (--bind-to core).
  bool bind_threads = true;
};

namespace detail {
struct comm_state;
struct comm_access;
}  // namespace detail

class communicator {
 public:
  /// Collective over `comm`. Duplicates `comm` (toru's traffic never matches the caller's), builds the
  /// mapping and the sub-communicators. Throws toru::error on every rank when the torus does not match
  /// the communicator size or the options are malformed.
  /// Refuses MPI_COMM_NULL and intercommunicators (errc::invalid_argument); every option and TORU_TORUS
  /// (when consulted) must agree across ranks (errc::mismatch).
  explicit communicator(MPI_Comm comm, communicator_options opts = {});
  /// Collective over `comm`, whose ranks are ranks of `parent` (split from it, for example): with an
  /// empty opts.torus, the torus is the sub-torus comm's ranks occupy on parent's described torus (the
  /// ranks of one pencil row on a line of it), or derived when they occupy none or parent's torus was
  /// derived itself. TORU_TORUS is not consulted.
  communicator(MPI_Comm comm, const communicator& parent, communicator_options opts = {});

  /// The duplicated communicator toru communicates on (same ranks, same order as the one given).
  MPI_Comm mpi() const;
  int rank() const;
  int size() const;

  /// The torus model, the rank mapping and the Cartesian view (line/plane sub-communicators).
  const topology::torus& torus() const;
  const topology::mapping& mapping() const;
  const topology::cart& cart() const;
  /// Whether the torus was described (options, a parent's described torus, or TORU_TORUS) rather than derived.
  bool torus_given() const;
  /// The bottleneck axis (topology::torus::longest_axis: largest effective extent / bandwidth).
  /// Phase B of the indirect algorithm runs along it.
  int bottleneck_axis() const;
  /// This rank's coordinates on the torus.
  std::span<const int> coords() const;
  /// Ranks differing from this one only on the bottleneck axis (phase B), ordered by that coordinate.
  MPI_Comm line() const;
  /// Ranks sharing this rank's coordinate on the bottleneck axis (phase A), ordered by the others.
  MPI_Comm plane() const;
  /// Whether phase B may run on its own thread (MPI_THREAD_MULTIPLE and threads == 1); the thread
  /// itself starts with the first plan that uses it.
  bool threaded() const;

 private:
  friend struct detail::comm_access;  // comm's sources reach the state through comm_access
  communicator(MPI_Comm comm, const communicator* parent, communicator_options opts);
  std::shared_ptr<detail::comm_state> state_;
};

}  // namespace toru::comm
