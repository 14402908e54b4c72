// SPDX-License-Identifier: BSD-3-Clause
// Transcoding on the way to one viewer: 2-D frames box-averaged by a factor (each codec; the values
// against averages computed here, partial edge blocks included), zstd/lz4 payloads decompressed
// for a viewer that accepts raw and PNG only (a browser), and no copy when nothing changes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <type_traits>
#include <vector>

#include "toru/core/error.hpp"
#include "toru/stream/codec.hpp"
#include "toru/stream/transcode.hpp"

namespace ts = toru::stream;

namespace {

template <class T>
std::vector<T> random_field(std::int64_t rows, std::int64_t cols, unsigned seed) {
  std::mt19937 g(seed);
  std::vector<T> v(static_cast<std::size_t>(rows * cols));
  for (auto& x : v) {
    if constexpr (std::is_integral_v<T>)
      x = static_cast<T>(std::uniform_int_distribution<int>(0, 200)(g));
    else
      x = static_cast<T>(std::normal_distribution<double>(0, 1)(g));
  }
  return v;
}

// The reference: every block's plain mean.
template <class T>
std::vector<double> block_means(const std::vector<T>& v, std::int64_t rows, std::int64_t cols, int s) {
  std::vector<double> out;
  for (std::int64_t i = 0; i < rows; i += s)
    for (std::int64_t j = 0; j < cols; j += s) {
      double sum = 0;
      int n = 0;
      for (std::int64_t a = i; a < std::min(rows, i + s); ++a)
        for (std::int64_t b = j; b < std::min(cols, j + s); ++b) sum += static_cast<double>(v[a * cols + b]), ++n;
      out.push_back(sum / n);
    }
  return out;
}

template <class T>
std::vector<T> payload_as(const std::string& msg, ts::frame_header& h) {
  std::string_view payload;
  h = ts::parse_message(msg, &payload);
  const auto raw = ts::decode_payload(h, payload);
  std::vector<T> out(raw.size() / sizeof(T));
  std::memcpy(out.data(), raw.data(), raw.size());
  return out;
}

}  // namespace

TEST(StreamTranscode, DownscaleAveragesBlocksForEveryLosslessCodec) {
  const std::int64_t rows = 13, cols = 7;  // 13 = 4*3 + 1 and 7 = 2*3 + 1: partial blocks on both edges
  for (auto c : {ts::codec::raw, ts::codec::zstd, ts::codec::lz4})
    for (int s : {2, 3, 4}) {
      const auto v = random_field<float>(rows, cols, 7u + static_cast<unsigned>(s));
      const auto msg = ts::encode_message(ts::make_frame<float>("u", 5, 0.5, {rows, cols}, v), c, 42);
      ts::frame_header h;
      const auto got = payload_as<float>(ts::downscale_message(msg, s), h);
      EXPECT_EQ(h.shape, (std::vector<std::int64_t>{(rows + s - 1) / s, (cols + s - 1) / s}));
      EXPECT_EQ(h.encoding, c);
      EXPECT_EQ(h.seq, 42u);
      EXPECT_EQ(h.step, 5);
      EXPECT_EQ(h.downscale, s);
      const auto want = block_means(v, rows, cols, s);
      ASSERT_EQ(got.size(), want.size());
      for (std::size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5) << i;
    }
}

TEST(StreamTranscode, DownscaleRoundsIntegersAndComposes) {
  const std::int64_t rows = 8, cols = 6;
  const auto v = random_field<std::int32_t>(rows, cols, 3);
  const auto msg = ts::encode_message(ts::make_frame<std::int32_t>("n", 0, 0, {rows, cols}, v), ts::codec::zstd, 0);
  ts::frame_header h;
  const auto got = payload_as<std::int32_t>(ts::downscale_message(msg, 2), h);
  const auto want = block_means(v, rows, cols, 2);
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i], std::llround(want[i]));
  // Twice by 2 is reported as 4 (the header composes).
  EXPECT_EQ(ts::parse_message(ts::downscale_message(ts::downscale_message(msg, 2), 2)).downscale, 4);
}

TEST(StreamTranscode, DownscaleAveragesPngPixels) {
  const std::int64_t rows = 9, cols = 10;
  const auto v = random_field<double>(rows, cols, 11);
  const auto msg = ts::encode_message(ts::make_frame<double>("img", 1, 0, {rows, cols}, v), ts::codec::png, 3);
  ts::frame_header h0, h;
  const auto rgb = payload_as<std::uint8_t>(msg, h0);
  const auto small = payload_as<std::uint8_t>(ts::downscale_message(msg, 2), h);
  EXPECT_EQ(h.encoding, ts::codec::png);
  EXPECT_EQ(h.shape, (std::vector<std::int64_t>{5, 5}));
  EXPECT_EQ(h.min, h0.min);
  EXPECT_EQ(h.max, h0.max);
  for (int ch = 0; ch < 3; ++ch) {
    std::vector<double> plane;
    for (std::int64_t i = 0; i < rows * cols; ++i) plane.push_back(rgb[static_cast<std::size_t>(3 * i + ch)]);
    const auto want = block_means(plane, rows, cols, 2);
    for (std::size_t i = 0; i < want.size(); ++i) EXPECT_EQ(small[3 * i + ch], std::llround(want[i])) << i;
  }
}

TEST(StreamTranscode, OneDimensionalFramesAndScaleOneAreUnchanged) {
  const std::vector<double> ek{1, 0.5, 0.25, 0.125, 0.0625};
  const auto msg = ts::encode_message(ts::make_frame<double>("spectrum", 0, 0, {5}, ek), ts::codec::raw, 0);
  EXPECT_EQ(ts::downscale_message(msg, 4), msg);
  const auto v = random_field<float>(4, 4, 1);
  const auto img = ts::encode_message(ts::make_frame<float>("u", 0, 0, {4, 4}, v), ts::codec::lz4, 0);
  EXPECT_EQ(ts::downscale_message(img, 1), img);
  EXPECT_THROW(ts::downscale_message(img, 0), toru::error);
  EXPECT_THROW(ts::downscale_message("TRF1garbage", 2), toru::error);
}

TEST(StreamTranscode, BrowserViewersGetRawForZstdAndLz4) {
  const unsigned browser = ts::codec_mask({"raw", "png"});
  for (auto c : {ts::codec::zstd, ts::codec::lz4}) {
    const auto v = random_field<float>(11, 3, 5);
    auto msg =
        std::make_shared<const std::string>(ts::encode_message(ts::make_frame<float>("u", 2, 0.25, {11, 3}, v), c, 9));
    const auto out = ts::transcode(msg, 1, browser);
    ts::frame_header h;
    const auto got = payload_as<float>(*out, h);
    EXPECT_EQ(h.encoding, ts::codec::raw);
    EXPECT_EQ(h.seq, 9u);
    EXPECT_EQ(got, v);                                      // bit-exact: lossless codecs
    EXPECT_EQ(ts::transcode(msg, 1, ts::all_codecs), msg);  // a script viewer: the very same message
    // Both at once: reduced, then unpacked.
    const auto both = ts::transcode(msg, 2, browser);
    EXPECT_EQ(ts::parse_message(*both).encoding, ts::codec::raw);
    EXPECT_EQ(ts::parse_message(*both).shape, (std::vector<std::int64_t>{6, 2}));
  }
  const auto v = random_field<float>(4, 4, 2);
  auto png = std::make_shared<const std::string>(
      ts::encode_message(ts::make_frame<float>("u", 0, 0, {4, 4}, v), ts::codec::png, 0));
  EXPECT_EQ(ts::transcode(png, 1, ts::codec_mask({})), png);  // PNG stays PNG (the page decodes it)
  EXPECT_THROW(ts::codec_mask({"gif"}), toru::error);
}
