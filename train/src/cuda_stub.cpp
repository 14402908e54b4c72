// SPDX-License-Identifier: BSD-3-Clause
// Builds without the CUDA backend (no CUDA toolkit or cuDNN, or train/cuda.cmake absent).
#include "backend.hpp"
#include "toru/core/error.hpp"

namespace toru::train::detail {

std::unique_ptr<backend> make_cuda_backend(const model_options&) {
  throw error(errc::unsupported,
              "backend: the CUDA backend was not built (needs the CUDA toolkit and cuDNN at configure time); use "
              "backend_kind::cpu");
}

}  // namespace toru::train::detail
