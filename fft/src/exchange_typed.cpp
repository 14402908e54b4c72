// SPDX-License-Identifier: BSD-3-Clause
#include "exchange_typed.hpp"

#include <fmt/format.h>

#include "toru/comm/communicator.hpp"
#include "toru/core/mpi.hpp"

namespace toru::fft::detail {

namespace {

// A committed datatype for one block; its byte offset lives in the type (an MPI_Aint), so that
// MPI_Alltoallw's int displacements stay zero and large arrays need no 2^31-byte bound.
MPI_Datatype block_type(const strided_block& b, MPI_Datatype type) {
  MPI_Aint lb = 0, extent = 0;
  check_mpi(MPI_Type_get_extent(type, &lb, &extent), "MPI_Type_get_extent");
  if (b.outer > INT32_MAX || b.inner > INT32_MAX || b.run > INT32_MAX)
    throw error(errc::unsupported, fmt::format("exchange block of {} x {} runs of {} elements: an MPI count holds at "
                                               "most 2^31-1; use more ranks",
                                               b.outer, b.inner, b.run));
  MPI_Datatype inner = MPI_DATATYPE_NULL, outer = MPI_DATATYPE_NULL, placed = MPI_DATATYPE_NULL;
  check_mpi(MPI_Type_create_hvector(static_cast<int>(b.inner), static_cast<int>(b.run), b.inner_stride * extent, type,
                                    &inner),
            "MPI_Type_create_hvector");
  check_mpi(MPI_Type_create_hvector(static_cast<int>(b.outer), 1, b.outer_stride * extent, inner, &outer),
            "MPI_Type_create_hvector");
  const MPI_Aint displacement = b.offset * extent;
  check_mpi(MPI_Type_create_hindexed_block(1, 1, &displacement, outer, &placed), "MPI_Type_create_hindexed_block");
  MPI_Type_free(&inner);
  MPI_Type_free(&outer);
  check_mpi(MPI_Type_commit(&placed), "MPI_Type_commit");
  return placed;
}

}  // namespace

typed_exchange::typed_exchange(comm_ptr comm, const std::vector<strided_block>& send,
                               const std::vector<strided_block>& recv, MPI_Datatype type)
    : comm_(std::move(comm)), zero_displs_(send.size(), 0) {
  auto build = [&](const std::vector<strided_block>& blocks, std::vector<int>& counts,
                   std::vector<MPI_Datatype>& types) {
    for (const auto& b : blocks) {
      const bool empty = b.elems() == 0;
      counts.push_back(empty ? 0 : 1);
      types.push_back(empty ? type : block_type(b, type));
      if (!empty) owned_.push_back(types.back());
    }
  };
  build(send, send_counts_, send_types_);
  build(recv, recv_counts_, recv_types_);
}

typed_exchange::~typed_exchange() {
  int finalized = 0;
  MPI_Finalized(&finalized);  // a plan may outlive MPI; its types went with it
  if (!finalized)
    for (MPI_Datatype& t : owned_) MPI_Type_free(&t);
}

void typed_exchange::execute(const void* send, void* recv) const {
  check_mpi(MPI_Alltoallw(send, send_counts_.data(), zero_displs_.data(), send_types_.data(), recv, recv_counts_.data(),
                          zero_displs_.data(), recv_types_.data(), comm_->mpi()),
            "MPI_Alltoallw");
}

}  // namespace toru::fft::detail
