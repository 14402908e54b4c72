// SPDX-License-Identifier: BSD-3-Clause
// The host kernel of CGDP's helpers: the node's gradient copies summed in rank order and divided,
// in one cache-blocked pass over memory (each input read once, the output written once). Public
// so that toru-train's calibration times the very code the helpers run.
//
//   const float* in[] = {g0, g1, g2};
//   toru::train::sum_in_order(out, in, n, 3.0f);   // out[k] = ((g0[k] + g1[k]) + g2[k]) / 3
#pragma once

#include <cstddef>
#include <span>

namespace toru::train {

/// out[k] = (inputs[0][k] + inputs[1][k] + ... ) / divisor, added left to right in float (the
/// allreduce engine's ordered reduction, so the two engines agree bitwise); divisor 1: no division.
/// `out` may alias inputs[0]; inputs must not be empty.
void sum_in_order(float* out, std::span<const float* const> inputs, std::size_t len, float divisor = 1.0f);

}  // namespace toru::train
