// SPDX-License-Identifier: BSD-3-Clause
// The trainer's ONNX export: the current weights and the rank-averaged running statistics written
// into the imported ONNX file's initializers (toru/train/onnx_export.hpp) by rank 0.
#include <fmt/format.h>

#include "impl.hpp"
#include "toru/core/error.hpp"
#include "toru/train/onnx_export.hpp"

namespace toru::train {

void trainer::export_onnx(const std::filesystem::path& file) {
  auto& s = *impl_;
  const auto w = weights();
  const auto b = s.m->buffer_data();
  std::vector<float> stats;
  if (!s.on_device()) {
    stats.assign(b.begin(), b.end());
    s.dp->average(stats);
  }
  detail::agree(s.mpi, "toru::train::trainer::export_onnx", [&] {
    expect(!s.o.onnx.empty(), s.name("onnx"), "the ONNX model the trainer imported (export writes its initializers)",
           "model '" + s.o.model + "'");
    if (s.on_device())
      throw error(errc::unsupported, fmt::format("{}: ONNX export reads the running statistics on the host; a {} "
                                                 "cuda model cannot export",
                                                 file.string(), s.name("device")));
    if (s.rank == 0) train::export_onnx(s.o.onnx, *s.m, w, stats, file);
  });
}

}  // namespace toru::train
