// SPDX-License-Identifier: BSD-3-Clause
#include "nccl_reducer.hpp"

#include <cuda_runtime.h>

#include <optional>

#include "toru/comm/nccl.hpp"
#include "toru/detail/cuda_check.hpp"

namespace toru::train::detail {

using toru::detail::check_cuda;

// The NCCL set-up (unique id, broadcast, ncclCommInitRank) is comm's nccl_communicator; the trainer
// keeps only its own stream, on which the buckets' averages queue behind each other.
struct nccl_reducer {
  std::optional<comm::nccl_communicator> nccl;
  cudaStream_t stream = nullptr;
};

void nccl_reducer_deleter::operator()(nccl_reducer* r) const noexcept {
  if (r == nullptr) return;
  if (r->stream) cudaStreamDestroy(r->stream);
  delete r;
}

bool nccl_available() noexcept { return comm::nccl_communicator::enabled(); }

nccl_reducer_ptr make_nccl_reducer(const comm::communicator& comm) {
  // The model's buffers live on the current device: the communicator must use that one, not the
  // node-local rank's default.
  int device = 0;
  check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  nccl_reducer_ptr r(new nccl_reducer);
  r->nccl.emplace(comm, device);
  check_cuda(cudaStreamCreateWithFlags(&r->stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  return r;
}

void nccl_average(nccl_reducer& r, float* device_data, std::int64_t count) {
  // The model's contract does not expose its stream: the bucket's gradients are final once the
  // device is idle. This costs the overlap of the device's own work with this call, not with NCCL.
  check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  r.nccl->allreduce_average(device_data, device_data, static_cast<std::size_t>(count), r.stream);
}

void nccl_wait(nccl_reducer& r) { check_cuda(cudaStreamSynchronize(r.stream), "cudaStreamSynchronize"); }

}  // namespace toru::train::detail
