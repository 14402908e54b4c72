// SPDX-License-Identifier: BSD-3-Clause
// Minimal leveled logging to stderr, prefixed with the rank.
// The level comes from TORU_LOG (error, warn, info, debug); default warn.
#pragma once

#include <string_view>
#include <utility>

#include <fmt/format.h>

namespace toru::log {

enum class level { error = 0, warn = 1, info = 2, debug = 3 };

level current_level() noexcept;
void write(level lvl, std::string_view message);

template <class... Args>
void warn(fmt::format_string<Args...> f, Args&&... args) {
  if (current_level() >= level::warn) write(level::warn, fmt::format(f, std::forward<Args>(args)...));
}
template <class... Args>
void info(fmt::format_string<Args...> f, Args&&... args) {
  if (current_level() >= level::info) write(level::info, fmt::format(f, std::forward<Args>(args)...));
}
template <class... Args>
void debug(fmt::format_string<Args...> f, Args&&... args) {
  if (current_level() >= level::debug) write(level::debug, fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace toru::log
