// SPDX-License-Identifier: BSD-3-Clause
// Exchanges larger than MPI's int counts allow. Open MPI 4.1 has no MPI-4 large-count calls, so a
// block of `count` elements whose count or offsets overflow an int becomes one element of a derived
// datatype built from pieces of at most int_limit() elements.
#pragma once

#include <mpi.h>

#include <cstdint>

namespace toru::comm::detail {

/// The largest count handed to MPI in one argument: INT_MAX, or what a test set.
std::int64_t int_limit();
/// Lowers the limit so that tests exercise the large-count path with small buffers; 0 restores
/// INT_MAX. Not thread-safe; for tests only.
void set_int_limit_for_testing(std::int64_t limit);

/// A committed datatype owned by a plan, freed with it (not after MPI_Finalize).
class owned_datatype {
 public:
  owned_datatype() = default;
  explicit owned_datatype(MPI_Datatype t) : type_(t) {}
  owned_datatype(owned_datatype&& o) noexcept : type_(o.type_) { o.type_ = MPI_DATATYPE_NULL; }
  owned_datatype& operator=(owned_datatype&& o) noexcept;
  owned_datatype(const owned_datatype&) = delete;
  owned_datatype& operator=(const owned_datatype&) = delete;
  ~owned_datatype();
  MPI_Datatype get() const { return type_; }

 private:
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
};

/// `count` consecutive elements of `type` as one element: a contiguous type of K = min(count,
/// int_limit()) elements repeated count / K times, then the remaining count % K elements; lower bound
/// that of `type`, extent count * extent(type). Local.
owned_datatype make_block_type(std::int64_t count, MPI_Datatype type);

}  // namespace toru::comm::detail
