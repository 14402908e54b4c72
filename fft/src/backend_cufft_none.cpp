// SPDX-License-Identifier: BSD-3-Clause
// make_cufft_ops when toru is built without CUDA: the same error on every rank.
#include "backend_ops.hpp"
#include "toru/core/error.hpp"
#include "toru/core/mpi.hpp"

namespace toru::fft::detail {

template <class T>
std::unique_ptr<backend_ops<T>> make_cufft_ops(MPI_Comm comm) {
  validate_collectively(comm, [] {
    throw error(errc::unsupported, "backend cufft: toru was built without CUDA (TORU_ENABLE_CUDA=OFF)");
  });
  return nullptr;
}

template std::unique_ptr<backend_ops<float>> make_cufft_ops<float>(MPI_Comm);
template std::unique_ptr<backend_ops<double>> make_cufft_ops<double>(MPI_Comm);

}  // namespace toru::fft::detail
