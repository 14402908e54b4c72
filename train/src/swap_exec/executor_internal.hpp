// SPDX-License-Identifier: BSD-3-Clause
// Internals of the plan executor shared between its files.
#pragma once

#include <cstdint>
#include <string>

#include "toru/swap/graph.hpp"
#include "toru/train/model.hpp"

namespace toru::train::detail {

/// Bytes the arena charges for a request (device_memory's 64-byte granules).
std::int64_t granule(std::int64_t bytes);
/// The model's forward graph with the executor's bytes, saved tensors and gradient rules.
swap::graph executor_forward_graph(model& m);
/// Its training graph as planned: gradients sized like their tensors, parameter gradients in the
/// persistent buffer (0 bytes), the loss gradient ordered after the loss.
swap::graph executor_training_graph(model& m, bool split_weight_grad);

}  // namespace toru::train::detail
