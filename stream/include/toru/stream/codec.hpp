// SPDX-License-Identifier: BSD-3-Clause
// Payload codecs: raw, zstd and lz4 (lossless, any dtype), PNG (a 2-D array through a colour
// map, for viewing; lossy by quantisation to 256 colours). One free function per direction.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "toru/stream/frame.hpp"

namespace toru::stream {

/// Lossless compression of bytes (codec raw, zstd or lz4).
std::string compress(codec c, std::span<const std::byte> in, int zstd_level = 1);
/// The inverse; `raw_bytes` is the size compress() was given. Throws invalid_argument on corrupt input.
std::vector<std::byte> decompress(codec c, std::string_view in, std::size_t raw_bytes);

/// The colour map used for image frames (viridis-like, 256 entries of RGB).
const std::array<std::array<std::uint8_t, 3>, 256>& colour_map();

/// The colour-map index of each element of a 2-D array of `type`, scaled from [lo, hi].
std::vector<std::uint8_t> colour_indices(dtype type, std::span<const std::byte> data, double lo, double hi);
/// min and max over the finite values of an array (0, 0 if none).
std::array<double, 2> value_range(dtype type, std::span<const std::byte> data);

/// A 2-D array (rows x cols) as an RGB PNG through colour_map(), scaled from [lo, hi].
std::string encode_png(dtype type, std::span<const std::byte> data, std::int64_t rows, std::int64_t cols, double lo,
                       double hi);
/// RGB bytes (3 per pixel, rows x cols) as a PNG.
std::string encode_png_rgb(std::span<const std::uint8_t> rgb, std::int64_t rows, std::int64_t cols);
/// Decodes a PNG into RGB bytes (3 per pixel); rows and cols receive its size.
std::vector<std::byte> decode_png(std::string_view png, std::int64_t& rows, std::int64_t& cols);

}  // namespace toru::stream
