// SPDX-License-Identifier: BSD-3-Clause
#include "nccl_reducer.hpp"

#include "toru/core/error.hpp"

namespace toru::train::detail {

struct nccl_reducer {};
void nccl_reducer_deleter::operator()(nccl_reducer* r) const noexcept { delete r; }
bool nccl_available() noexcept { return false; }
nccl_reducer_ptr make_nccl_reducer(const comm::communicator&) {
  throw error(errc::unsupported,
              "data_parallel: the model's buffers are in device memory but this toru was built without NCCL");
}
void nccl_average(nccl_reducer&, float*, std::int64_t) {}
void nccl_wait(nccl_reducer&) {}

}  // namespace toru::train::detail
