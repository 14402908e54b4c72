// detail::exchange over MPI_Alltoallv (used until toru::comm is available in the build).
#include "exchange.hpp"

#include <string>

#include "toru/core/mpi.hpp"

namespace toru::fft::detail {

struct exchange::impl {
  MPI_Comm comm;
  std::vector<int> sc, sd, rc, rd;
  MPI_Datatype type;
  int chunks;
};

exchange::exchange(MPI_Comm comm, std::vector<int> send_counts, std::vector<int> send_displs,
                   std::vector<int> recv_counts, std::vector<int> recv_displs, MPI_Datatype type, int chunks,
                   bool /*overlap*/)
    : impl_(new impl{comm, std::move(send_counts), std::move(send_displs), std::move(recv_counts),
                     std::move(recv_displs), type, chunks < 1 ? 1 : chunks}) {}

exchange::~exchange() = default;

std::size_t exchange::workspace_size() const { return 0; }

std::string exchange::describe() const { return "MPI_Alltoallv"; }

void exchange::execute(const void* send, void* recv, void* /*ws*/, const chunk_fn& on_chunk) const {
  check_mpi(MPI_Alltoallv(send, impl_->sc.data(), impl_->sd.data(), impl_->type, recv, impl_->rc.data(),
                          impl_->rd.data(), impl_->type, impl_->comm),
            "MPI_Alltoallv");
  for (int c = 0; c < impl_->chunks; ++c) on_chunk(c, impl_->chunks);
}

}  // namespace toru::fft::detail
