// SPDX-License-Identifier: BSD-3-Clause
// pairwise: P-1 exchange steps, step s sending to rank+s and receiving from rank-s (Open MPI's
// coll_base pairwise, MPICH's for non powers of two), then the local block. One message in flight
// per direction: no incast, latency (P-1)*alpha.
#include "alltoall_impl.hpp"
#include "toru/core/mpi.hpp"

namespace toru::comm::detail {

void alltoall_pairwise(const plan_impl& plan, const void* in, void* out, std::byte*) {
  const auto& x = plan.x;
  const int P = x.nranks, r = x.rank;
  const auto* src = static_cast<const std::byte*>(in);
  auto* dst = static_cast<std::byte*>(out);
  constexpr int tag = 7301;
  for (int s = 0; s < P; ++s) {
    const int to = (r + s) % P, from = (r - s + P) % P;
    check_mpi(
        MPI_Sendrecv(src + x.sdispls[to] * x.extent, x.scounts[to], x.type, to, tag, dst + x.rdispls[from] * x.extent,
                     x.rcounts[from], x.type, from, tag, x.comm, MPI_STATUS_IGNORE),
        "MPI_Sendrecv");
  }
  plan.call_hook(0);
}

}  // namespace toru::comm::detail
