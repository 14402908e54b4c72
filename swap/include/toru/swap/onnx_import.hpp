// SPDX-License-Identifier: BSD-3-Clause
// ONNX import: a forward model exported from PyTorch or TensorFlow becomes a forward graph with a
// loss on its first output, ready for make_training_graph().
//
// Shapes come from ONNX shape inference (Debian's libonnx). The first dimension of a graph input that
// is symbolic or missing is set to `batch` (the TFLMS rule); any other unknown extent is an error
// naming the tensor. Initializers are parameters, except BatchNormalization running statistics,
// which are non-trainable inputs. Unsupported op types are reported all at once, by name.
// Thread-safe. Only available when toru was built with ONNX (TORU_ENABLE_ONNX); otherwise every call
// throws toru::error (unsupported) saying so.
//
//   auto fwd = toru::swap::import_onnx("model.onnx", {.batch = 32});
//   auto train = toru::swap::make_training_graph(fwd);
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "toru/swap/graph.hpp"

namespace toru::swap {

struct onnx_options {
  std::int64_t batch = 1;
  // Copy the initializers' values into tensor::init (what an executor needs). The planner never reads
  // them: false keeps a VGG-16-size graph small, so copying it (rebatch, training graphs) is cheap.
  bool values = true;
};

/// Whether this build can import ONNX.
bool onnx_available() noexcept;
/// Op types the importer understands.
std::vector<std::string> onnx_supported_ops();

/// Reads a .onnx file. Throws toru::error: io (unreadable), invalid_argument (malformed, unknown
/// shapes, non-positive batch), unsupported (op types, or a build without ONNX).
graph import_onnx(const std::string& path, const onnx_options& options = {});
/// Same, from the serialized ModelProto bytes.
graph import_onnx_bytes(const std::string& bytes, const std::string& name, const onnx_options& options = {});

}  // namespace toru::swap
