// SPDX-License-Identifier: BSD-3-Clause
// What one viewer receives can differ from what was recorded: a viewer that cannot keep up under
// the reduce_resolution policy gets 2-D frames box-averaged by a factor per axis, and a viewer
// that cannot decode zstd or lz4 (a browser) gets those payloads as raw. The server transcodes a
// recorded message on its way out; the recording itself never changes. (C++17: server.cpp includes it.)
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace toru::stream {

/// Every codec (bit i is codec i of frame.hpp: raw, zstd, lz4, png).
inline constexpr unsigned all_codecs = 0xf;

/// The mask of the codecs named ("raw", "zstd", "lz4", "png"), raw always included. Throws
/// toru::error(invalid_argument) naming `argument` for an unknown name.
unsigned codec_mask(const std::vector<std::string>& names, std::string_view argument = "accept");

/// A 2-D frame's message with each scale x scale block averaged into one element (partial blocks at
/// the edges average what they hold): shape ceil(rows/scale) x ceil(cols/scale), same dtype and
/// codec (PNG: the RGB pixels are averaged; min/max kept), header field "downscale": scale.
/// Other frames, and scale 1, are returned unchanged. Throws invalid_argument on a bad message.
std::string downscale_message(std::string_view message, int scale);

/// The message re-encoded as raw (a zstd/lz4 payload decompressed), header otherwise unchanged.
std::string raw_message(std::string_view message);

/// The message a viewer that accepts the codecs in `accepted` (a codec_mask) should get:
/// downscaled by `scale` (2-D frames), then decompressed to raw if its codec is not accepted (raw
/// is always acceptable; PNG is sent as PNG). Returns msg itself (no copy) when nothing changes.
std::shared_ptr<const std::string> transcode(const std::shared_ptr<const std::string>& msg, int scale,
                                             unsigned accepted);

}  // namespace toru::stream
