// SPDX-License-Identifier: BSD-3-Clause
#include "toru/swap/device.hpp"

#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "toru/core/error.hpp"

namespace toru::swap {
namespace {

constexpr double giga = 1e9, tera = 1e12;
constexpr std::int64_t gib = std::int64_t{1} << 30;
constexpr std::int64_t gb = 1000000000;

// Achieved fractions: 85% of fp32/tensor-core peak on large convolutions, 80% of HBM bandwidth,
// and the measured pinned-memcpy figures of the swap reference (§6.1) for the links.
const std::map<std::string, device_spec, std::less<>>& presets() {
  static const std::map<std::string, device_spec, std::less<>> p = [] {
    std::map<std::string, device_spec, std::less<>> m;
    auto add = [&m](device_spec d) { m[d.name] = d; };
    // The TFLMS / hybrid papers' POWER9 AC922: V100-SXM2-16GB, 3 NVLink 2.0 bricks to the CPU (75 GB/s).
    add({"v100-nvlink2", 16 * gib, 512 * gib, 0.85 * 15.7 * tera, 0.85 * 125 * tera, 0.8 * 900 * giga, 64 * giga,
         64 * giga});
    add({"v100-pcie3", 16 * gib, 256 * gib, 0.85 * 14.0 * tera, 0.85 * 112 * tera, 0.8 * 900 * giga, 12.5 * giga,
         12.5 * giga});
    add({"a100-40gb-pcie4", 40 * gb, 512 * gib, 0.85 * 19.5 * tera, 0.85 * 312 * tera, 0.8 * 1555 * giga, 25 * giga,
         25 * giga});
    add({"a100-80gb-pcie4", 80 * gb, 512 * gib, 0.85 * 19.5 * tera, 0.85 * 312 * tera, 0.8 * 2039 * giga, 25 * giga,
         25 * giga});
    add({"h100-pcie5", 80 * gb, 1024 * gib, 0.85 * 67 * tera, 0.85 * 989 * tera, 0.8 * 3350 * giga, 52 * giga,
         52 * giga});
    add({"h200-pcie5", 141 * gb, 1024 * gib, 0.85 * 67 * tera, 0.85 * 989 * tera, 0.8 * 4800 * giga, 52 * giga,
         52 * giga});
    // Grace Hopper: 96 GB HBM3, NVLink-C2C 450 GB/s per direction peak; ~375 GB/s assumed achieved.
    add({"gh200", 96 * gb, 480 * gb, 0.85 * 67 * tera, 0.85 * 989 * tera, 0.8 * 4000 * giga, 375 * giga, 375 * giga});
    return m;
  }();
  return p;
}

}  // namespace

std::vector<std::string> device_preset_names() {
  std::vector<std::string> n;
  for (const auto& [k, v] : presets()) n.push_back(k);
  return n;
}

device_spec device_preset(std::string_view name) {
  const auto it = presets().find(name);
  if (it == presets().end())
    throw error(errc::invalid_argument, fmt::format("device preset: expected one of {}, got '{}'",
                                                    fmt::join(device_preset_names(), ", "), name));
  return it->second;
}

void validate(const device_spec& d) {
  auto positive = [&](double v, const char* what) {
    if (!(v > 0))
      throw error(errc::invalid_argument,
                  fmt::format("device '{}' {}: expected a positive value, got {}", d.name, what, v));
  };
  positive(static_cast<double>(d.memory_bytes), "memory");
  positive(d.flops_fp32, "fp32 flop rate");
  positive(d.flops_16, "fp16 flop rate");
  positive(d.memory_bandwidth, "memory bandwidth");
  positive(d.h2d_bandwidth, "h2d bandwidth");
  positive(d.d2h_bandwidth, "d2h bandwidth");
  if (d.host_memory_bytes < 0 || d.op_overhead < 0)
    throw error(errc::invalid_argument,
                fmt::format("device '{}': expected non-negative host memory and op overhead", d.name));
}

}  // namespace toru::swap
