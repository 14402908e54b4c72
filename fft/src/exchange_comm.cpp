// SPDX-License-Identifier: BSD-3-Clause
// detail::exchange over toru::comm all-to-all plans: the received chunks are handed to the FFT
// (through the plan's chunk hook) while later chunks are still in flight.
#include <fmt/format.h>

#include "exchange.hpp"
#include "toru/comm/alltoall_plan.hpp"
#include "toru/comm/communicator.hpp"

namespace toru::fft::detail {

struct exchange::impl {
  comm_ptr comm;
  std::unique_ptr<comm::alltoallv_plan> plan;
  int chunks = 1;
  bool overlap = false;
  mutable const chunk_fn* current = nullptr;
};

exchange::exchange(comm_ptr c, std::vector<int> send_counts, std::vector<int> send_displs, std::vector<int> recv_counts,
                   std::vector<int> recv_displs, MPI_Datatype type, int chunks, bool overlap,
                   comm::alltoall_algorithm algorithm)
    : impl_(std::make_unique<impl>()) {
  impl_->comm = std::move(c);
  impl_->chunks = std::max(1, chunks);
  impl_->overlap = overlap;
  comm::alltoall_options opts{.algorithm = algorithm};
  if (overlap) {
    // chunks == 0: the all-to-all's own pipeline depth. The indirect torus schedule needs its many
    // small (eager) chunks to overlap its two phases; imposing the FFT's few large ones on it
    // serialised them and doubled the 1D FFT on the emulated torus (docs/fft.md, "Overlap").
    opts.chunks = chunks;
    impl* self = impl_.get();
    opts.on_chunk = [self](const comm::chunk_info& info) { (*self->current)(info.chunk, info.nchunks); };
  }
  impl_->plan = std::make_unique<comm::alltoallv_plan>(*impl_->comm, send_counts, send_displs, recv_counts, recv_displs,
                                                       type, opts);
  if (overlap) impl_->chunks = impl_->plan->chunks();
}

exchange::~exchange() = default;

std::size_t exchange::workspace_size() const { return impl_->plan->workspace_size(); }

comm::alltoall_algorithm exchange::algorithm() const { return impl_->plan->algorithm(); }

std::string exchange::describe() const {
  return fmt::format("toru::comm {} x{}{}", comm::to_string(impl_->plan->algorithm()), impl_->plan->chunks(),
                     impl_->overlap ? " (overlapped)" : "");
}

void exchange::execute(const void* send, void* recv, void* ws, const chunk_fn& on_chunk) const {
  impl_->current = &on_chunk;
  if (ws)
    impl_->plan->execute(send, recv, ws);
  else
    impl_->plan->execute(send, recv);
  impl_->current = nullptr;
  if (!impl_->overlap)
    for (int c = 0; c < impl_->chunks; ++c) on_chunk(c, impl_->chunks);
}

}  // namespace toru::fft::detail
