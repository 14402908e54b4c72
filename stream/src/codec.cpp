// SPDX-License-Identifier: BSD-3-Clause
#include "toru/stream/codec.hpp"

#include <png.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>

#include <fmt/format.h>
#include <lz4.h>
#include <zstd.h>

#include "toru/core/error.hpp"

namespace toru::stream {

std::string compress(codec c, std::span<const std::byte> in, int zstd_level) {
  std::string out;
  switch (c) {
    case codec::raw:
      out.assign(reinterpret_cast<const char*>(in.data()), in.size());
      return out;
    case codec::zstd: {
      out.resize(ZSTD_compressBound(in.size()));
      const auto n = ZSTD_compress(out.data(), out.size(), in.data(), in.size(), zstd_level);
      if (ZSTD_isError(n)) throw error(errc::internal, fmt::format("zstd: {}", ZSTD_getErrorName(n)));
      out.resize(n);
      return out;
    }
    case codec::lz4: {
      expect(in.size() <= static_cast<std::size_t>(LZ4_MAX_INPUT_SIZE), "frame.data", "at most 2 GB for lz4",
             std::to_string(in.size()));
      out.resize(static_cast<std::size_t>(LZ4_compressBound(static_cast<int>(in.size()))));
      const int n = LZ4_compress_default(reinterpret_cast<const char*>(in.data()), out.data(),
                                         static_cast<int>(in.size()), static_cast<int>(out.size()));
      if (n <= 0 && !in.empty()) throw error(errc::internal, "lz4: compression failed");
      out.resize(static_cast<std::size_t>(n));
      return out;
    }
    case codec::png:
      break;
  }
  throw error(errc::invalid_argument, "codec: png is not a lossless byte codec; use encode_png");
}

std::vector<std::byte> decompress(codec c, std::string_view in, std::size_t raw_bytes) {
  std::vector<std::byte> out(raw_bytes);
  switch (c) {
    case codec::raw:
      if (in.size() != raw_bytes)
        throw error(errc::invalid_argument,
                    fmt::format("raw payload: expected {} bytes, got {}", raw_bytes, in.size()));
      // An empty payload's data() may be null, which memcpy does not allow even for 0 bytes.
      std::copy_n(in.data(), raw_bytes, reinterpret_cast<char*>(out.data()));
      return out;
    case codec::zstd: {
      const auto n = ZSTD_decompress(out.data(), out.size(), in.data(), in.size());
      if (ZSTD_isError(n) || n != raw_bytes)
        throw error(errc::invalid_argument,
                    fmt::format("zstd payload: corrupt ({})", ZSTD_isError(n) ? ZSTD_getErrorName(n) : "wrong size"));
      return out;
    }
    case codec::lz4: {
      const int n = LZ4_decompress_safe(in.data(), reinterpret_cast<char*>(out.data()), static_cast<int>(in.size()),
                                        static_cast<int>(raw_bytes));
      if (n < 0 || static_cast<std::size_t>(n) != raw_bytes)
        throw error(errc::invalid_argument, "lz4 payload: corrupt");
      return out;
    }
    case codec::png:
      break;
  }
  throw error(errc::invalid_argument, "codec: png payloads decode with decode_png");
}

const std::array<std::array<std::uint8_t, 3>, 256>& colour_map() {
  // Viridis, interpolated from 9 anchor colours: perceptually ordered and readable in grey.
  static const auto table = [] {
    constexpr double anchors[9][3] = {{68, 1, 84},    {71, 44, 122}, {59, 81, 139},  {44, 113, 142}, {33, 144, 141},
                                      {39, 173, 129}, {92, 200, 99}, {170, 220, 50}, {253, 231, 37}};
    std::array<std::array<std::uint8_t, 3>, 256> t{};
    for (int i = 0; i < 256; ++i) {
      const double x = i / 255.0 * 8;
      const int k = std::min(7, static_cast<int>(x));
      const double f = x - k;
      for (int c = 0; c < 3; ++c)
        t[i][c] = static_cast<std::uint8_t>(std::lround(anchors[k][c] * (1 - f) + anchors[k + 1][c] * f));
    }
    return t;
  }();
  return table;
}

namespace {
template <class F>
void for_each_value(dtype type, std::span<const std::byte> data, F&& f) {
  const std::size_t n = data.size() / dtype_size(type);
  auto run = [&]<class T>(T*) {
    for (std::size_t i = 0; i < n; ++i) {
      T v;
      std::memcpy(&v, data.data() + i * sizeof(T), sizeof(T));
      f(i, static_cast<double>(v));
    }
  };
  switch (type) {
    case dtype::u8:
      run(static_cast<std::uint8_t*>(nullptr));
      break;
    case dtype::i32:
      run(static_cast<std::int32_t*>(nullptr));
      break;
    case dtype::f32:
      run(static_cast<float*>(nullptr));
      break;
    case dtype::f64:
      run(static_cast<double*>(nullptr));
      break;
  }
}
}  // namespace

std::array<double, 2> value_range(dtype type, std::span<const std::byte> data) {
  double lo = INFINITY, hi = -INFINITY;
  for_each_value(type, data, [&](std::size_t, double v) {
    if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  });
  if (lo > hi) return {0, 0};
  return {lo, hi};
}

std::vector<std::uint8_t> colour_indices(dtype type, std::span<const std::byte> data, double lo, double hi) {
  std::vector<std::uint8_t> idx(data.size() / dtype_size(type));
  const double scale = hi > lo ? 255.0 / (hi - lo) : 0;
  for_each_value(type, data, [&](std::size_t i, double v) {
    const double x = std::isfinite(v) ? (v - lo) * scale : 0;
    idx[i] = static_cast<std::uint8_t>(std::clamp(std::lround(x), 0L, 255L));
  });
  return idx;
}

std::string encode_png_rgb(std::span<const std::uint8_t> rgb, std::int64_t rows, std::int64_t cols) {
  expect(rows > 0 && cols > 0 && rows <= (1 << 20) && cols <= (1 << 20), "frame.shape", "a 2-D image up to 2^20 a side",
         fmt::format("{}x{}", rows, cols));
  expect(rgb.size() == static_cast<std::size_t>(rows * cols * 3), "rgb", "3 bytes per pixel",
         fmt::format("{} bytes for {}x{}", rgb.size(), rows, cols));
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  image.width = static_cast<png_uint_32>(cols);
  image.height = static_cast<png_uint_32>(rows);
  image.format = PNG_FORMAT_RGB;
  png_alloc_size_t size = 0;
  if (!png_image_write_to_memory(&image, nullptr, &size, 0, rgb.data(), 0, nullptr))
    throw error(errc::internal, fmt::format("libpng: {}", image.message));
  std::string out(size, '\0');
  if (!png_image_write_to_memory(&image, out.data(), &size, 0, rgb.data(), 0, nullptr))
    throw error(errc::internal, fmt::format("libpng: {}", image.message));
  out.resize(size);
  return out;
}

std::string encode_png(dtype type, std::span<const std::byte> data, std::int64_t rows, std::int64_t cols, double lo,
                       double hi) {
  expect(rows > 0 && cols > 0 && rows <= (1 << 20) && cols <= (1 << 20), "frame.shape", "a 2-D image up to 2^20 a side",
         fmt::format("{}x{}", rows, cols));
  const auto idx = colour_indices(type, data, lo, hi);
  const auto& map = colour_map();
  std::vector<std::uint8_t> rgb(idx.size() * 3);
  for (std::size_t i = 0; i < idx.size(); ++i) std::memcpy(&rgb[3 * i], map[idx[i]].data(), 3);
  return encode_png_rgb(rgb, rows, cols);
}

std::vector<std::byte> decode_png(std::string_view png, std::int64_t& rows, std::int64_t& cols) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&image, png.data(), png.size()))
    throw error(errc::invalid_argument, fmt::format("png payload: {}", image.message));
  image.format = PNG_FORMAT_RGB;
  std::vector<std::byte> out(PNG_IMAGE_SIZE(image));
  if (!png_image_finish_read(&image, nullptr, out.data(), 0, nullptr)) {
    png_image_free(&image);
    throw error(errc::invalid_argument, fmt::format("png payload: {}", image.message));
  }
  rows = image.height;
  cols = image.width;
  return out;
}

}  // namespace toru::stream
