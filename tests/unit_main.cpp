// SPDX-License-Identifier: BSD-3-Clause
// The gtest main for unit tests: gtest's own, except that a program whose every test skipped
// exits with all_skipped_exit_code, which CTest reports as skipped rather than passed.
#include <gtest/gtest.h>

#include "skip_status.hpp"

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  const int result = RUN_ALL_TESTS();
  if (result == 0 && toru::test::all_tests_skipped()) return toru::test::all_skipped_exit_code;
  return result;
}
