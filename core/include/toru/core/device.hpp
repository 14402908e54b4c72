// SPDX-License-Identifier: BSD-3-Clause
// Whether this process can see a GPU. Compiled against CUDA when the build has it;
// otherwise always 0, so callers need no #ifdef. Defined in toru::core_device (not toru::core), the
// one core library that links the CUDA runtime.
#pragma once

#include <string>

namespace toru {

/// Number of CUDA devices visible to this process (0 without CUDA, a driver or a GPU).
int gpu_count() noexcept;

/// Why gpu_count() is 0, in words for a skip message ("built without CUDA", "no CUDA device: ...").
std::string gpu_absence_reason();

}  // namespace toru
