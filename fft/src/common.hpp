// Small helpers shared by the 3D and 1D plans.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <exception>
#include <functional>
#include <initializer_list>
#include <string_view>
#include <utility>
#include <vector>

#include "toru/fft/options.hpp"

namespace toru::fft::detail {

/// Not collective: throws errc::invalid_argument for MPI_COMM_NULL and for an intercommunicator,
/// before any MPI call that would abort the job on them (MPI_ERR_COMM). These are the only
/// arguments no rank can agree on: a rank passing MPI_COMM_NULL has nobody to tell.
void expect_usable_comm(MPI_Comm comm);

/// One argument of a collective call that every rank must pass alike: its name and its value
/// (enums and flags as integers).
using agreed = std::pair<std::string_view, std::int64_t>;

/// Collective, one MPI_Allreduce of three int64 when all is well (the lowest failing rank and a
/// hash of `call` and `values`): runs `validate` (this rank's own checks) and compares `call` and
/// `values` (at most max_agreed) across ranks. If `validate` throws on any rank, every rank throws
/// the error of the lowest such rank (through validate_collectively); otherwise, if the call or a
/// value differs, every rank throws the same errc::mismatch naming it, the value on rank 0 and the
/// lowest rank that differs from it. So one rank's bad argument is the same error on every rank,
/// never a hang. Ranks in different toru::fft calls (a plan on one, an execute on another) meet in
/// the same fixed-size allreduces and get a mismatch.
inline constexpr std::size_t max_agreed = 16;
void agree_and_validate(MPI_Comm comm, std::string_view call, std::initializer_list<agreed> values,
                        const std::function<void()>& validate);

/// The C API's own argument errors (a NULL out-pointer, an enum value outside its range) ride on
/// the agreement of the C++ call that follows instead of costing a collective of their own: while
/// a defer_error is alive on this thread, the next agree_and_validate reports `e` as this rank's
/// validation failure (the C++ call then throws it on every rank before doing anything else).
class defer_error {
 public:
  explicit defer_error(std::exception_ptr e);
  ~defer_error();
  defer_error(const defer_error&) = delete;
  defer_error& operator=(const defer_error&) = delete;
};

/// Not collective (run inside agree_and_validate): throws errc::invalid_argument for a null buffer
/// where this rank has elements to read or write.
void check_buffers(const void* in, std::int64_t in_elems, const void* out, std::int64_t out_elems);

/// Not collective (run inside agree_and_validate): throws errc::invalid_argument unless s is a scale.
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
