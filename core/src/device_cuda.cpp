// SPDX-License-Identifier: BSD-3-Clause
#include <cuda_runtime_api.h>

#include "toru/core/device.hpp"

namespace toru {

int gpu_count() noexcept {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) return 0;
  return count;
}

std::string gpu_absence_reason() {
  int count = 0;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess) return std::string("no usable CUDA device: ") + cudaGetErrorString(rc);
  if (count == 0) return "no CUDA device present";
  return "a CUDA device is present";
}

}  // namespace toru
