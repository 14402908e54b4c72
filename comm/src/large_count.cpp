// SPDX-License-Identifier: BSD-3-Clause
#include "large_count.hpp"

#include <algorithm>
#include <climits>

#include <fmt/format.h>

#include "toru/core/error.hpp"
#include "toru/core/mpi.hpp"

namespace toru::comm::detail {

namespace {
std::int64_t limit = INT_MAX;
}

std::int64_t int_limit() { return limit; }
void set_int_limit_for_testing(std::int64_t l) { limit = l > 0 ? std::min<std::int64_t>(l, INT_MAX) : INT_MAX; }

owned_datatype& owned_datatype::operator=(owned_datatype&& o) noexcept {
  std::swap(type_, o.type_);
  return *this;
}

owned_datatype::~owned_datatype() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (type_ != MPI_DATATYPE_NULL && !finalized) MPI_Type_free(&type_);
}

owned_datatype make_block_type(std::int64_t count, MPI_Datatype type) {
  expect(count > 0, "count", "> 0", std::to_string(count));
  MPI_Aint lb = 0, extent = 0;
  check_mpi(MPI_Type_get_extent(type, &lb, &extent), "MPI_Type_get_extent");
  const std::int64_t k = std::min(count, int_limit()), q = count / k, r = count % k;
  expect(q <= int_limit(), "count", fmt::format("at most {} elements", int_limit() * int_limit()),
         std::to_string(count));
  MPI_Datatype piece = MPI_DATATYPE_NULL, rest = MPI_DATATYPE_NULL, joined = MPI_DATATYPE_NULL,
               block = MPI_DATATYPE_NULL;
  check_mpi(MPI_Type_contiguous(static_cast<int>(k), type, &piece), "MPI_Type_contiguous");
  if (r == 0) {
    check_mpi(MPI_Type_contiguous(static_cast<int>(q), piece, &joined), "MPI_Type_contiguous");
  } else {
    check_mpi(MPI_Type_contiguous(static_cast<int>(r), type, &rest), "MPI_Type_contiguous");
    const int lengths[2] = {static_cast<int>(q), 1};
    const MPI_Aint displs[2] = {0, static_cast<MPI_Aint>(q * k) * extent};
    MPI_Datatype types[2] = {piece, rest};
    check_mpi(MPI_Type_create_struct(2, lengths, displs, types, &joined), "MPI_Type_create_struct");
    MPI_Type_free(&rest);
  }
  MPI_Type_free(&piece);
  check_mpi(MPI_Type_create_resized(joined, lb, static_cast<MPI_Aint>(count) * extent, &block),
            "MPI_Type_create_resized");
  MPI_Type_free(&joined);
  check_mpi(MPI_Type_commit(&block), "MPI_Type_commit");
  return owned_datatype(block);
}

}  // namespace toru::comm::detail
