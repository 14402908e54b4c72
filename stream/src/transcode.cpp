// SPDX-License-Identifier: BSD-3-Clause
#include "toru/stream/transcode.hpp"

#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "toru/core/error.hpp"
#include "toru/stream/codec.hpp"
#include "toru/stream/frame.hpp"

namespace toru::stream {

namespace {

// The header as JSON (every field kept, known or not) and the encoded payload.
struct split_message {
  nlohmann::json header;
  std::string_view payload;
};

split_message split(std::string_view m) {
  std::string_view payload;
  parse_message(m, &payload);  // validates
  std::uint32_t hl = 0;
  for (int i = 0; i < 4; ++i) hl |= static_cast<std::uint32_t>(static_cast<unsigned char>(m[4 + i])) << (8 * i);
  return {nlohmann::json::parse(m.substr(8, hl)), payload};
}

std::string join(const nlohmann::json& header, std::string_view payload) {
  const std::string h = header.dump();
  std::string out;
  out.reserve(8 + h.size() + payload.size());
  out.append("TRF1", 4);
  for (int i = 0; i < 4; ++i) out += static_cast<char>((h.size() >> (8 * i)) & 0xff);
  out += h;
  out += payload;
  return out;
}

// Box average of a rows x cols x channels array of T by s per axis.
template <class T>
std::vector<std::byte> box_average(const std::vector<std::byte>& in, std::int64_t rows, std::int64_t cols,
                                   std::int64_t channels, int s) {
  const std::int64_t r2 = (rows + s - 1) / s, c2 = (cols + s - 1) / s;
  std::vector<T> src(static_cast<std::size_t>(rows * cols * channels));
  std::memcpy(src.data(), in.data(), src.size() * sizeof(T));
  std::vector<std::byte> out(static_cast<std::size_t>(r2 * c2 * channels) * sizeof(T));
  auto* dst = reinterpret_cast<T*>(out.data());
  for (std::int64_t i = 0; i < r2; ++i)
    for (std::int64_t j = 0; j < c2; ++j)
      for (std::int64_t k = 0; k < channels; ++k) {
        double sum = 0;
        std::int64_t count = 0;
        for (std::int64_t a = i * s; a < std::min(rows, (i + 1) * s); ++a)
          for (std::int64_t b = j * s; b < std::min(cols, (j + 1) * s); ++b)
            sum += static_cast<double>(src[static_cast<std::size_t>((a * cols + b) * channels + k)]), ++count;
        const double mean = sum / static_cast<double>(count);
        T v;
        if constexpr (std::is_integral_v<T>)
          v = static_cast<T>(std::llround(mean));
        else
          v = static_cast<T>(mean);
        dst[static_cast<std::size_t>((i * c2 + j) * channels + k)] = v;
      }
  return out;
}

std::vector<std::byte> average(dtype t, const std::vector<std::byte>& in, std::int64_t rows, std::int64_t cols,
                               std::int64_t channels, int s) {
  switch (t) {
    case dtype::u8:
      return box_average<std::uint8_t>(in, rows, cols, channels, s);
    case dtype::i32:
      return box_average<std::int32_t>(in, rows, cols, channels, s);
    case dtype::f32:
      return box_average<float>(in, rows, cols, channels, s);
    case dtype::f64:
      return box_average<double>(in, rows, cols, channels, s);
  }
  return {};
}

constexpr unsigned codec_bit(codec c) { return 1u << static_cast<unsigned>(c); }

}  // namespace

unsigned codec_mask(const std::vector<std::string>& names, std::string_view argument) {
  unsigned mask = codec_bit(codec::raw);
  for (const auto& n : names) mask |= codec_bit(parse_codec(n, argument));
  return mask;
}

std::string downscale_message(std::string_view message, int scale) {
  expect(scale >= 1 && scale <= 64, "scale", "1 to 64", std::to_string(scale));
  const auto h = parse_message(message);
  if (scale == 1 || h.shape.size() != 2) return std::string(message);
  auto [j, payload] = split(message);
  const std::int64_t rows = h.shape[0], cols = h.shape[1];
  const std::int64_t r2 = (rows + scale - 1) / scale, c2 = (cols + scale - 1) / scale;
  const auto decoded = decode_payload(h, payload);
  std::string out_payload;
  if (h.encoding == codec::png) {
    const auto rgb = average(dtype::u8, decoded, rows, cols, 3, scale);
    out_payload = encode_png_rgb(std::span(reinterpret_cast<const std::uint8_t*>(rgb.data()), rgb.size()), r2, c2);
  } else {
    out_payload = compress(h.encoding, average(h.type, decoded, rows, cols, 1, scale));
  }
  j["shape"] = {r2, c2};
  j["raw_bytes"] = static_cast<std::uint64_t>(r2 * c2) * dtype_size(h.type);
  j["downscale"] = scale * j.value("downscale", 1);
  if (!h.origin.empty()) {
    j["origin"] = {h.origin[0] / scale, h.origin[1] / scale};
    j["global_shape"] = {(h.global_shape[0] + scale - 1) / scale, (h.global_shape[1] + scale - 1) / scale};
  }
  return join(j, out_payload);
}

std::string raw_message(std::string_view message) {
  const auto h = parse_message(message);
  if (h.encoding == codec::raw || h.encoding == codec::png) return std::string(message);
  auto [j, payload] = split(message);
  const auto raw = decompress(h.encoding, payload, h.raw_bytes);
  j["codec"] = std::string(to_string(codec::raw));
  return join(j, std::string_view(reinterpret_cast<const char*>(raw.data()), raw.size()));
}

std::shared_ptr<const std::string> transcode(const std::shared_ptr<const std::string>& msg, int scale,
                                             unsigned accepted) {
  if (!msg) return msg;
  const auto h = parse_message(*msg);
  const bool shrink = scale > 1 && h.shape.size() == 2;
  const bool unpack = (accepted & codec_bit(h.encoding)) == 0 && h.encoding != codec::png;
  if (!shrink && !unpack) return msg;
  std::string m = shrink ? downscale_message(*msg, scale) : *msg;
  if (unpack) m = raw_message(m);
  return std::make_shared<const std::string>(std::move(m));
}

}  // namespace toru::stream
