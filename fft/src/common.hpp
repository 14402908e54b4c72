// SPDX-License-Identifier: BSD-3-Clause
// Small helpers shared by the 3D and 1D plans.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string_view>
#include <vector>

#include "toru/fft/options.hpp"

namespace toru::fft::detail {

/// Not collective (run inside validate_collectively): throws errc::invalid_argument for a null buffer
/// where this rank has elements to read or write.
void check_buffers(const void* in, std::int64_t in_elems, const void* out, std::int64_t out_elems);

/// Not collective (run inside validate_collectively): throws errc::invalid_argument unless s is a scale.
void check_scale(scale s);

/// elems * elem_bytes, or errc::out_of_memory naming `what` when that exceeds 64 bits.
std::size_t checked_bytes(std::int64_t elems, std::size_t elem_bytes, std::string_view what);

unsigned fftw_flags(effort e);
double scale_factor(scale s, double n);

/// Units per chunk for a line op over `units` units in `chunks` chunks, plus the whole batch.
std::vector<std::int64_t> chunk_batches(std::int64_t units, int chunks);

/// Chunks per exchange from the options.
int chunk_count(int requested, bool overlap);

}  // namespace toru::fft::detail
