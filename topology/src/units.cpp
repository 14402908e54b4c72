// SPDX-License-Identifier: BSD-3-Clause
#include "toru/topology/units.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <span>
#include <utility>

#include <fmt/format.h>

#include "toru/core/error.hpp"

namespace toru::topology {
namespace {

struct unit {
  std::string_view suffix;
  double factor;
};

// Splits "<number><suffix>" (blanks allowed between) and looks the suffix up; the number is parsed
// with from_chars so "1e9", ".5" and "2." work and "1,5" does not.
double parse_with_units(std::string_view text, std::string_view what, std::span<const unit> units,
                        std::string_view expected) {
  auto trim = [](std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
  };
  const std::string_view s = trim(text);
  double value = 0;
  const char* first = s.data();
  const char* last = s.data() + s.size();
  if (!s.empty() && s.front() == '+') ++first;
  auto [end, ec] = std::from_chars(first, last, value);
  if (ec != std::errc() || s.empty())
    throw error(errc::invalid_argument, fmt::format("{}: expected {}, got '{}'", what, expected, text));
  const std::string_view suffix = trim(std::string_view(end, static_cast<std::size_t>(last - end)));
  for (const auto& u : units) {
    if (suffix == u.suffix) {
      const double v = value * u.factor;
      if (!std::isfinite(v))
        throw error(errc::invalid_argument, fmt::format("{}: expected a finite value, got '{}'", what, text));
      return v;
    }
  }
  throw error(errc::invalid_argument,
              fmt::format("{}: expected {}, got '{}' (unknown unit '{}')", what, expected, text, suffix));
}

constexpr double kilo = 1e3, mega = 1e6, giga = 1e9, tera = 1e12;
constexpr double kibi = 1024.0, mebi = kibi * 1024, gibi = mebi * 1024, tebi = gibi * 1024;

constexpr unit bandwidth_units[] = {
    {"", 1},          {"B/s", 1},         {"KB/s", kilo},     {"MB/s", mega},     {"GB/s", giga},
    {"TB/s", tera},   {"KiB/s", kibi},    {"MiB/s", mebi},    {"GiB/s", gibi},    {"TiB/s", tebi},
    {"b/s", 1.0 / 8}, {"Kb/s", kilo / 8}, {"Mb/s", mega / 8}, {"Gb/s", giga / 8}, {"Tb/s", tera / 8},
    {"kB/s", kilo},   {"kb/s", kilo / 8},
};
constexpr unit time_units[] = {{"", 1}, {"s", 1}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}};
constexpr unit byte_units[] = {
    {"", 1},      {"B", 1},      {"KB", kilo},  {"kB", kilo},  {"MB", mega},  {"GB", giga},
    {"TB", tera}, {"KiB", kibi}, {"MiB", mebi}, {"GiB", gibi}, {"TiB", tebi},
};

std::string format_scaled(double v, std::span<const unit> units, std::string_view base) {
  for (auto it = units.rbegin(); it != units.rend(); ++it)
    if (std::abs(v) >= it->factor) return fmt::format("{:.4g} {}", v / it->factor, it->suffix);
  return fmt::format("{:.4g} {}", v, base);
}

}  // namespace

double parse_bandwidth(std::string_view text, std::string_view what) {
  const double v = parse_with_units(text, what, bandwidth_units, "a bandwidth such as 1.6GB/s, 425MB/s or 100Gb/s");
  if (!(v > 0)) throw error(errc::invalid_argument, fmt::format("{}: expected a bandwidth > 0, got '{}'", what, text));
  return v;
}

double parse_time(std::string_view text, std::string_view what) {
  const double v = parse_with_units(text, what, time_units, "a time such as 2us, 1.5ms or 3e-6");
  if (v < 0) throw error(errc::invalid_argument, fmt::format("{}: expected a time >= 0, got '{}'", what, text));
  return v;
}

double parse_bytes(std::string_view text, std::string_view what) {
  const double v = parse_with_units(text, what, byte_units, "a size such as 65536, 64KiB or 1MB");
  if (v < 0) throw error(errc::invalid_argument, fmt::format("{}: expected a size >= 0, got '{}'", what, text));
  return v;
}

std::string format_bandwidth(double bps) {
  static constexpr unit u[] = {{"KB/s", kilo}, {"MB/s", mega}, {"GB/s", giga}, {"TB/s", tera}};
  return format_scaled(bps, u, "B/s");
}

std::string format_time(double s) {
  if (s == 0) return "0 s";
  if (std::abs(s) >= 1) return fmt::format("{:.4g} s", s);
  if (std::abs(s) >= 1e-3) return fmt::format("{:.4g} ms", s * 1e3);
  if (std::abs(s) >= 1e-6) return fmt::format("{:.4g} us", s * 1e6);
  return fmt::format("{:.4g} ns", s * 1e9);
}

std::string format_bytes(double b) {
  static constexpr unit u[] = {{"KiB", kibi}, {"MiB", mebi}, {"GiB", gibi}, {"TiB", tebi}};
  return format_scaled(b, u, "B");
}

}  // namespace toru::topology
