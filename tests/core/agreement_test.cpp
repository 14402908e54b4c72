// SPDX-License-Identifier: BSD-3-Clause
// The agreement of a collective call's arguments (toru/core/agreement.hpp): one allreduce carries the
// lowest failing rank and every agreed value; every rank throws the same error, never a hang.
#include <gtest/gtest.h>

#include <cstdint>
#include <exception>
#include <span>
#include <string>
#include <vector>

#include "mpi_test.hpp"
#include "toru/core/agreement.hpp"
#include "toru/core/error.hpp"

namespace {

// The error every rank threw, with all ranks' texts compared: returns the text when they agree.
std::string agreed_text(const toru::error& e) {
  const std::string mine = e.what();
  int len = static_cast<int>(mine.size()), max_len = 0;
  MPI_Allreduce(&len, &max_len, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  std::string padded = mine, first;
  padded.resize(static_cast<std::size_t>(max_len), '\0');
  first = padded;
  MPI_Bcast(first.data(), max_len, MPI_CHAR, 0, MPI_COMM_WORLD);
  int same = padded == first ? 1 : 0, all = 0;
  MPI_Allreduce(&same, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  EXPECT_EQ(all, 1) << "the error text differs across ranks; this rank's: " << mine;
  return mine;
}

TEST(agreement, equal_values_pass) {
  EXPECT_NO_THROW(toru::validate_collectively(MPI_COMM_WORLD, {{"n", 7}, toru::same_text("spec", "2x2")}, [] {}));
  EXPECT_NO_THROW(toru::validate_collectively(MPI_COMM_WORLD, {{"n", INT64_MIN}, {"m", INT64_MAX}}, [] {}));
}

TEST(agreement, the_first_differing_value_is_named_with_rank_0s_value_and_the_culprit_on_every_rank) {
  const int P = toru::test::nranks(), me = toru::test::rank();
  if (P == 1) GTEST_SKIP() << "needs two ranks";
  for (int odd : {0, P - 1, P / 2}) {
    try {
      toru::validate_collectively(MPI_COMM_WORLD, {{"n", 7}, {"count", me == odd ? 5 : 3}, {"later", me}}, [] {});
      ADD_FAILURE() << "no rank threw";
    } catch (const toru::error& e) {
      EXPECT_EQ(e.code(), toru::errc::mismatch);
      // Rank 0's value, and the lowest rank passing another one with its value.
      const int culprit = odd == 0 ? 1 : odd;
      EXPECT_EQ(e.message(), "count differs across ranks (rank 0 passes " + std::to_string(odd == 0 ? 5 : 3) +
                                 ", rank " + std::to_string(culprit) + " passes " + std::to_string(odd == 0 ? 3 : 5) +
                                 "); every rank must pass the same value");
      EXPECT_EQ(e.rank(), -1);
      agreed_text(e);
    }
  }
}

TEST(agreement, text_differs_by_digest_without_values) {
  const int P = toru::test::nranks(), me = toru::test::rank();
  if (P == 1) GTEST_SKIP() << "needs two ranks";
  const std::vector<toru::same_on_all_ranks> same = {toru::same_text("torus", me == P - 1 ? "2x2" : "4")};
  try {
    toru::validate_collectively(MPI_COMM_WORLD, same, [] {});
    ADD_FAILURE() << "no rank threw";
  } catch (const toru::error& e) {
    EXPECT_EQ(e.message(), "torus differs across ranks (rank " + std::to_string(P - 1) +
                               " passes another value than rank 0); every rank must pass the same value");
    agreed_text(e);
  }
  EXPECT_NE(toru::digest("2x2"), toru::digest("4"));
  EXPECT_GE(toru::digest("anything"), 0);
}

TEST(agreement, a_named_call_prefixes_the_difference) {
  const int P = toru::test::nranks(), me = toru::test::rank();
  if (P == 1) GTEST_SKIP() << "needs two ranks";
  try {
    toru::validate_collectively(MPI_COMM_WORLD, "toru::f", {{"n", me == P - 1 ? INT64_MIN : INT64_MAX}}, [] {});
    ADD_FAILURE() << "no rank threw";
  } catch (const toru::error& e) {
    EXPECT_EQ(e.code(), toru::errc::mismatch);
    EXPECT_EQ(e.message(), "toru::f: n differs across ranks (rank 0 passes " + std::to_string(INT64_MAX) + ", rank " +
                               std::to_string(P - 1) + " passes " + std::to_string(INT64_MIN) +
                               "); every rank must pass the same value");
    agreed_text(e);
  }
}

// Ranks in different calls, with different numbers of values and one failing its own checks, still
// meet in matching (fixed-size) reductions: the different call wins, named on every rank.
TEST(agreement, ranks_in_different_calls_get_a_mismatch_not_a_hang) {
  const int P = toru::test::nranks(), me = toru::test::rank();
  if (P == 1) GTEST_SKIP() << "needs two ranks";
  for (int odd : {0, P - 1}) {
    try {
      if (me == odd)
        toru::validate_collectively(MPI_COMM_WORLD, "g", {{"a", 1}, {"b", 2}, {"c", 3}}, [] {
          throw toru::error(toru::errc::invalid_argument, "a: expected something else");
        });
      else
        toru::validate_collectively(MPI_COMM_WORLD, "f", {{"a", 1}}, [] {});
      ADD_FAILURE() << "no rank threw";
    } catch (const toru::error& e) {
      EXPECT_EQ(e.code(), toru::errc::mismatch);
      const std::string expected = odd == 0 ? "rank 1 calls f" : "rank " + std::to_string(odd) + " calls g";
      EXPECT_EQ(e.message(), expected +
                                 " while rank 0 makes another toru collective call; every rank must make the "
                                 "same calls in the same order");
      agreed_text(e);
    }
  }
  // An unnamed call among named ones.
  try {
    toru::validate_collectively(MPI_COMM_WORLD, me == P - 1 ? "" : "f", std::span<const toru::same_on_all_ranks>{},
                                [] {});
    ADD_FAILURE() << "no rank threw";
  } catch (const toru::error& e) {
    EXPECT_EQ(e.code(), toru::errc::mismatch);
    EXPECT_EQ(e.message().rfind("rank " + std::to_string(P - 1) + " makes an unnamed one while rank 0", 0), 0u)
        << e.what();
    agreed_text(e);
  }
}

TEST(agreement, a_deferred_error_rides_on_the_next_agreement) {
  const int P = toru::test::nranks(), me = toru::test::rank();
  bool ran = false;
  try {
    const toru::defer_error d(me == P - 1 ? std::make_exception_ptr(toru::error(toru::errc::invalid_argument,
                                                                                "out: expected a pointer, got NULL"))
                                          : nullptr);
    toru::validate_collectively(MPI_COMM_WORLD, {{"n", 1}}, [&] { ran = true; });
    ADD_FAILURE() << "no rank threw";
  } catch (const toru::error& e) {
    EXPECT_EQ(e.code(), toru::errc::invalid_argument);
    EXPECT_EQ(e.rank(), P - 1);
    EXPECT_EQ(e.message(), "out: expected a pointer, got NULL");
    agreed_text(e);
  }
  EXPECT_EQ(ran, me != P - 1) << "the deferred error replaces this rank's own checks";
  // Consumed (and dropped with its scope): the next agreement passes.
  EXPECT_NO_THROW(toru::validate_collectively(MPI_COMM_WORLD, {{"n", 1}}, [] {}));
}

TEST(agreement, a_local_error_wins_over_a_difference) {
  const int P = toru::test::nranks(), me = toru::test::rank();
  try {
    toru::validate_collectively(MPI_COMM_WORLD, {{"count", me}}, [&] {
      if (me == P - 1) throw toru::error(toru::errc::invalid_argument, "plan: expected a pointer, got NULL");
    });
    ADD_FAILURE() << "no rank threw";
  } catch (const toru::error& e) {
    EXPECT_EQ(e.code(), toru::errc::invalid_argument);
    EXPECT_EQ(e.rank(), P - 1);
    agreed_text(e);
  }
}

TEST(agreement, null_and_inter_communicators_are_refused_locally) {
  try {
    toru::expect_intracommunicator(MPI_COMM_NULL, "comm");
    ADD_FAILURE() << "MPI_COMM_NULL accepted";
  } catch (const toru::error& e) {
    EXPECT_EQ(e.code(), toru::errc::invalid_argument);
    EXPECT_NE(e.message().find("MPI_COMM_NULL"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(toru::expect_intracommunicator(MPI_COMM_WORLD, "comm"));
  EXPECT_NO_THROW(toru::expect_intracommunicator(MPI_COMM_SELF, "comm"));
  const int P = toru::test::nranks(), me = toru::test::rank();
  if (P < 2) return;
  MPI_Comm half = MPI_COMM_NULL, inter = MPI_COMM_NULL;
  const int lower = me < P / 2 ? 1 : 0;
  MPI_Comm_split(MPI_COMM_WORLD, lower, me, &half);
  MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, lower ? P / 2 : 0, 11, &inter);
  try {
    toru::expect_intracommunicator(inter, "comm");
    ADD_FAILURE() << "an intercommunicator was accepted";
  } catch (const toru::error& e) {
    EXPECT_EQ(e.code(), toru::errc::invalid_argument);
    EXPECT_NE(e.message().find("intercommunicator"), std::string::npos) << e.what();
  }
  MPI_Comm_free(&inter);
  MPI_Comm_free(&half);
}

}  // namespace
