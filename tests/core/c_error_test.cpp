// SPDX-License-Identifier: BSD-3-Clause
// toru/core.h's error calls come from toru::core alone (this test links nothing above it): the
// short text of each code, and toru_last_error(), which keeps the message of the calling thread's
// last failed C call (every module's C calls store it through c_guarded) and no other thread's.
#include <gtest/gtest.h>

#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>

#include "toru/core.h"
#include "toru/core/error.hpp"
#include "toru/detail/c_guard.hpp"

TEST(core_c_error, every_code_has_its_own_text) {
  EXPECT_STREQ(toru_error_string(TORU_SUCCESS), "success");
  EXPECT_STREQ(toru_error_string(TORU_ERROR_INVALID_ARGUMENT), "invalid argument");
  EXPECT_STREQ(toru_error_string(TORU_ERROR_OUT_OF_MEMORY), "out of memory");
  EXPECT_STREQ(toru_error_string(static_cast<toru_result>(99)), "unknown result code");
  for (int a = TORU_SUCCESS; a <= TORU_ERROR_INTERNAL; ++a)
    for (int b = a + 1; b <= TORU_ERROR_INTERNAL; ++b)
      EXPECT_STRNE(toru_error_string(static_cast<toru_result>(a)), toru_error_string(static_cast<toru_result>(b)))
          << a << " and " << b;
}

TEST(core_c_error, a_failure_is_kept_and_a_success_clears_it) {
  const toru_result r = toru::detail::c_guarded([] { toru::expect(false, "extent[1]", "a positive integer", "-3"); });
  EXPECT_EQ(r, TORU_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(toru_last_error(), "extent[1]"), nullptr) << toru_last_error();
  EXPECT_NE(std::strstr(toru_last_error(), "-3"), nullptr) << toru_last_error();

  EXPECT_EQ(toru::detail::c_guarded([] { throw std::bad_alloc(); }), TORU_ERROR_OUT_OF_MEMORY);
  EXPECT_STRNE(toru_last_error(), "");
  EXPECT_EQ(toru::detail::c_guarded([] { throw std::runtime_error("boom"); }), TORU_ERROR_INTERNAL);
  EXPECT_STREQ(toru_last_error(), "boom");

  EXPECT_EQ(toru::detail::c_guarded([] {}), TORU_SUCCESS);
  EXPECT_STREQ(toru_last_error(), "");
}

TEST(core_c_error, each_thread_reads_its_own_failure) {
  toru::detail::c_guarded([] { throw toru::error(toru::errc::mismatch, "main thread's failure"); });
  std::string other_before, other_after;
  std::thread t([&] {
    other_before = toru_last_error();
    toru::detail::c_guarded([] { throw toru::error(toru::errc::io, "other thread's failure"); });
    other_after = toru_last_error();
  });
  t.join();
  EXPECT_EQ(other_before, "");
  EXPECT_NE(other_after.find("other thread's failure"), std::string::npos) << other_after;
  EXPECT_NE(std::string(toru_last_error()).find("main thread's failure"), std::string::npos) << toru_last_error();
}
