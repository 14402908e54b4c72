// SPDX-License-Identifier: BSD-3-Clause
// Checkpoints of a data-parallel training run: everything a resumed run needs to continue bit for
// bit (weights, batch-norm buffers, optimizer state and step, data position, seed), and what is
// needed to refuse a checkpoint of another run (model name and signature, rank count).
//
// Format (one file, little-endian): "TORUCKP1", u64 header length, the header as JSON, then the
// parameters, buffers and optimizer state as raw float32, then a CRC-32 (zlib) of all that precedes.
// Files are <dir>/checkpoint-<step>.toru; <dir>/latest names the newest. Both are written to a
// temporary file in <dir>, flushed to disk and renamed over the target, so a reader (or a run
// killed mid-write) only ever sees a complete checkpoint or the previous one.
//
//   toru::train::write_checkpoint(dir, state);     // rank 0; the weights are replicated
//   auto s = toru::train::read_checkpoint(toru::train::latest_checkpoint(dir));
//   toru::train::check_compatible(s, expected);   // errc::mismatch naming what differs
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "toru/train/model.hpp"

namespace toru::train {

struct checkpoint_state {
  std::string model_name;            // --model NAME or the ONNX file's name
  std::int64_t model_signature = 0;  // model_signature(): the layout the weights belong to
  int nranks = 1;
  std::uint64_t seed = 0;
  std::int64_t global_batch = 0;
  std::int64_t step = 0;   // global steps completed; the data position is (step / steps_per_epoch, step % ...)
  std::int64_t epoch = 0;  // epoch of the next step
  std::string optimizer;   // to_string(optimizer_kind)
  std::int64_t optimizer_steps = 0;
  std::string settings;  // the program's settings as JSON, for the record
  std::vector<float> parameters, buffers, optimizer_state;
};

/// A digest of what the weights mean: input shape (without the batch), classes, and every
/// parameter slot's name, shape and offset, plus the buffer size.
std::int64_t model_signature(std::span<const parameter_slot> slots, std::span<const std::int64_t> sample_shape,
                             int classes, std::int64_t buffer_count);

/// Writes <dir>/checkpoint-<state.step>.toru atomically, then points <dir>/latest at it and removes
/// checkpoints older than the previous one. Creates dir. Local (one rank calls it). Throws
/// errc::io naming the file on any failure, leaving the previous checkpoint intact. Returns the path.
std::filesystem::path write_checkpoint(const std::filesystem::path& dir, const checkpoint_state& state);

/// The checkpoint <dir>/latest names; errc::io naming the file when there is none.
std::filesystem::path latest_checkpoint(const std::filesystem::path& dir);

/// Reads and verifies a checkpoint (magic, header, sizes, CRC). errc::io naming the file otherwise.
checkpoint_state read_checkpoint(const std::filesystem::path& file);

/// Throws errc::mismatch naming the first field where `found` (read from `file`) cannot resume the
/// run described by `expected`: model name, model signature, rank count, global batch, optimizer,
/// and the sizes of the float arrays.
void check_compatible(const checkpoint_state& found, const checkpoint_state& expected,
                      const std::filesystem::path& file);

}  // namespace toru::train
