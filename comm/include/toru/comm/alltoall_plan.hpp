// SPDX-License-Identifier: BSD-3-Clause
// Persistent all-to-all plans (in the spirit of MPI_Alltoall_init): equal blocks (alltoall_plan)
// and variable counts (alltoallv_plan), any MPI datatype, in place or out of place.
//
//   toru::comm::communicator comm(MPI_COMM_WORLD, {.torus = "4x4x8"});
//   toru::comm::alltoall_plan plan(comm, 1024, MPI_DOUBLE);   // collective
//   for (...) plan.execute(in.data(), out.data());            // collective, many times
//
// A plan is immutable after construction; execute() is const. Plans on different communicators
// may run concurrently from different threads; executes over one communicator must be issued in
// the same order on every rank and not concurrently (as with any MPI collective on one comm).
#pragma once

#include <mpi.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string_view>

#include "toru/comm/communicator.hpp"
#include "toru/core/request.hpp"

namespace toru::detail {
class split_phase;  // toru/detail/split_phase.hpp (internal)
}

namespace toru::comm {

enum class alltoall_algorithm {
  automatic,  // decision function (or measurement, or wisdom) picks
  direct,     // the MPI library's own MPI_Alltoall / MPI_Alltoallv
  pairwise,   // P-1 MPI_Sendrecv steps to (rank+s) from (rank-s)
  bruck,      // ceil(log2 P) steps, blocks forwarded through intermediate ranks; equal blocks only
  indirect,   // torus two-phase: plane all-to-all (short axes), then line all-to-all (longest axis)
};

/// "automatic", "direct", "pairwise", "bruck", "indirect".
std::string_view to_string(alltoall_algorithm algorithm) noexcept;
/// Inverse of to_string (also accepts "auto"); throws toru::error(invalid_argument) on an unknown name.
alltoall_algorithm algorithm_from_string(std::string_view name);
/// The algorithm a plan built with options.algorithm = `requested` is held to, known before the plan
/// exists: the one TORU_ALLTOALL_ALGORITHM names (it overrides the options, as in the plan
/// constructors), else `requested`; automatic means the plan's decision function (or measurement)
/// chooses. For planners above comm (fft) that must know whether their exchanges are forced, so that
/// comm alone reads its environment. Local, not collective, thread-safe; a malformed variable counts as
/// unset here (the plan constructors refuse it, on every rank).
///
///   if (toru::comm::resolved_algorithm(opts.algorithm) != alltoall_algorithm::automatic) ...  // forced
alltoall_algorithm resolved_algorithm(alltoall_algorithm requested) noexcept;

/// Chunk c covers, in every source's block of n elements, the elements [c*n/nchunks, (c+1)*n/nchunks).
struct chunk_info {
  int chunk;
  int nchunks;
};

/// Called on the thread that called execute, once per chunk, in increasing chunk order, as soon as
/// chunk c has arrived from every source (later chunks may still be in flight). It may read the
/// received elements of chunk c in `out`, and write them; it must not touch other chunks of `out`
/// nor call MPI on the plan's communicator.
using chunk_hook = std::function<void(const chunk_info&)>;

struct alltoall_options {
  alltoall_algorithm algorithm = alltoall_algorithm::automatic;
  int chunks = 0;         // pipeline chunks; 0 = chosen by the model (or measured)
  bool measure = false;   // time the applicable candidates at plan time (collective); uses wisdom if present
  chunk_hook on_chunk{};  // optional
};

namespace detail {
struct plan_impl;
}

/// An all-to-all of `count` elements of `type` between every pair of ranks.
/// Buffers hold size() blocks of `count` elements; block j of `in` goes to rank j and block j of `out`
/// comes from rank j (as MPI_Alltoall with sendcount = recvcount = count).
class alltoall_plan {
 public:
  /// Collective. Validates collectively and throws the same toru::error on every rank otherwise:
  /// count * size(type) (bytes per pair) and the contiguity of type, every option, and the environment variables
  /// TORU_ALLTOALL_ALGORITHM (auto|direct|pairwise|bruck|indirect; overrides options.algorithm) and
  /// TORU_ALLTOALL_CHUNKS (1..4096; used when options.chunks == 0) must agree across ranks
  /// (errc::mismatch naming the first that differs); a malformed variable or option is
  /// errc::invalid_argument naming it; a forced algorithm that cannot run the exchange, unsupported.
  /// Any count: where count * size() exceeds INT_MAX (MPI's counts and offsets are ints), each block
  /// travels as one element of a derived datatype; bruck and indirect, which count bytes in ints,
  /// refuse what does not fit (errc::unsupported), and the automatic choice is then direct.
  alltoall_plan(const communicator& comm, std::size_t count, MPI_Datatype type, alltoall_options opts = {});
  ~alltoall_plan();
  alltoall_plan(alltoall_plan&&) noexcept;
  alltoall_plan& operator=(alltoall_plan&&) noexcept;

  /// Collective. in == out is in place. Allocates the workspace internally (once, kept by the plan).
  /// A rank whose buffers are null while it has data to move throws toru::error(invalid_argument)
  /// after taking part in the exchange with scratch data, so that no peer is left waiting.
  void execute(const void* in, void* out) const;
  /// Same with a caller workspace of at least workspace_size() bytes (may be null when that is 0).
  void execute(const void* in, void* out, void* ws) const;
  /// Split phase (MPI-4 persistent-collective semantics): start() begins execute(in, out, ws) and
  /// returns at once; wait() returns when it is done, throwing its error if it failed. Between the
  /// two the caller computes but touches neither in, out nor ws and runs nothing else on this plan;
  /// it may call MPI itself only under MPI_THREAD_MULTIPLE. A second start() before wait() is
  /// errc::invalid_argument. Below MPI_THREAD_SERIALIZED start() runs the exchange inline.
  /// The chunk hook then runs on the exchange's thread.
  void start(const void* in, void* out, void* ws = nullptr) const;
  void wait() const;
  /// Persistent form (MPI-4's MPI_Alltoall_init; toru/core/request.hpp): binds in, out and ws;
  /// each request::start() begins execute(in, out, ws). Not collective: an exchange checks nothing
  /// collectively per call (a null buffer takes part with scratch data, then throws on its rank).
  /// The plan must outlive the request.
  request init(const void* in, void* out, void* ws = nullptr) const;

  std::size_t workspace_size() const;
  alltoall_algorithm algorithm() const;
  int chunks() const;
  std::size_t count() const;
  const communicator& comm() const;

 private:
  std::unique_ptr<detail::plan_impl> impl_;
  mutable std::unique_ptr<toru::detail::split_phase> phase_;  // declared after impl_: joins first
};

/// An all-to-all with per-pair counts, as MPI_Alltoallv with one datatype. Counts and displacements
/// are in elements of `type`, each span of length comm.size(). send_counts[j] on rank i must equal
/// recv_counts[i] on rank j (checked collectively at construction).
class alltoallv_plan {
 public:
  /// Collective; see alltoall_plan. bruck is not applicable to variable counts.
  alltoallv_plan(const communicator& comm, std::span<const int> send_counts, std::span<const int> send_displs,
                 std::span<const int> recv_counts, std::span<const int> recv_displs, MPI_Datatype type,
                 alltoall_options opts = {});
  ~alltoallv_plan();
  alltoallv_plan(alltoallv_plan&&) noexcept;
  alltoallv_plan& operator=(alltoallv_plan&&) noexcept;

  /// Collective. in == out is in place, which requires send counts/displs equal to recv counts/displs,
  /// and, as MPI_IN_PLACE, every rank with data to move in place or none. A rank that sends and
  /// receives nothing may pass any pointers, null included.
  void execute(const void* in, void* out) const;
  void execute(const void* in, void* out, void* ws) const;
  /// Split phase (MPI-4 persistent-collective semantics): start() begins execute(in, out, ws) and
  /// returns at once; wait() returns when it is done, throwing its error if it failed. Between the
  /// two the caller computes but touches neither in, out nor ws and runs nothing else on this plan;
  /// it may call MPI itself only under MPI_THREAD_MULTIPLE. A second start() before wait() is
  /// errc::invalid_argument. Below MPI_THREAD_SERIALIZED start() runs the exchange inline.
  /// The chunk hook then runs on the exchange's thread.
  void start(const void* in, void* out, void* ws = nullptr) const;
  void wait() const;
  /// Persistent form (MPI-4's MPI_Alltoall_init; toru/core/request.hpp): binds in, out and ws;
  /// each request::start() begins execute(in, out, ws). Not collective: an exchange checks nothing
  /// collectively per call (a null buffer takes part with scratch data, then throws on its rank).
  /// The plan must outlive the request.
  request init(const void* in, void* out, void* ws = nullptr) const;

  std::size_t workspace_size() const;
  alltoall_algorithm algorithm() const;
  int chunks() const;
  const communicator& comm() const;

 private:
  std::unique_ptr<detail::plan_impl> impl_;
  mutable std::unique_ptr<toru::detail::split_phase> phase_;  // declared after impl_: joins first
};

}  // namespace toru::comm
