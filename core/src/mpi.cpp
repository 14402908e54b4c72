// SPDX-License-Identifier: BSD-3-Clause
#include "toru/core/mpi.hpp"

#include <climits>
#include <vector>

#include <fmt/format.h>

#include "toru/core/agreement.hpp"

namespace toru {

void check_mpi(int rc, const char* call, std::source_location where) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw error(errc::mpi, fmt::format("{} failed: {}", call, std::string_view(text, static_cast<std::size_t>(len))),
              where);
}

int mpi_rank(MPI_Comm comm) {
  int rank = 0;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  return rank;
}

int mpi_size(MPI_Comm comm) {
  int size = 0;
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  return size;
}

namespace detail {
// Errors and log lines carry the rank; a code that never told toru its rank gets the world rank
// the first time toru validates collectively (every plan and communicator does).
void stamp_error_rank() {
  if (error_rank() >= 0) return;
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) return;
  int rank = 0;
  if (MPI_Comm_rank(MPI_COMM_WORLD, &rank) == MPI_SUCCESS) set_error_rank(rank);
}
}  // namespace detail

void validate_collectively(MPI_Comm comm, const std::function<void()>& validate) {
  validate_collectively(comm, std::span<const same_on_all_ranks>{}, validate);
}

void expect_same_on_all_ranks(MPI_Comm comm, std::int64_t value, std::string_view what, std::source_location where) {
  validate_collectively(
      comm, {{what, value}}, [] {}, where);
}

}  // namespace toru
