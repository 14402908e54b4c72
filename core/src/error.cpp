// SPDX-License-Identifier: BSD-3-Clause
#include "toru/core/error.hpp"

#include <atomic>

#include <fmt/format.h>

namespace toru {
namespace {
std::atomic<int> g_rank{-1};

std::string decorate(errc code, const std::string& message, int rank, const std::string& where) {
  if (rank >= 0) return fmt::format("toru: {} (rank {}, {}): {}", to_string(code), rank, where, message);
  return fmt::format("toru: {} ({}): {}", to_string(code), where, message);
}

std::string format_location(const std::source_location& loc) {
  std::string_view file = loc.file_name();
  // Keep the path from the module folder on: absolute build paths say nothing to a user.
  for (std::string_view module : {"core/", "topology/", "comm/", "fft/", "swap/", "train/", "apps/"}) {
    if (auto pos = file.rfind(module); pos != std::string_view::npos) {
      file = file.substr(pos);
      break;
    }
  }
  return fmt::format("{}:{}", file, loc.line());
}
}  // namespace

std::string_view to_string(errc code) noexcept {
  switch (code) {
    case errc::success:
      return "success";
    case errc::invalid_argument:
      return "invalid_argument";
    case errc::mismatch:
      return "mismatch";
    case errc::unsupported:
      return "unsupported";
    case errc::mpi:
      return "mpi";
    case errc::fftw:
      return "fftw";
    case errc::hwloc:
      return "hwloc";
    case errc::cuda:
      return "cuda";
    case errc::no_device:
      return "no_device";
    case errc::io:
      return "io";
    case errc::out_of_memory:
      return "out_of_memory";
    case errc::internal:
      return "internal";
  }
  return "unknown";
}

error::error(errc code, std::string message, std::source_location where)
    : error(code, std::move(message), g_rank.load(std::memory_order_relaxed), format_location(where)) {}

error::error(errc code, std::string message, int rank, std::string where)
    : std::runtime_error(decorate(code, message, rank, where)),
      code_(code),
      message_(std::move(message)),
      rank_(rank),
      where_(std::move(where)) {}

void expect(bool ok, std::string_view argument, std::string_view expected, std::string_view got,
            std::source_location where) {
  if (ok) return;
  throw error(errc::invalid_argument, fmt::format("{}: expected {}, got {}", argument, expected, got), where);
}

void set_error_rank(int rank) noexcept { g_rank.store(rank, std::memory_order_relaxed); }
int error_rank() noexcept { return g_rank.load(std::memory_order_relaxed); }

}  // namespace toru
