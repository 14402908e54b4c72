// SPDX-License-Identifier: BSD-3-Clause
// The exit code a test program returns when it ran tests and every one of them skipped, so CTest
// (SKIP_RETURN_CODE) reports it skipped. A skip marker in the output would also match a program
// in which one test skipped and another failed, and report that failure as a skip.
#pragma once

#include <gtest/gtest.h>

namespace toru::test {

inline constexpr int all_skipped_exit_code = 77;

/// True when tests ran, none failed and every one skipped (this process's view).
inline bool all_tests_skipped() {
  const auto& unit = *testing::UnitTest::GetInstance();
  return unit.test_to_run_count() > 0 && unit.failed_test_count() == 0 &&
         unit.skipped_test_count() == unit.test_to_run_count() && !unit.ad_hoc_test_result().Failed();
}

}  // namespace toru::test
