// SPDX-License-Identifier: BSD-3-Clause
#include "toru/core/device.hpp"

namespace toru {
int gpu_count() noexcept { return 0; }
std::string gpu_absence_reason() { return "toru was built without CUDA (TORU_ENABLE_CUDA=OFF or no toolkit found)"; }
}  // namespace toru
