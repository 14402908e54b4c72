// SPDX-License-Identifier: BSD-3-Clause
// The process-wide wisdom store behind toru/comm/wisdom.hpp.
#pragma once

#include <optional>
#include <string>

#include "toru/comm/alltoall_plan.hpp"

namespace toru::comm::detail {

struct wisdom_entry {
  std::string key;
  int nranks = 1;
  double bytes = 0;  // per pair (average for the v variant)
  bool equal = true;
  std::string torus;
  alltoall_algorithm algorithm = alltoall_algorithm::direct;
  int chunks = 1;
  double seconds = 0;  // the measured time (max over ranks, median of repetitions)
};

std::string wisdom_key(int nranks, double bytes, bool equal, const std::string& torus);
std::optional<wisdom_entry> find_wisdom(const std::string& key);
void add_wisdom(const wisdom_entry& e);

}  // namespace toru::comm::detail
