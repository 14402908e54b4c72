// SPDX-License-Identifier: BSD-3-Clause
// Builds without the CUDA backend: the plan executor runs on the emulated device only.
#include "device_streams.hpp"
#include "toru/core/error.hpp"

namespace toru::train::detail {

std::unique_ptr<device_streams> make_cuda_streams(backend&, std::size_t) {
  throw error(errc::unsupported,
              "plan executor: the CUDA device was not built (needs the CUDA toolkit and cuDNN at configure time)");
}

}  // namespace toru::train::detail
