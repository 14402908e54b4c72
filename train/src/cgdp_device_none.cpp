// SPDX-License-Identifier: BSD-3-Clause
// Builds without the CUDA backend: CGDP has no device path.
#include "cgdp_device.hpp"
#include "toru/core/error.hpp"
#include "toru/train/cgdp.hpp"

namespace toru::train {

void* device_compute_stream(model&) { return nullptr; }

namespace detail {

std::unique_ptr<cgdp_device> make_cgdp_device(std::size_t, void*) {
  throw error(errc::unsupported,
              "cgdp: the model's buffers are in device memory, and this toru was built without the CUDA toolkit and "
              "cuDNN (no device path); rebuild with them or use the CPU device");
}

}  // namespace detail
}  // namespace toru::train
