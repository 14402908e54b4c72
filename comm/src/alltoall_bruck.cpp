// SPDX-License-Identifier: BSD-3-Clause
// bruck: the modified Bruck algorithm (Open MPI coll_base bruck, MPICH brucks with radix 2).
// ceil(log2 P) steps; in step k every rank forwards the blocks whose index has bit k set to
// rank+k. Fewer start-ups than pairwise (log2 P instead of P-1) at the price of moving each block
// up to log2 P times, so it only pays for small blocks. Equal, contiguous blocks only.
#include <cstring>

#include "alltoall_impl.hpp"
#include "toru/core/mpi.hpp"

namespace toru::comm::detail {

std::size_t prepare_bruck(plan_impl& plan) {
  const auto& x = plan.x;
  const std::size_t block = x.count * x.esize, P = static_cast<std::size_t>(x.nranks);
  // rotated copy of all blocks + send and receive packing buffers of up to ceil(P/2) blocks each
  return block * (P + 2 * ((P + 1) / 2));
}

void alltoall_bruck(const plan_impl& plan, const void* in, void* out, std::byte* ws) {
  const auto& x = plan.x;
  const int P = x.nranks, r = x.rank;
  const std::size_t block = x.count * x.esize;
  const auto* src = static_cast<const std::byte*>(in);
  auto* dst = static_cast<std::byte*>(out);
  std::byte* tmp = ws;
  std::byte* packed_send = ws + block * static_cast<std::size_t>(P);
  std::byte* packed_recv = packed_send + block * static_cast<std::size_t>((P + 1) / 2);
  if (block > 0) {
    // tmp[i] = block for rank r+i
    for (int i = 0; i < P; ++i)
      copy_bytes(tmp + block * static_cast<std::size_t>(i), src + block * static_cast<std::size_t>((r + i) % P), block);
    constexpr int tag = 7302;
    for (int k = 1; k < P; k <<= 1) {
      std::size_t n = 0;
      for (int i = k; i < P; ++i)
        if (i & k) copy_bytes(packed_send + block * n++, tmp + block * static_cast<std::size_t>(i), block);
      const int bytes = checked_int(static_cast<std::int64_t>(n * block), "bruck step bytes");
      check_mpi(MPI_Sendrecv(packed_send, bytes, MPI_BYTE, (r + k) % P, tag, packed_recv, bytes, MPI_BYTE,
                             (r - k + P) % P, tag, x.comm, MPI_STATUS_IGNORE),
                "MPI_Sendrecv");
      n = 0;
      for (int i = k; i < P; ++i)
        if (i & k) copy_bytes(tmp + block * static_cast<std::size_t>(i), packed_recv + block * n++, block);
    }
    // tmp[i] now holds the block from rank r-i
    for (int i = 0; i < P; ++i)
      copy_bytes(dst + block * static_cast<std::size_t>((r - i + P) % P), tmp + block * static_cast<std::size_t>(i),
                 block);
  }
  plan.call_hook(0);
}

}  // namespace toru::comm::detail
