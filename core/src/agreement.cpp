#include "toru/core/agreement.hpp"

#include <algorithm>
#include <climits>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "toru/core/error.hpp"
#include "toru/core/mpi.hpp"

namespace toru {

namespace detail {
void stamp_error_rank();  // mpi.cpp
}  // namespace detail

std::int64_t digest(std::string_view bytes) noexcept {
  std::uint64_t h = 1469598103934665603ull;
  for (const char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return static_cast<std::int64_t>(h >> 2);  // non-negative, so that its negation is representable
}

void validate_collectively(MPI_Comm comm, std::span<const same_on_all_ranks> same,
                           const std::function<void()>& validate, std::source_location where) {
  detail::stamp_error_rank();
  int failed_rank = INT_MAX;
  errc code = errc::success;
  std::string message, failed_where;
  const int rank = mpi_rank(comm);
  try {
    validate();
  } catch (const error& e) {
    failed_rank = rank;
    code = e.code();
    message = e.message();
    failed_where = e.where();
  } catch (const std::exception& e) {
    failed_rank = rank;
    code = errc::internal;
    message = e.what();
    failed_where = "validation";
  }
  // One MIN-reduction answers both questions: the lowest failing rank, and for every value its
  // minimum and (as the minimum of its negation) its maximum.
  std::vector<std::int64_t> words(1 + 2 * same.size());
  words[0] = failed_rank;
  for (std::size_t i = 0; i < same.size(); ++i) {
    const std::int64_t v = std::max(same[i].value, -INT64_MAX);
    words[1 + 2 * i] = v;
    words[2 + 2 * i] = -v;
  }
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, words.data(), static_cast<int>(words.size()), MPI_INT64_T, MPI_MIN, comm),
            "MPI_Allreduce");
  const auto first = static_cast<int>(words[0]);
  if (first != INT_MAX) {
    // The first failing rank tells the others what went wrong.
    std::string packed = fmt::format("{}\n{}\n{}", static_cast<int>(code), failed_where, message);
    int len = static_cast<int>(packed.size());
    check_mpi(MPI_Bcast(&len, 1, MPI_INT, first, comm), "MPI_Bcast");
    packed.resize(static_cast<std::size_t>(len));
    check_mpi(MPI_Bcast(packed.data(), len, MPI_CHAR, first, comm), "MPI_Bcast");
    const auto nl1 = packed.find('\n');
    const auto nl2 = packed.find('\n', nl1 + 1);
    throw error(static_cast<errc>(std::stoi(packed.substr(0, nl1))), packed.substr(nl2 + 1), first,
                packed.substr(nl1 + 1, nl2 - nl1 - 1));
  }
  for (std::size_t i = 0; i < same.size(); ++i) {
    const std::int64_t lo = words[1 + 2 * i], hi = -words[2 + 2 * i];
    if (lo == hi) continue;
    const std::string text =
        same[i].is_digest ? fmt::format("{} differs across ranks; every rank must pass the same value", same[i].what)
                          : fmt::format("{} differs across ranks (from {} to {}); every rank must pass the same value",
                                        same[i].what, lo, hi);
    // No single rank raised it: the error carries no rank, so that every rank's text is the same.
    const error located(errc::mismatch, text, where);
    throw error(errc::mismatch, text, -1, located.where());
  }
}

void expect_intracommunicator(MPI_Comm comm, std::string_view argument, std::source_location where) {
  if (comm == MPI_COMM_NULL)
    throw error(errc::invalid_argument, fmt::format("{}: expected a communicator, got MPI_COMM_NULL", argument), where);
  int inter = 0;
  check_mpi(MPI_Comm_test_inter(comm, &inter), "MPI_Comm_test_inter", where);
  if (inter)
    throw error(errc::invalid_argument,
                fmt::format("{}: expected an intracommunicator, got an intercommunicator (toru's collectives run "
                            "within one group; use MPI_Intercomm_merge)",
                            argument),
                where);
}

}  // namespace toru
