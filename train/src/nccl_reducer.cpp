#include "nccl_reducer.hpp"

#include <cuda_runtime.h>
#include <nccl.h>

#include <fmt/format.h>

#include "toru/core/error.hpp"
#include "toru/core/mpi.hpp"

namespace toru::train::detail {

namespace {
void check_cuda(cudaError_t rc, const char* call) {
  if (rc != cudaSuccess) throw error(errc::cuda, fmt::format("{} failed: {}", call, cudaGetErrorString(rc)));
}
void check_nccl(ncclResult_t rc, const char* call) {
  if (rc != ncclSuccess) throw error(errc::cuda, fmt::format("{} failed: {}", call, ncclGetErrorString(rc)));
}
}  // namespace

struct nccl_reducer {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
};

void nccl_reducer_deleter::operator()(nccl_reducer* r) const noexcept {
  if (r == nullptr) return;
  if (r->stream) cudaStreamDestroy(r->stream);
  if (r->comm) ncclCommDestroy(r->comm);
  delete r;
}

bool nccl_available() noexcept { return true; }

nccl_reducer_ptr make_nccl_reducer(MPI_Comm comm) {
  int rank = 0, size = 1;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  ncclUniqueId id{};
  if (rank == 0) check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
  check_mpi(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, comm), "MPI_Bcast");
  nccl_reducer_ptr r(new nccl_reducer);
  check_cuda(cudaStreamCreateWithFlags(&r->stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  check_nccl(ncclCommInitRank(&r->comm, size, id, rank), "ncclCommInitRank");
  return r;
}

void nccl_average(nccl_reducer& r, float* device_data, std::int64_t count) {
  // The model's contract does not expose its stream: the bucket's gradients are final once the
  // device is idle. This costs the overlap of the device's own work with this call, not with NCCL.
  check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  check_nccl(ncclAllReduce(device_data, device_data, static_cast<size_t>(count), ncclFloat, ncclAvg, r.comm, r.stream),
             "ncclAllReduce");
}

void nccl_wait(nccl_reducer& r) { check_cuda(cudaStreamSynchronize(r.stream), "cudaStreamSynchronize"); }

}  // namespace toru::train::detail
