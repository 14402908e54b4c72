// SPDX-License-Identifier: BSD-3-Clause
#include "toru/core/log.hpp"

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

#include "toru/core/error.hpp"

namespace toru::log {
namespace {
level parse_level() {
  const char* env = std::getenv("TORU_LOG");
  if (!env) return level::warn;
  std::string_view v = env;
  if (v == "error") return level::error;
  if (v == "info") return level::info;
  if (v == "debug") return level::debug;
  return level::warn;
}
}  // namespace

level current_level() noexcept {
  static const level lvl = parse_level();
  return lvl;
}

void write(level lvl, std::string_view message) {
  static std::mutex mutex;
  static constexpr const char* names[] = {"error", "warn", "info", "debug"};
  std::lock_guard lock(mutex);
  std::fprintf(stderr, "[toru %s rank %d] %.*s\n", names[static_cast<int>(lvl)], error_rank(),
               static_cast<int>(message.size()), message.data());
}

}  // namespace toru::log
