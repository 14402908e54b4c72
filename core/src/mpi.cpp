#include "toru/core/mpi.hpp"

#include <climits>
#include <vector>

#include <fmt/format.h>

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

namespace {
// Errors and log lines carry the rank; a code that never told toru its rank gets the world rank
// the first time toru validates collectively (every plan and communicator does).
void stamp_error_rank() {
  if (detail::error_rank() >= 0) return;
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) return;
  int rank = 0;
  if (MPI_Comm_rank(MPI_COMM_WORLD, &rank) == MPI_SUCCESS) detail::set_error_rank(rank);
}
}  // namespace

void validate_collectively(MPI_Comm comm, const std::function<void()>& validate) {
  stamp_error_rank();
  int failed_rank = INT_MAX;
  errc code = errc::success;
  std::string message, where;
  const int rank = mpi_rank(comm);
  try {
    validate();
  } catch (const error& e) {
    failed_rank = rank;
    code = e.code();
    message = e.message();
    where = e.where();
  } catch (const std::exception& e) {
    failed_rank = rank;
    code = errc::internal;
    message = e.what();
    where = "validation";
  }
  int first = INT_MAX;
  check_mpi(MPI_Allreduce(&failed_rank, &first, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
  if (first == INT_MAX) return;

  // The first failing rank tells the others what went wrong.
  std::string packed = fmt::format("{}\n{}\n{}", static_cast<int>(code), where, message);
  int len = static_cast<int>(packed.size());
  check_mpi(MPI_Bcast(&len, 1, MPI_INT, first, comm), "MPI_Bcast");
  packed.resize(static_cast<std::size_t>(len));
  check_mpi(MPI_Bcast(packed.data(), len, MPI_CHAR, first, comm), "MPI_Bcast");
  const auto nl1 = packed.find('\n');
  const auto nl2 = packed.find('\n', nl1 + 1);
  throw error(static_cast<errc>(std::stoi(packed.substr(0, nl1))), packed.substr(nl2 + 1), first,
              packed.substr(nl1 + 1, nl2 - nl1 - 1));
}

void expect_same_on_all_ranks(MPI_Comm comm, std::int64_t value, std::string_view what, std::source_location where) {
  std::int64_t lo = 0, hi = 0;
  check_mpi(MPI_Allreduce(&value, &lo, 1, MPI_INT64_T, MPI_MIN, comm), "MPI_Allreduce");
  check_mpi(MPI_Allreduce(&value, &hi, 1, MPI_INT64_T, MPI_MAX, comm), "MPI_Allreduce");
  if (lo != hi)
    throw error(
        errc::mismatch,
        fmt::format("{} differs across ranks (from {} to {}); every rank must pass the same value", what, lo, hi),
        where);
}

}  // namespace toru
