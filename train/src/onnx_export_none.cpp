// SPDX-License-Identifier: BSD-3-Clause
// export_onnx in a build without ONNX (TORU_ENABLE_ONNX off).
#include <fmt/format.h>

#include "toru/core/error.hpp"
#include "toru/train/onnx_export.hpp"

namespace toru::train {

bool onnx_export_available() noexcept { return false; }

void export_onnx(const std::filesystem::path&, const model&, std::span<const float>, std::span<const float>,
                 const std::filesystem::path& out) {
  throw error(errc::unsupported,
              fmt::format("{}: this toru was built without ONNX (Debian: libonnx-dev), it cannot write ONNX files",
                          out.string()));
}

}  // namespace toru::train
