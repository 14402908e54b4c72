// Small helpers shared by the 3D and 1D plans.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <initializer_list>
#include <string_view>
#include <utility>
#include <vector>

#include "toru/fft/options.hpp"

namespace toru::fft::detail {

/// Collective: throws errc::mismatch on every rank, naming the first argument that differs
/// across ranks (two allreduces for all of them).
void expect_agreement(MPI_Comm comm, std::initializer_list<std::pair<std::string_view, std::int64_t>> values);

/// Collective: throws errc::invalid_argument on every rank if any rank passes a null buffer
/// where it has elements to read or write.
void expect_buffers(MPI_Comm comm, const void* in, std::int64_t in_elems, const void* out, std::int64_t out_elems);

unsigned fftw_flags(effort e);
double scale_factor(scale s, double n);

/// Units per chunk for a line op over `units` units in `chunks` chunks, plus the whole batch.
std::vector<std::int64_t> chunk_batches(std::int64_t units, int chunks);

/// Chunks per exchange from the options.
int chunk_count(int requested, bool overlap);

}  // namespace toru::fft::detail
