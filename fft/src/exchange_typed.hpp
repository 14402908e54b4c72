// An all-to-all whose blocks are strided rows described by MPI datatypes (MPI_Alltoallw): data
// moves straight out of one FFT layout and into the next, the MPI library's datatype engine doing
// the gathering that a contiguous exchange needs a pack copy for (docs/fft.md, "natural slabs").
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "comm_cache.hpp"

namespace toru::fft::detail {

/// `rows` runs of `row_elems` elements, `stride` elements apart, the first at `offset`; all in
/// elements of the exchange's type.
struct strided_block {
  std::int64_t offset = 0;
  std::int64_t rows = 0, row_elems = 0, stride = 0;
  std::int64_t elems() const { return rows * row_elems; }
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
