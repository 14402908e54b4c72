// SPDX-License-Identifier: BSD-3-Clause
// A frame: one typed array (a field slice, a spectrum, a curve) with its metadata, and the one
// message format every part of stream/ shares: the store records it, the transports send it, the
// browser and the dump client parse it. A message is immutable once encoded, so a replay from the
// recording is bit-identical to what was sent live.
//
//   message = "TRF1" | u32 LE header length h | h bytes of JSON header | payload
//   header  = {"seq","step","time","name","shape":[..],"dtype":"f32","codec":"zstd","raw_bytes",
//              ["min","max"] (PNG colour-map range), ["origin","global_shape"] (a tile),
//              ["downscale"] (sent at reduced resolution)}
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace toru::stream {

enum class dtype { u8, i32, f32, f64 };
enum class codec { raw, zstd, lz4, png };

std::string_view to_string(dtype t) noexcept;
std::string_view to_string(codec c) noexcept;
/// Throws toru::error(invalid_argument) naming `argument` for an unknown name.
dtype parse_dtype(std::string_view name, std::string_view argument = "dtype");
codec parse_codec(std::string_view name, std::string_view argument = "codec");
std::size_t dtype_size(dtype t) noexcept;

template <class T>
constexpr dtype dtype_of();
template <>
constexpr dtype dtype_of<std::uint8_t>() {
  return dtype::u8;
}
template <>
constexpr dtype dtype_of<std::int32_t>() {
  return dtype::i32;
}
template <>
constexpr dtype dtype_of<float>() {
  return dtype::f32;
}
template <>
constexpr dtype dtype_of<double>() {
  return dtype::f64;
}

/// What a producer hands to publish(): a view, copied before publish() returns.
struct frame_view {
  std::string_view name = {};
  std::int64_t step = 0;
  double time = 0;
  std::vector<std::int64_t> shape = {};  // row-major, outermost first
  dtype type = dtype::f64;
  std::span<const std::byte> data = {};
  std::vector<std::int64_t> origin = {};        // a tile's offset in global_shape (tiled publishing)
  std::vector<std::int64_t> global_shape = {};  // empty: the frame is the whole array
};

template <class T>
frame_view make_frame(std::string_view name, std::int64_t step, double time, std::vector<std::int64_t> shape,
                      std::span<const T> data) {
  return {.name = name,
          .step = step,
          .time = time,
          .shape = std::move(shape),
          .type = dtype_of<T>(),
          .data = std::as_bytes(data)};
}

/// The parsed header of a message.
struct frame_header {
  std::uint64_t seq = 0;
  std::int64_t step = 0;
  double time = 0;
  std::string name;
  std::vector<std::int64_t> shape;
  dtype type = dtype::f64;
  codec encoding = codec::raw;
  std::uint64_t raw_bytes = 0;
  double min = 0, max = 0;
  std::vector<std::int64_t> origin, global_shape;
  int downscale = 1;  // sent at 1/downscale resolution per axis (transcode.hpp)
};

/// Product of shape (0 for an empty shape); throws invalid_argument on a negative extent.
std::int64_t element_count(std::span<const std::int64_t> shape);

/// Checks a view (name, shape against data size) and throws invalid_argument naming the field.
void validate(const frame_view& f);

/// Encodes a frame into a message (compressing the payload with `c`). seq is stamped by the
/// caller (the publisher numbers frames in the order it records them).
std::string encode_message(const frame_view& f, codec c, std::uint64_t seq, int zstd_level = 1);

/// Parses a message; throws toru::error(invalid_argument) on anything malformed (never reads
/// past `message`). payload, if given, receives the still-encoded payload bytes.
frame_header parse_message(std::string_view message, std::string_view* payload = nullptr);

/// The decoded array of a message (raw bytes; for PNG, the RGB image, 3 bytes per pixel).
std::vector<std::byte> decode_payload(const frame_header& h, std::string_view payload);

}  // namespace toru::stream
