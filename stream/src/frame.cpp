// SPDX-License-Identifier: BSD-3-Clause
#include "toru/stream/frame.hpp"

#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "toru/core/error.hpp"
#include "toru/stream/codec.hpp"

namespace toru::stream {

namespace {
constexpr char magic[4] = {'T', 'R', 'F', '1'};
constexpr std::size_t max_header_bytes = 1 << 16;
constexpr std::size_t max_name_bytes = 256;
constexpr std::size_t max_rank = 8;

void put_u32(std::string& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
std::uint32_t get_u32(const char* p) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<std::uint32_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  return v;
}
}  // namespace

std::string_view to_string(dtype t) noexcept {
  switch (t) {
    case dtype::u8:
      return "u8";
    case dtype::i32:
      return "i32";
    case dtype::f32:
      return "f32";
    case dtype::f64:
      return "f64";
  }
  return "?";
}

std::string_view to_string(codec c) noexcept {
  switch (c) {
    case codec::raw:
      return "raw";
    case codec::zstd:
      return "zstd";
    case codec::lz4:
      return "lz4";
    case codec::png:
      return "png";
  }
  return "?";
}

dtype parse_dtype(std::string_view name, std::string_view argument) {
  for (dtype t : {dtype::u8, dtype::i32, dtype::f32, dtype::f64})
    if (name == to_string(t)) return t;
  throw error(errc::invalid_argument, fmt::format("{}: expected u8, i32, f32 or f64, got '{}'", argument, name));
}

codec parse_codec(std::string_view name, std::string_view argument) {
  for (codec c : {codec::raw, codec::zstd, codec::lz4, codec::png})
    if (name == to_string(c)) return c;
  throw error(errc::invalid_argument, fmt::format("{}: expected raw, zstd, lz4 or png, got '{}'", argument, name));
}

std::size_t dtype_size(dtype t) noexcept {
  switch (t) {
    case dtype::u8:
      return 1;
    case dtype::i32:
      return 4;
    case dtype::f32:
      return 4;
    case dtype::f64:
      return 8;
  }
  return 1;
}

std::int64_t element_count(std::span<const std::int64_t> shape) {
  if (shape.empty()) return 0;
  std::int64_t n = 1;
  for (auto e : shape) {
    expect(e >= 0, "shape", "extents >= 0", std::to_string(e));
    if (e != 0 && n > (std::int64_t{1} << 50) / e)
      throw error(errc::invalid_argument, "shape: expected fewer than 2^50 elements");
    n *= e;
  }
  return n;
}

void validate(const frame_view& f) {
  expect(!f.name.empty() && f.name.size() <= max_name_bytes, "frame.name", "1 to 256 characters",
         std::to_string(f.name.size()) + " characters");
  expect(!f.shape.empty() && f.shape.size() <= max_rank, "frame.shape", "1 to 8 extents",
         std::to_string(f.shape.size()) + " extents");
  const auto bytes = static_cast<std::uint64_t>(element_count(f.shape)) * dtype_size(f.type);
  expect(bytes == f.data.size(), "frame.data", fmt::format("{} bytes (shape x {})", bytes, to_string(f.type)),
         fmt::format("{} bytes", f.data.size()));
  expect(f.origin.size() == f.global_shape.size() && (f.origin.empty() || f.origin.size() == f.shape.size()),
         "frame.origin/global_shape", "both empty, or one entry per axis of shape",
         fmt::format("{} and {} entries", f.origin.size(), f.global_shape.size()));
}

std::string encode_message(const frame_view& f, codec c, std::uint64_t seq, int zstd_level) {
  validate(f);
  nlohmann::json h{{"seq", seq},
                   {"step", f.step},
                   {"time", f.time},
                   {"name", std::string(f.name)},
                   {"shape", f.shape},
                   {"dtype", std::string(to_string(f.type))},
                   {"codec", std::string(to_string(c))},
                   {"raw_bytes", f.data.size()}};
  if (!f.origin.empty()) {
    h["origin"] = f.origin;
    h["global_shape"] = f.global_shape;
  }
  std::string payload;
  if (c == codec::png) {
    expect(f.shape.size() == 2, "codec", "png only for 2-D frames", fmt::format("{}-D '{}'", f.shape.size(), f.name));
    const auto range = value_range(f.type, f.data);
    h["min"] = range[0];
    h["max"] = range[1];
    payload = encode_png(f.type, f.data, f.shape[0], f.shape[1], range[0], range[1]);
  } else {
    payload = compress(c, f.data, zstd_level);
  }
  const std::string header = h.dump();
  std::string out;
  out.reserve(8 + header.size() + payload.size());
  out.append(magic, 4);
  put_u32(out, static_cast<std::uint32_t>(header.size()));
  out += header;
  out += payload;
  return out;
}

frame_header parse_message(std::string_view m, std::string_view* payload) {
  if (m.size() < 8 || std::memcmp(m.data(), magic, 4) != 0)
    throw error(errc::invalid_argument, "frame message: expected the 'TRF1' magic and a header length");
  const std::uint32_t hl = get_u32(m.data() + 4);
  if (hl > max_header_bytes || hl > m.size() - 8)
    throw error(errc::invalid_argument,
                fmt::format("frame message: header length {} exceeds the message ({} bytes)", hl, m.size()));
  const auto j = nlohmann::json::parse(m.substr(8, hl), nullptr, false);
  if (!j.is_object()) throw error(errc::invalid_argument, "frame message: header is not a JSON object");
  frame_header h;
  try {
    h.seq = j.at("seq").get<std::uint64_t>();
    h.step = j.at("step").get<std::int64_t>();
    h.time = j.at("time").get<double>();
    h.name = j.at("name").get<std::string>();
    h.shape = j.at("shape").get<std::vector<std::int64_t>>();
    h.type = parse_dtype(j.at("dtype").get<std::string>());
    h.encoding = parse_codec(j.at("codec").get<std::string>());
    h.raw_bytes = j.at("raw_bytes").get<std::uint64_t>();
    h.min = j.value("min", 0.0);
    h.max = j.value("max", 0.0);
    h.origin = j.value("origin", std::vector<std::int64_t>{});
    h.global_shape = j.value("global_shape", std::vector<std::int64_t>{});
    h.downscale = j.value("downscale", 1);
  } catch (const nlohmann::json::exception& e) {
    throw error(errc::invalid_argument, fmt::format("frame message: bad header field: {}", e.what()));
  }
  if (h.downscale < 1) throw error(errc::invalid_argument, "frame message: downscale must be >= 1");
  if (h.shape.empty() || h.shape.size() > max_rank ||
      static_cast<std::uint64_t>(element_count(h.shape)) * dtype_size(h.type) != h.raw_bytes)
    throw error(errc::invalid_argument, "frame message: shape, dtype and raw_bytes disagree");
  if (payload) *payload = m.substr(8 + hl);
  return h;
}

std::vector<std::byte> decode_payload(const frame_header& h, std::string_view payload) {
  if (h.encoding == codec::png) {
    std::int64_t rows = 0, cols = 0;
    auto rgb = decode_png(payload, rows, cols);
    if (h.shape.size() != 2 || rows != h.shape[0] || cols != h.shape[1])
      throw error(errc::invalid_argument, "frame message: PNG size disagrees with the header's shape");
    return rgb;
  }
  return decompress(h.encoding, payload, h.raw_bytes);
}

}  // namespace toru::stream
