// SPDX-License-Identifier: BSD-3-Clause
// The one all-to-all the FFT plans use: a fixed-shape exchange of packed blocks whose arrival is
// reported chunk by chunk, so that the caller can transform received lines while later chunks
// are still in flight. Chunk c of nchunks covers, in every source's block of n elements, the
// elements [c*n/nchunks, (c+1)*n/nchunks) (the toru::comm chunk convention).
#pragma once

#include <mpi.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "comm_cache.hpp"
#include "toru/comm/alltoall_plan.hpp"

namespace toru::fft::detail {

using chunk_fn = std::function<void(int chunk, int nchunks)>;

class exchange {
 public:
  /// Collective over comm. Counts and displacements in elements of `type`.
  /// chunks > 1 asks for a pipelined exchange whose chunks reach on_chunk as they arrive;
  /// overlap = false runs on_chunk only after the whole exchange, once per chunk, in order.
  exchange(comm_ptr comm, std::vector<int> send_counts, std::vector<int> send_displs, std::vector<int> recv_counts,
           std::vector<int> recv_displs, MPI_Datatype type, int chunks, bool overlap,
           comm::alltoall_algorithm algorithm = comm::alltoall_algorithm::automatic);
  ~exchange();
  exchange(const exchange&) = delete;
  exchange& operator=(const exchange&) = delete;

  std::size_t workspace_size() const;
  /// Collective. Calls on_chunk(c, nchunks) for every chunk in increasing order.
  void execute(const void* send, void* recv, void* ws, const chunk_fn& on_chunk) const;
  /// The algorithm toru::comm chose (or was told) for this exchange.
  comm::alltoall_algorithm algorithm() const;
  /// A short description ("toru::comm indirect x4 (overlapped)", ...).
  std::string describe() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace toru::fft::detail
