// SPDX-License-Identifier: BSD-3-Clause
// The throwing half of the internal CUDA and NCCL checks (toru/detail/cuda_check.hpp,
// nccl_check.hpp). It takes the library's texts from the inline checks, so it needs neither CUDA
// nor NCCL and is the same in every build: a build without CUDA compiles it too and simply never
// calls it, which is why it has no _none variant.
#include <fmt/format.h>

#include <source_location>

#include "toru/core/error.hpp"

namespace toru::detail {

[[noreturn]] void throw_cuda_error(bool out_of_memory, const char* text, const char* name, const char* call,
                                   std::source_location where) {
  throw error(out_of_memory ? errc::out_of_memory : errc::cuda, fmt::format("{} failed: {} ({})", call, text, name),
              where);
}

[[noreturn]] void throw_nccl_error(int code, const char* text, const char* call, std::source_location where) {
  throw error(errc::cuda, fmt::format("{} failed: {} (ncclResult_t {})", call, text, code), where);
}

}  // namespace toru::detail
