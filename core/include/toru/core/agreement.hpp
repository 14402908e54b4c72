// Agreement of a collective call's arguments across ranks (target toru::core_mpi): the mechanism
// behind the rule that a public entry point agrees on all its arguments before any rank may fail.
//
//   toru::validate_collectively(comm, {{"count", count}, toru::same_text("options.torus", spec)}, [&] {
//     toru::expect(count >= 0, "count", ">= 0", std::to_string(count));   // local checks
//   });
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <source_location>
#include <span>
#include <string_view>

namespace toru {

/// One argument of a collective call that every rank must pass with the same value: its name for
/// the error message, and the value itself or, for text and arrays, its digest (see same_text).
struct same_on_all_ranks {
  std::string_view what;
  std::int64_t value = 0;
  bool is_digest = false;  // the message then omits the (meaningless) values
};

/// A 62-bit digest (FNV-1a) of bytes, for same_on_all_ranks.
std::int64_t digest(std::string_view bytes) noexcept;
inline same_on_all_ranks same_text(std::string_view what, std::string_view text) noexcept {
  return {what, digest(text), true};
}

/// Collective: validate_collectively (toru/core/mpi.hpp), and in the same single MPI_Allreduce a check
/// that every entry of `same` holds one value on every rank (every rank passes the same number of
/// entries). An error thrown by `validate` on any rank wins (every rank throws the lowest failing
/// rank's error); otherwise the first entry that differs makes every rank throw the same
/// errc::mismatch naming it (with no rank: the text is identical on every rank).
void validate_collectively(MPI_Comm comm, std::span<const same_on_all_ranks> same,
                           const std::function<void()>& validate,
                           std::source_location where = std::source_location::current());
inline void validate_collectively(MPI_Comm comm, std::initializer_list<same_on_all_ranks> same,
                                  const std::function<void()>& validate,
                                  std::source_location where = std::source_location::current()) {
  validate_collectively(comm, std::span<const same_on_all_ranks>(same.begin(), same.size()), validate, where);
}

/// Local: throws errc::invalid_argument naming `argument` unless `comm` can carry toru's collectives:
/// not MPI_COMM_NULL, not an intercommunicator (MPI_Comm_test_inter). Every rank passes the same kind
/// of communicator, so every rank refuses it without communicating.
void expect_intracommunicator(MPI_Comm comm, std::string_view argument,
                              std::source_location where = std::source_location::current());

}  // namespace toru
