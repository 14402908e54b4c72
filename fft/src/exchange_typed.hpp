// SPDX-License-Identifier: BSD-3-Clause
// An all-to-all whose blocks are strided rows described by MPI datatypes (MPI_Alltoallw): data
// moves straight out of one FFT layout and into the next, the MPI library's datatype engine doing
// the gathering that a contiguous exchange needs a pack copy for (docs/fft.md, "natural slabs").
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "comm_cache.hpp"

namespace toru::fft::detail {

/// Runs of `run` elements, the first at `offset`, in the order
///   for o < outer: for i < inner: run at offset + o * outer_stride + i * inner_stride;
/// all in elements of the exchange's type.
struct strided_block {
  std::int64_t offset = 0;
  std::int64_t outer = 0, outer_stride = 0;
  std::int64_t inner = 1, inner_stride = 0;
  std::int64_t run = 0;
  std::int64_t elems() const { return outer * inner * run; }
};

class typed_exchange {
 public:
  /// Not collective (the datatypes are local). send[d] goes to rank d, recv[s] comes from rank s;
  /// send[d] on this rank must hold as many elements as recv[me] on rank d.
  typed_exchange(comm_ptr comm, const std::vector<strided_block>& send, const std::vector<strided_block>& recv,
                 MPI_Datatype type);
  ~typed_exchange();
  typed_exchange(const typed_exchange&) = delete;
  typed_exchange& operator=(const typed_exchange&) = delete;

  /// Collective over the communicator.
  void execute(const void* send, void* recv) const;

 private:
  comm_ptr comm_;
  std::vector<int> send_counts_, recv_counts_, zero_displs_;
  std::vector<MPI_Datatype> send_types_, recv_types_;
  std::vector<MPI_Datatype> owned_;  // the committed ones, freed with the exchange
};

}  // namespace toru::fft::detail
