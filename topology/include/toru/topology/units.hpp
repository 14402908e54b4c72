// SPDX-License-Identifier: BSD-3-Clause
// Quantities with units, as written in torus specs, JSON files and command lines.
//
// Every toru quantity is stored in base SI units: bytes, bytes per second, seconds.
// Decimal prefixes are powers of 1000 (KB, MB, GB, TB), binary ones powers of 1024
// (KiB, MiB, GiB, TiB); a lower-case "b" means bits (Gb/s = 1e9/8 bytes/s).
//
//   parse_bandwidth("1.6GB/s", "bw")  == 1.6e9
//   parse_bandwidth("100Gb/s", "bw")  == 12.5e9
//   parse_time("2.5us", "lat")        == 2.5e-6
//   parse_bytes("64KiB", "--bytes")   == 65536
//
// All functions are pure and thread-safe. Parse errors throw toru::error (invalid_argument)
// naming `what` (the option or field being parsed), the expected form and the text given.
#pragma once

#include <string>
#include <string_view>

namespace toru::topology {

/// Bytes per second from "<number>[unit]"; unit one of B/s, KB/s, MB/s, GB/s, TB/s, KiB/s, MiB/s,
/// GiB/s, TiB/s, Kb/s, Mb/s, Gb/s, Tb/s (bits). A bare number is bytes/s. Must be > 0 and finite.
double parse_bandwidth(std::string_view text, std::string_view what);

/// Seconds from "<number>[unit]"; unit one of s, ms, us, ns. A bare number is seconds. Must be >= 0.
double parse_time(std::string_view text, std::string_view what);

/// Bytes from "<number>[unit]"; unit one of B, KB, MB, GB, TB, KiB, MiB, GiB, TiB. A bare number is
/// bytes. Must be >= 0 and finite (fractions allowed: a model quantity, not an allocation).
double parse_bytes(std::string_view text, std::string_view what);

/// Human-readable forms with 3-4 significant digits ("1.6 GB/s", "2.5 us", "64 KiB").
std::string format_bandwidth(double bytes_per_second);
std::string format_time(double seconds);
std::string format_bytes(double bytes);

}  // namespace toru::topology
