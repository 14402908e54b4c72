// SPDX-License-Identifier: BSD-3-Clause
// Device and host-link descriptions for the time model, with presets.
//
// Rates are *achieved* rates (a fraction of the datasheet peak, given per preset in device.cpp),
// because the simulator compares plans, and a plan's stalls depend on the ratio of compute to copy
// speed, which peak figures overstate. All values are per direction and in SI units (bytes, seconds).
//
//   auto d = toru::swap::device_preset("v100-nvlink2");
//   d.h2d_bandwidth = 50e9;  // custom override
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "toru/swap/graph.hpp"

namespace toru::swap {

struct device_spec {
  std::string name = "custom";
  std::int64_t memory_bytes = 0;       // device memory
  std::int64_t host_memory_bytes = 0;  // host memory available for swapped tensors; 0 = unlimited
  double flops_fp32 = 0;               // achieved FLOP/s in fp32
  double flops_16 = 0;                 // achieved FLOP/s in fp16/bf16
  double memory_bandwidth = 0;         // device memory bytes/s
  double h2d_bandwidth = 0;            // host-to-device bytes/s
  double d2h_bandwidth = 0;            // device-to-host bytes/s
  double op_overhead = 4e-6;           // seconds per op (launch and tail effects)

  double flops_for(dtype t) const noexcept { return t == dtype::f32 ? flops_fp32 : flops_16; }
};

std::vector<std::string> device_preset_names();
/// Throws toru::error (invalid_argument) naming the known presets for an unknown name.
device_spec device_preset(std::string_view name);
/// Throws toru::error if a field is non-positive (memory, rates, bandwidths).
void validate(const device_spec& d);

}  // namespace toru::swap
