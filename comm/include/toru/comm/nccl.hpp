// SPDX-License-Identifier: BSD-3-Clause
// NCCL transport: all-to-all (grouped ncclSend/ncclRecv) and allreduce on device-resident buffers,
// one GPU per rank. Built when TORU_ENABLE_NCCL; otherwise nccl_communicator::enabled() is false and
// the constructor throws toru::error(unsupported).
//
//   toru::comm::nccl_communicator nccl(comm);                 // collective
//   nccl.alltoall(d_in, d_out, bytes_per_pair, stream);      // enqueued on stream
//   cudaStreamSynchronize(stream);
#pragma once

#include <cstddef>
#include <memory>

#include "toru/comm/communicator.hpp"

namespace toru::comm {

class nccl_communicator {
 public:
  /// Whether this build has the NCCL transport.
  static bool enabled() noexcept;

  /// Collective over comm: rank 0 creates the NCCL unique id and broadcasts it over MPI. `device`:
  /// the CUDA device of this rank, -1 = local rank modulo the devices visible. Throws
  /// toru::error(no_device) when the rank sees no GPU, (unsupported) without NCCL, (cuda) on failure.
  explicit nccl_communicator(const communicator& comm, int device = -1);
  ~nccl_communicator();
  nccl_communicator(const nccl_communicator&) = delete;
  nccl_communicator& operator=(const nccl_communicator&) = delete;

  /// Device buffers of size() blocks of bytes_per_pair bytes; block j of in goes to rank j. `stream`
  /// is a cudaStream_t (nullptr: the default stream). Enqueued only: synchronise the stream to wait.
  /// Not thread-safe on one nccl_communicator.
  void alltoall(const void* in, void* out, std::size_t bytes_per_pair, void* stream = nullptr) const;
  /// Sum of `count` floats over all ranks (in == out allowed). Enqueued on `stream`.
  void allreduce_sum(const float* in, float* out, std::size_t count, void* stream = nullptr) const;
  /// Mean of `count` floats over all ranks (NCCL's ncclAvg: the same bits as NCCL gives any caller;
  /// in == out allowed). Enqueued on `stream`. The trainer's gradient average.
  void allreduce_average(const float* in, float* out, std::size_t count, void* stream = nullptr) const;

  int device() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace toru::comm
