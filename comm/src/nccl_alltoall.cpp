// SPDX-License-Identifier: BSD-3-Clause
// The NCCL transport (built with TORU_ENABLE_NCCL).
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <fmt/format.h>

#include "toru/comm/nccl.hpp"
#include "toru/core/error.hpp"
#include "toru/core/mpi.hpp"
#include "toru/detail/cuda_check.hpp"
#include "toru/detail/nccl_check.hpp"

namespace toru::comm {

using toru::detail::check_cuda;
using toru::detail::check_nccl;

struct nccl_communicator::impl {
  ncclComm_t comm = nullptr;
  int device = -1;
  int rank = 0;
  int size = 1;
  ~impl() {
    if (comm) ncclCommDestroy(comm);
  }
};

bool nccl_communicator::enabled() noexcept { return true; }

nccl_communicator::nccl_communicator(const communicator& comm, int device) : impl_(std::make_unique<impl>()) {
  auto& s = *impl_;
  s.rank = comm.rank();
  s.size = comm.size();
  validate_collectively(comm.mpi(), [&] {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0)
      throw error(errc::no_device, "nccl_communicator: this rank sees no CUDA device");
    if (device < 0) {
      MPI_Comm node = MPI_COMM_NULL;
      check_mpi(MPI_Comm_split_type(comm.mpi(), MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node), "MPI_Comm_split_type");
      device = mpi_rank(node) % count;
      MPI_Comm_free(&node);
    }
    expect(device < count, "device", fmt::format("< {} (devices visible)", count), std::to_string(device));
    check_cuda(cudaSetDevice(device), "cudaSetDevice");
  });
  s.device = device;
  ncclUniqueId id{};
  if (s.rank == 0) check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
  check_mpi(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, comm.mpi()), "MPI_Bcast");
  check_nccl(ncclCommInitRank(&s.comm, s.size, id, s.rank), "ncclCommInitRank");
}

nccl_communicator::~nccl_communicator() = default;

void nccl_communicator::alltoall(const void* in, void* out, std::size_t bytes_per_pair, void* stream) const {
  const auto& s = *impl_;
  auto st = static_cast<cudaStream_t>(stream);
  const auto* src = static_cast<const char*>(in);
  auto* dst = static_cast<char*>(out);
  check_cuda(cudaSetDevice(s.device), "cudaSetDevice");
  check_nccl(ncclGroupStart(), "ncclGroupStart");
  for (int j = 0; j < s.size; ++j) {
    const std::size_t off = bytes_per_pair * static_cast<std::size_t>(j);
    check_nccl(ncclSend(src + off, bytes_per_pair, ncclChar, j, s.comm, st), "ncclSend");
    check_nccl(ncclRecv(dst + off, bytes_per_pair, ncclChar, j, s.comm, st), "ncclRecv");
  }
  check_nccl(ncclGroupEnd(), "ncclGroupEnd");
}

void nccl_communicator::allreduce_sum(const float* in, float* out, std::size_t count, void* stream) const {
  const auto& s = *impl_;
  check_cuda(cudaSetDevice(s.device), "cudaSetDevice");
  check_nccl(ncclAllReduce(in, out, count, ncclFloat, ncclSum, s.comm, static_cast<cudaStream_t>(stream)),
             "ncclAllReduce");
}

void nccl_communicator::allreduce_average(const float* in, float* out, std::size_t count, void* stream) const {
  const auto& s = *impl_;
  check_cuda(cudaSetDevice(s.device), "cudaSetDevice");
  check_nccl(ncclAllReduce(in, out, count, ncclFloat, ncclAvg, s.comm, static_cast<cudaStream_t>(stream)),
             "ncclAllReduce");
}

int nccl_communicator::device() const { return impl_->device; }

}  // namespace toru::comm
