// SPDX-License-Identifier: BSD-3-Clause
#include "toru/comm/nccl.hpp"
#include "toru/core/error.hpp"

namespace toru::comm {

struct nccl_communicator::impl {};

bool nccl_communicator::enabled() noexcept { return false; }
nccl_communicator::nccl_communicator(const communicator&, int) {
  throw error(errc::unsupported, "nccl_communicator: this build of toru has no NCCL (TORU_ENABLE_NCCL=OFF)");
}
nccl_communicator::~nccl_communicator() = default;
void nccl_communicator::alltoall(const void*, void*, std::size_t, void*) const {}
void nccl_communicator::allreduce_sum(const float*, float*, std::size_t, void*) const {}
void nccl_communicator::allreduce_average(const float*, float*, std::size_t, void*) const {}
int nccl_communicator::device() const { return -1; }

}  // namespace toru::comm
