// SPDX-License-Identifier: BSD-3-Clause
// Trained weights back to ONNX: the ONNX file a model was imported from (swap::import_onnx), its
// forward graph unchanged, with every trained parameter's initializer and every batch-norm running
// statistic replaced by the model's values. The file then runs the trained model in any ONNX
// runtime (and imports into toru again).
//
//   auto g = toru::swap::import_onnx("cnn.onnx", {.batch = 32});
//   toru::train::model m(g, {});
//   ... train ...
//   toru::train::export_onnx("cnn.onnx", m, m.parameter_data(), m.buffer_data(), "cnn-trained.onnx");
//
// (toru::train::trainer::export_onnx does this for a trained ONNX model, with the running
// statistics averaged over the ranks as for evaluation.)
#pragma once

#include <filesystem>
#include <span>

#include "toru/train/model.hpp"

namespace toru::train {

/// Whether this build can write ONNX (toru built with ONNX, TORU_ENABLE_ONNX).
bool onnx_export_available() noexcept;

/// Reads `source` (the file `m`'s graph was imported from), replaces the initializer of each of
/// m's parameters by `params` (m.parameter_data()'s layout, host floats; a parameter imported
/// through a Transpose of its initializer goes back transposed) and of each batch-norm running
/// mean and variance by `buffers` (m.buffer_data()'s layout, host floats) and writes the model to
/// `out`. Not collective. Throws toru::error:
/// unsupported without ONNX or for an initializer toru cannot write back (not float32, external
/// data), invalid_argument when `source` lacks an initializer for one of m's parameters or
/// statistics (not the file m was imported from) or `buffers` has the wrong size, io when a file
/// cannot be read or written.
void export_onnx(const std::filesystem::path& source, const model& m, std::span<const float> params,
                 std::span<const float> buffers, const std::filesystem::path& out);

}  // namespace toru::train
