// SPDX-License-Identifier: BSD-3-Clause
// For toru's NCCL code (comm's transport): the one check of an NCCL call. Internal, like
// cuda_check.hpp; only files compiled where NCCL exists include it.
#pragma once

#include <nccl.h>

#include <source_location>

namespace toru::detail {

/// Throws toru::error(errc::cuda) naming `call`, NCCL's text and code, and `where`. Defined in
/// toru::core_device (core/src/gpu_check.cpp), which does not link NCCL: the text comes from the caller.
[[noreturn]] void throw_nccl_error(int code, const char* text, const char* call, std::source_location where);

inline void check_nccl(ncclResult_t rc, const char* call,
                       std::source_location where = std::source_location::current()) {
  if (rc != ncclSuccess) [[unlikely]]
    throw_nccl_error(static_cast<int>(rc), ncclGetErrorString(rc), call, where);
}

}  // namespace toru::detail
