// SPDX-License-Identifier: BSD-3-Clause
#include <gtest/gtest.h>

#include "mpi_test.hpp"
#include "toru/core/mpi.hpp"

TEST(validate_collectively, passes_when_all_ranks_pass) {
  EXPECT_NO_THROW(toru::validate_collectively(MPI_COMM_WORLD, [] {}));
}

TEST(validate_collectively, every_rank_throws_the_lowest_failing_ranks_error) {
  const int n = toru::test::nranks();
  const int bad = n - 1;  // the last rank fails; the others must hear about it
  try {
    toru::validate_collectively(MPI_COMM_WORLD, [&] {
      if (toru::test::rank() >= bad) throw toru::error(toru::errc::invalid_argument, "count: expected 4, got 5");
    });
    FAIL() << "no rank threw";
  } catch (const toru::error& e) {
    EXPECT_EQ(e.code(), toru::errc::invalid_argument);
    EXPECT_EQ(e.rank(), bad);
    EXPECT_EQ(e.message(), "count: expected 4, got 5");
  }
}

TEST(expect_same_on_all_ranks, detects_a_difference) {
  EXPECT_NO_THROW(toru::expect_same_on_all_ranks(MPI_COMM_WORLD, 42, "n"));
  if (toru::test::nranks() == 1) return;
  EXPECT_THROW(toru::expect_same_on_all_ranks(MPI_COMM_WORLD, toru::test::rank(), "n"), toru::error);
}

TEST(check_mpi, translates_an_error_code) {
  try {
    toru::check_mpi(MPI_ERR_COUNT, "MPI_Send");
    FAIL();
  } catch (const toru::error& e) {
    EXPECT_EQ(e.code(), toru::errc::mpi);
    EXPECT_NE(e.message().find("MPI_Send failed"), std::string::npos);
  }
}
