// SPDX-License-Identifier: BSD-3-Clause
// What the drop-in calls (toru::comm::alltoall / alltoallv, toru_alltoall / toru_alltoallv) keep on a
// caller's communicator: a toru communicator and the plans of the signatures seen so far.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "toru/comm/alltoall_plan.hpp"
#include "toru/comm/communicator.hpp"

namespace toru::comm::detail {

/// Everything about a datatype that a cached plan depends on. A plan passes the handle to MPI and
/// uses only the type's size, bounds and whether it is contiguous (which those decide), so a handle
/// that MPI hands out again for another type either differs here or is served right by the plan.
struct type_key {
  MPI_Datatype handle = MPI_DATATYPE_NULL;
  int size = 0;
  MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  bool operator==(const type_key&) const = default;
};
/// Local, a few MPI queries; MPI_DATATYPE_NULL gives a key with only the null handle.
type_key describe_type(MPI_Datatype type);

/// The local arguments of one MPI_Alltoall call apart from the buffers (the send side mirrors the
/// receive side in place).
struct alltoall_signature {
  int scount = 0, rcount = 0;
  type_key stype, rtype;
  bool operator==(const alltoall_signature&) const = default;
};

struct alltoall_entry {
  alltoall_signature sig;
  std::unique_ptr<alltoall_plan> plan;  // null: different send and receive types, MPI_Alltoall as called
};

/// The local arguments of one MPI_Alltoallv call: types and the four arrays (counts and displacements;
/// in place, the send ones are the receive ones).
struct alltoallv_signature {
  type_key stype, rtype;
  bool in_place = false;
  const int *scounts = nullptr, *sdispls = nullptr, *rcounts = nullptr, *rdispls = nullptr;  // the caller's
  std::size_t n = 0;                                                                         // entries each
};

/// A signature kept: the caller's arrays copied.
struct stored_v_signature {
  type_key stype, rtype;
  bool in_place = false;
  std::vector<int> arrays;  // scounts, sdispls, rcounts, rdispls
  explicit stored_v_signature(const alltoallv_signature& s);
  bool matches(const alltoallv_signature& s) const;
};

struct alltoallv_entry {
  stored_v_signature sig;
  std::int64_t id = 0;                   // equal on every rank for the entry made by one collective call
  std::unique_ptr<alltoallv_plan> plan;  // null: different send and receive types, MPI_Alltoallv as called
};

struct dropin_state {
  communicator comm;
  bool check_every_call = false;  // TORU_CHECK=1 on any rank when the state was created
  std::vector<alltoall_entry> equal;
  std::vector<alltoallv_entry> variable;
  std::size_t last_equal = 0;  // most calls repeat the previous signature: looked at first
  std::int64_t next_id = 0;    // advances on every rank in the same collective calls

  explicit dropin_state(MPI_Comm c);
  alltoall_entry* find(const alltoall_signature& sig);
  alltoallv_entry* find(const alltoallv_signature& sig);
  /// Inserted on every rank in the same collective call; the oldest entry goes beyond a few, the same
  /// one on every rank.
  alltoall_entry& insert(alltoall_entry e);
  alltoallv_entry& insert(const alltoallv_signature& sig, std::unique_ptr<alltoallv_plan> plan);
};

/// The state on `comm`: found locally, or created collectively by the first drop-in call on `comm`
/// (every rank makes that call). It goes when `comm` is freed, or at the start of MPI_Finalize
/// (an attribute on MPI_COMM_SELF), while MPI can still free toru's communicators.
dropin_state& dropin_for(MPI_Comm comm);

}  // namespace toru::comm::detail
