// SPDX-License-Identifier: BSD-3-Clause
#include <gtest/gtest.h>

#include "toru/core/error.hpp"

TEST(error, message_names_argument_expected_and_got) {
  try {
    toru::expect(false, "extent[1]", "a positive integer", "-3");
    FAIL() << "expect(false, ...) did not throw";
  } catch (const toru::error& e) {
    EXPECT_EQ(e.code(), toru::errc::invalid_argument);
    EXPECT_EQ(e.message(), "extent[1]: expected a positive integer, got -3");
    EXPECT_NE(std::string(e.what()).find("invalid_argument"), std::string::npos);
    EXPECT_NE(e.where().find("error_test.cpp"), std::string::npos) << e.where();
  }
}

TEST(error, expect_true_does_not_throw) { EXPECT_NO_THROW(toru::expect(true, "x", "y", "z")); }

TEST(error, rank_is_stamped) {
  toru::set_error_rank(7);
  toru::error e(toru::errc::io, "cannot open f");
  EXPECT_EQ(e.rank(), 7);
  EXPECT_NE(std::string(e.what()).find("rank 7"), std::string::npos);
  toru::set_error_rank(-1);
}

TEST(error, every_code_has_a_name) {
  for (int c = 0; c <= static_cast<int>(toru::errc::internal); ++c)
    EXPECT_NE(toru::to_string(static_cast<toru::errc>(c)), "unknown") << c;
}
