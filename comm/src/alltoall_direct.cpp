// SPDX-License-Identifier: BSD-3-Clause
// direct: the MPI library's own MPI_Alltoall / MPI_Alltoallv. With chunks > 1 it posts one
// MPI_Ialltoallv per chunk (each covering chunk c of every block) and runs the hook as each completes,
// so a caller can compute on early chunks while later ones are in flight.
#include <vector>

#include "alltoall_impl.hpp"
#include "toru/core/mpi.hpp"

namespace toru::comm::detail {

struct chunked_direct_state {
  // [c * P + j]: counts and displacements of chunk c, in elements.
  std::vector<int> scounts, sdispls, rcounts, rdispls;
};

std::size_t prepare_direct(plan_impl& plan) {
  if (plan.chunks <= 1) return 0;
  const auto& x = plan.x;
  const int P = x.nranks, C = plan.chunks;
  auto st = std::make_shared<chunked_direct_state>();
  st->scounts.resize(static_cast<std::size_t>(P) * C);
  st->sdispls.resize(st->scounts.size());
  st->rcounts.resize(st->scounts.size());
  st->rdispls.resize(st->scounts.size());
  for (int c = 0; c < C; ++c)
    for (int j = 0; j < P; ++j) {
      const std::size_t i = static_cast<std::size_t>(c) * P + j;
      st->scounts[i] = static_cast<int>(chunk_length(x.scounts[j], c, C));
      st->sdispls[i] = x.sdispls[j] + static_cast<int>(chunk_begin(x.scounts[j], c, C));
      st->rcounts[i] = static_cast<int>(chunk_length(x.rcounts[j], c, C));
      st->rdispls[i] = x.rdispls[j] + static_cast<int>(chunk_begin(x.rcounts[j], c, C));
    }
  plan.chunked = std::move(st);
  return 0;
}

void alltoall_direct(const plan_impl& plan, const void* in, void* out, std::byte*) {
  const auto& x = plan.x;
  if (plan.chunks <= 1) {
    const void* send = in == out && x.equal ? MPI_IN_PLACE : in;  // v-plans stage (in_place_ok)
    if (x.equal) {
      const int n = static_cast<int>(x.count);
      check_mpi(MPI_Alltoall(send, n, x.type, out, n, x.type, x.comm), "MPI_Alltoall");
    } else {
      check_mpi(MPI_Alltoallv(send, x.scounts.data(), x.sdispls.data(), x.type, out, x.rcounts.data(), x.rdispls.data(),
                              x.type, x.comm),
                "MPI_Alltoallv");
    }
    plan.call_hook(0);
    return;
  }
  const auto& st = *plan.chunked;
  const int P = x.nranks, C = plan.chunks;
  std::vector<MPI_Request> req(static_cast<std::size_t>(C), MPI_REQUEST_NULL);
  for (int c = 0; c < C; ++c) {
    const std::size_t o = static_cast<std::size_t>(c) * P;
    check_mpi(MPI_Ialltoallv(in, &st.scounts[o], &st.sdispls[o], x.type, out, &st.rcounts[o], &st.rdispls[o], x.type,
                             x.comm, &req[static_cast<std::size_t>(c)]),
              "MPI_Ialltoallv");
  }
  for (int c = 0; c < C; ++c) {
    check_mpi(MPI_Wait(&req[static_cast<std::size_t>(c)], MPI_STATUS_IGNORE), "MPI_Wait");
    plan.call_hook(c);
  }
}

}  // namespace toru::comm::detail
