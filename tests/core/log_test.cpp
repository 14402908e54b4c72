// SPDX-License-Identifier: BSD-3-Clause
// toru::log: the level TORU_LOG selects (read once, from this process's environment; CTest runs
// this program once per setting, see CMakeLists.txt), the line format, and that a message above
// the level is neither written nor formatted.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <string_view>

#include "toru/core/error.hpp"
#include "toru/core/log.hpp"

namespace {

// The documented rule, written out independently: error, warn, info, debug; anything else warn.
int expected_level() {
  const char* env = std::getenv("TORU_LOG");
  const std::string v = env ? env : "";
  if (v == "error") return 0;
  if (v == "info") return 2;
  if (v == "debug") return 3;
  return 1;
}

bool contains(const std::string& s, std::string_view what) { return s.find(what) != std::string::npos; }

TEST(log, level_comes_from_toru_log) {
  EXPECT_EQ(static_cast<int>(toru::log::current_level()), expected_level())
      << "TORU_LOG=" << (std::getenv("TORU_LOG") ? std::getenv("TORU_LOG") : "(unset)");
}

TEST(log, writes_what_the_level_allows_with_level_and_rank) {
  const int lvl = expected_level();
  testing::internal::CaptureStderr();
  toru::log::warn("w {} {}", 1, "one");
  toru::log::info("i {}", 2.5);
  toru::log::debug("d {:>3}", 7);
  const std::string out = testing::internal::GetCapturedStderr();
  const int rank = toru::error_rank();
  EXPECT_EQ(contains(out, "[toru warn rank " + std::to_string(rank) + "] w 1 one\n"), lvl >= 1) << out;
  EXPECT_EQ(contains(out, "[toru info rank " + std::to_string(rank) + "] i 2.5\n"), lvl >= 2) << out;
  EXPECT_EQ(contains(out, "[toru debug rank " + std::to_string(rank) + "] d   7\n"), lvl >= 3) << out;
  // Nothing else: one line per message written.
  EXPECT_EQ(static_cast<int>(std::count(out.begin(), out.end(), '\n')), std::max(0, lvl));
}

TEST(log, write_prints_whole_messages_at_any_level) {
  // write() itself does not filter: the level check is the callers' (the templates above).
  testing::internal::CaptureStderr();
  toru::log::write(toru::log::level::error, std::string_view("no terminator here", 5));
  const std::string out = testing::internal::GetCapturedStderr();
  EXPECT_EQ(out, "[toru error rank " + std::to_string(toru::error_rank()) + "] no te\n");
}

struct counted {
  int* formats;
};

}  // namespace

template <>
struct fmt::formatter<counted> : fmt::formatter<int> {
  auto format(const counted& c, fmt::format_context& ctx) const {
    return fmt::formatter<int>::format(++*c.formats, ctx);
  }
};

namespace {

TEST(log, suppressed_messages_are_not_formatted) {
  int formats = 0;
  testing::internal::CaptureStderr();
  toru::log::debug("{}", counted{&formats});
  testing::internal::GetCapturedStderr();
  EXPECT_EQ(formats, expected_level() >= 3 ? 1 : 0);
}

}  // namespace
