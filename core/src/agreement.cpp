// SPDX-License-Identifier: BSD-3-Clause
#include "toru/core/agreement.hpp"

#include <array>
#include <climits>
#include <exception>
#include <string>
#include <utility>
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

namespace {

thread_local std::exception_ptr deferred;

// Every rank throws the error that rank `root` describes (code, where, message): the root's own
// text reaches the others through two broadcasts.
[[noreturn]] void throw_from(MPI_Comm comm, int root, errc code, const std::string& where, const std::string& message,
                             int error_rank) {
  std::string packed = fmt::format("{}\n{}\n{}", static_cast<int>(code), where, message);
  int len = static_cast<int>(packed.size());
  check_mpi(MPI_Bcast(&len, 1, MPI_INT, root, comm), "MPI_Bcast");
  packed.resize(static_cast<std::size_t>(len));
  check_mpi(MPI_Bcast(packed.data(), len, MPI_CHAR, root, comm), "MPI_Bcast");
  const auto nl1 = packed.find('\n');
  const auto nl2 = packed.find('\n', nl1 + 1);
  throw error(static_cast<errc>(std::stoi(packed.substr(0, nl1))), packed.substr(nl2 + 1), error_rank,
              packed.substr(nl1 + 1, nl2 - nl1 - 1));
}

// Rank 0's value of `mine` and the lowest rank whose value differs from it (INT_MAX if none).
std::pair<std::int64_t, int> rank0_and_culprit(MPI_Comm comm, int rank, std::int64_t mine) {
  std::int64_t v0 = mine;
  check_mpi(MPI_Bcast(&v0, 1, MPI_INT64_T, 0, comm), "MPI_Bcast");
  int differs = mine != v0 ? rank : INT_MAX, culprit = INT_MAX;
  check_mpi(MPI_Allreduce(&differs, &culprit, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
  return {v0, culprit};
}

}  // namespace

defer_error::defer_error(std::exception_ptr e) noexcept { deferred = std::move(e); }
defer_error::~defer_error() { deferred = nullptr; }

void validate_collectively(MPI_Comm comm, std::string_view call, std::span<const same_on_all_ranks> same,
                           const std::function<void()>& validate, std::source_location where) {
  detail::stamp_error_rank();
  // The count is fixed per call site, so every rank refuses an overlong list alike, without communicating.
  if (same.size() > max_same_on_all_ranks)
    throw error(errc::internal,
                fmt::format("{}: {} arguments to agree on, at most {}", call.empty() ? "validate_collectively" : call,
                            same.size(), max_same_on_all_ranks),
                where);
  std::exception_ptr mine = std::exchange(deferred, nullptr);
  if (!mine) {
    try {
      validate();
    } catch (...) {
      mine = std::current_exception();
    }
  }
  const int rank = mpi_rank(comm);
  const std::int64_t call_id = digest(call);

  // The common path: one MIN-reduction of three words, the lowest failing rank and min(h), min(~h)
  // = ~max(h) of a hash h of the call and every value. Equal hashes mean agreement (a collision would
  // have to be between two ranks' values in one call).
  std::uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&h](std::int64_t v) {
    h ^= static_cast<std::uint64_t>(v) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 0x100000001b3ull;
  };
  mix(call_id);
  for (const auto& s : same) mix(s.value);
  const auto hash = static_cast<std::int64_t>(h >> 1);
  const std::int64_t failed = mine ? rank : INT64_MAX;
  std::array<std::int64_t, 3> small{failed, hash, ~hash};
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, small.data(), 3, MPI_INT64_T, MPI_MIN, comm), "MPI_Allreduce", where);
  if (small[0] == INT64_MAX && small[1] == ~small[2]) return;

  // The rare path, taken by every rank alike since it depends on reduced values only: the call and
  // each value side by side as min(v) and min(~v) (unused slots neutral), so the error can name what
  // differs. Its fixed size keeps ranks in different calls in one matching allreduce.
  constexpr std::size_t words = 3 + 2 * max_same_on_all_ranks;
  std::array<std::int64_t, words> word{};
  word[0] = failed;
  word[1] = call_id;
  word[2] = ~call_id;
  std::size_t at = 3;
  for (const auto& s : same) {
    word[at++] = s.value;
    word[at++] = ~s.value;
  }
  for (; at < words; at += 2) word[at + 1] = ~std::int64_t{0};
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, word.data(), static_cast<int>(words), MPI_INT64_T, MPI_MIN, comm),
            "MPI_Allreduce", where);

  // No single rank raised a mismatch: the error carries no rank, so that every rank's text is the same.
  const std::string located = error(errc::mismatch, "", where).where();
  if (word[1] != ~word[2]) {
    // Ranks in different calls: their own checks and values are about unrelated things.
    const int culprit = rank0_and_culprit(comm, rank, call_id).second;
    const std::string text = fmt::format(
        "rank {} {} while rank 0 makes another toru collective call; every rank must make the same "
        "calls in the same order",
        culprit, call.empty() ? std::string("makes an unnamed one") : fmt::format("calls {}", call));
    throw_from(comm, culprit, errc::mismatch, located, text, -1);
  }
  // A rank's own invalid argument says more than the disagreement it causes, so it wins.
  if (word[0] != INT64_MAX) {
    const auto first = static_cast<int>(word[0]);
    errc code = errc::internal;
    std::string message, failed_where = "validation";
    if (rank == first) {
      try {
        std::rethrow_exception(mine);
      } catch (const error& e) {
        code = e.code();
        message = e.message();
        failed_where = e.where();
      } catch (const std::exception& e) {
        message = e.what();
      } catch (...) {
        message = "an exception that is not a std::exception";
      }
    }
    throw_from(comm, first, code, failed_where, message, first);
  }
  const std::string prefix = call.empty() ? std::string() : fmt::format("{}: ", call);
  for (std::size_t i = 0; i < same.size(); ++i) {
    if (word[3 + 2 * i] == ~word[4 + 2 * i]) continue;
    const auto [v0, culprit] = rank0_and_culprit(comm, rank, same[i].value);
    // Only the culprit knows its value: it tells the others.
    std::int64_t theirs = same[i].value;
    check_mpi(MPI_Bcast(&theirs, 1, MPI_INT64_T, culprit, comm), "MPI_Bcast", where);
    const std::string text =
        same[i].is_digest ? fmt::format(
                                "{}{} differs across ranks (rank {} passes another value than rank 0); every rank must "
                                "pass the same value",
                                prefix, same[i].what, culprit)
                          : fmt::format(
                                "{}{} differs across ranks (rank 0 passes {}, rank {} passes {}); every rank must pass "
                                "the same value",
                                prefix, same[i].what, v0, culprit, theirs);
    throw error(errc::mismatch, text, -1, located);
  }
  throw error(errc::internal, "the agreement saw a difference it cannot name", -1, located);  // unreachable
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
