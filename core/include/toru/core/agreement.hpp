// SPDX-License-Identifier: BSD-3-Clause
// Agreement of a collective call's arguments across ranks (target toru::core_mpi): the mechanism
// behind the rule that a public entry point agrees on all its arguments before any rank may fail.
//
//   toru::validate_collectively(comm, "toru::f", {{"count", count}, toru::same_text("options.torus", spec)}, [&] {
//     toru::expect(count >= 0, "count", ">= 0", std::to_string(count));   // local checks
//   });
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <exception>
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

/// At most this many entries of same_on_all_ranks per call: the rare path's allreduce has a fixed size.
inline constexpr std::size_t max_same_on_all_ranks = 16;

/// Collective: runs `validate` (this rank's own checks) and checks that every rank makes the same
/// `call` (a name hashed into the agreement; "" for an unnamed call) and passes one value for every
/// entry of `same` (at most max_same_on_all_ranks, the same count on every rank).
///
/// When all is well, one MPI_Allreduce of three int64: the lowest failing rank and min(h), min(~h)
/// of a hash h of the call and every value. Otherwise every rank (the decision depends on reduced
/// values only) takes a second allreduce of a fixed 3 + 2 * max_same_on_all_ranks words to name
/// what differs, and every rank throws one error with the same text:
///  - the call differs: errc::mismatch naming the lowest rank whose call differs from rank 0's;
///  - `validate` threw on some rank: the error of the lowest such rank (code, message, rank);
///  - else the first differing entry: errc::mismatch naming it, rank 0's value and the lowest rank
///    passing another (digests name only the rank); the error carries no rank of its own.
/// Both allreduces have fixed sizes, so ranks in different calls (a plan on one rank, an execute on
/// another) meet in matching reductions and get a mismatch instead of undefined behaviour.
void validate_collectively(MPI_Comm comm, std::string_view call, std::span<const same_on_all_ranks> same,
                           const std::function<void()>& validate,
                           std::source_location where = std::source_location::current());
inline void validate_collectively(MPI_Comm comm, std::string_view call, std::initializer_list<same_on_all_ranks> same,
                                  const std::function<void()>& validate,
                                  std::source_location where = std::source_location::current()) {
  validate_collectively(comm, call, std::span<const same_on_all_ranks>(same.begin(), same.size()), validate, where);
}
/// The same for an unnamed call.
inline void validate_collectively(MPI_Comm comm, std::span<const same_on_all_ranks> same,
                                  const std::function<void()>& validate,
                                  std::source_location where = std::source_location::current()) {
  validate_collectively(comm, std::string_view{}, same, validate, where);
}
inline void validate_collectively(MPI_Comm comm, std::initializer_list<same_on_all_ranks> same,
                                  const std::function<void()>& validate,
                                  std::source_location where = std::source_location::current()) {
  validate_collectively(comm, std::string_view{}, std::span<const same_on_all_ranks>(same.begin(), same.size()),
                        validate, where);
}

/// An error found before a collective call's agreement (a C API's NULL out-pointer, a span too
/// short) rides on that agreement instead of costing a collective of its own: while a defer_error
/// is alive on this thread, the next validate_collectively reports `e` as this rank's failure in
/// place of running its `validate`, so every rank throws it before doing anything else.
class defer_error {
 public:
  explicit defer_error(std::exception_ptr e) noexcept;
  ~defer_error();
  defer_error(const defer_error&) = delete;
  defer_error& operator=(const defer_error&) = delete;
};

/// Local: throws errc::invalid_argument naming `argument` unless `comm` can carry toru's collectives:
/// not MPI_COMM_NULL, not an intercommunicator (MPI_Comm_test_inter). Every rank passes the same kind
/// of communicator, so every rank refuses it without communicating.
void expect_intracommunicator(MPI_Comm comm, std::string_view argument,
                              std::source_location where = std::source_location::current());

}  // namespace toru
