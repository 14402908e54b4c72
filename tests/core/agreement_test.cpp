// The agreement of a collective call's arguments (toru/core/agreement.hpp): one allreduce carries the
// lowest failing rank and every agreed value; every rank throws the same error, never a hang.
#include <gtest/gtest.h>

#include <cstdint>
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

TEST(agreement, the_first_differing_value_is_named_with_its_range_on_every_rank) {
  const int P = toru::test::nranks(), me = toru::test::rank();
  if (P == 1) GTEST_SKIP() << "needs two ranks";
  for (int odd : {0, P - 1, P / 2}) {
    try {
      toru::validate_collectively(MPI_COMM_WORLD, {{"n", 7}, {"count", me == odd ? 5 : 3}, {"later", me}}, [] {});
      ADD_FAILURE() << "no rank threw";
    } catch (const toru::error& e) {
      EXPECT_EQ(e.code(), toru::errc::mismatch);
      EXPECT_EQ(e.message(), "count differs across ranks (from 3 to 5); every rank must pass the same value");
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
    EXPECT_EQ(e.message(), "torus differs across ranks; every rank must pass the same value");
    agreed_text(e);
  }
  EXPECT_NE(toru::digest("2x2"), toru::digest("4"));
  EXPECT_GE(toru::digest("anything"), 0);
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
