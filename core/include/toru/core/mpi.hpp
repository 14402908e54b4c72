// SPDX-License-Identifier: BSD-3-Clause
// MPI helpers shared by the MPI-based modules (target toru::core_mpi).
// swap/ stays free of MPI by linking toru::core only.
#pragma once

#include <mpi.h>

#include <complex>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <source_location>
#include <string>

#include "toru/core/error.hpp"

namespace toru {

/// Throws errc::mpi with MPI's own error string unless rc == MPI_SUCCESS.
/// MPI must have been told MPI_ERRORS_RETURN on the communicator for this to see failures.
void check_mpi(int rc, const char* call, std::source_location where = std::source_location::current());

int mpi_rank(MPI_Comm comm);
int mpi_size(MPI_Comm comm);

/// Collective: runs `validate` on every rank; if it throws a toru::error on any rank, every
/// rank throws the error of the lowest failing rank (code, message and that rank), so no rank
/// is left waiting in a later collective. Other exceptions are reported as errc::internal.
void validate_collectively(MPI_Comm comm, const std::function<void()>& validate);

/// Collective: throws errc::mismatch naming `what` unless `value` is equal on every rank.
void expect_same_on_all_ranks(MPI_Comm comm, std::int64_t value, std::string_view what,
                              std::source_location where = std::source_location::current());

/// The MPI datatype of a C++ arithmetic type.
template <class T>
MPI_Datatype mpi_type() {
  if constexpr (std::is_same_v<T, char>)
    return MPI_CHAR;
  else if constexpr (std::is_same_v<T, std::byte> || std::is_same_v<T, unsigned char>)
    return MPI_BYTE;
  else if constexpr (std::is_same_v<T, int>)
    return MPI_INT;
  else if constexpr (std::is_same_v<T, unsigned>)
    return MPI_UNSIGNED;
  else if constexpr (std::is_same_v<T, long>)
    return MPI_LONG;
  else if constexpr (std::is_same_v<T, long long>)
    return MPI_LONG_LONG;
  else if constexpr (std::is_same_v<T, unsigned long>)
    return MPI_UNSIGNED_LONG;
  else if constexpr (std::is_same_v<T, unsigned long long>)
    return MPI_UNSIGNED_LONG_LONG;
  else if constexpr (std::is_same_v<T, float>)
    return MPI_FLOAT;
  else if constexpr (std::is_same_v<T, double>)
    return MPI_DOUBLE;
  else if constexpr (std::is_same_v<T, std::complex<float>>)
    return MPI_C_FLOAT_COMPLEX;
  else if constexpr (std::is_same_v<T, std::complex<double>>)
    return MPI_C_DOUBLE_COMPLEX;
  else
    static_assert(sizeof(T) == 0, "no MPI datatype for this type");
}

}  // namespace toru
