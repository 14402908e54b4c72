// SPDX-License-Identifier: BSD-3-Clause
// Codecs and the message format: lossless round trips for every codec and dtype on random data of
// awkward sizes; PNG decodes to exactly the colour-mapped input; malformed messages are rejected
// with toru::error, never read out of bounds.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <span>

#include "toru/core/error.hpp"
#include "toru/stream/codec.hpp"
#include "toru/stream/frame.hpp"

namespace ts = toru::stream;

namespace {

template <class T>
std::vector<T> random_values(std::size_t n, unsigned seed) {
  std::mt19937 g(seed);
  std::vector<T> v(n);
  for (auto& x : v) {
    if constexpr (std::is_floating_point_v<T>)
      x = static_cast<T>(std::normal_distribution<double>(0, 3)(g));
    else
      x = static_cast<T>(g() % 7);  // compressible, as real fields are
  }
  return v;
}

template <class T>
void round_trip(std::vector<std::int64_t> shape, unsigned seed) {
  std::size_t n = 1;
  for (auto e : shape) n *= static_cast<std::size_t>(e);
  const auto data = random_values<T>(n, seed);
  for (auto c : {ts::codec::raw, ts::codec::zstd, ts::codec::lz4}) {
    const auto msg = ts::encode_message(ts::make_frame<T>("field", 17, 0.25, shape, data), c, 42);
    std::string_view payload;
    const auto h = ts::parse_message(msg, &payload);
    EXPECT_EQ(h.seq, 42u);
    EXPECT_EQ(h.step, 17);
    EXPECT_EQ(h.time, 0.25);
    EXPECT_EQ(h.name, "field");
    EXPECT_EQ(h.shape, shape);
    EXPECT_EQ(h.type, ts::dtype_of<T>());
    EXPECT_EQ(h.encoding, c);
    const auto out = ts::decode_payload(h, payload);
    ASSERT_EQ(out.size(), n * sizeof(T)) << ts::to_string(c);
    // std::equal, not memcmp: an empty array's data() is null, which memcmp does not allow.
    const auto expected = std::as_bytes(std::span(data));
    EXPECT_TRUE(std::equal(out.begin(), out.end(), expected.begin(), expected.end())) << ts::to_string(c);
  }
}

}  // namespace

TEST(StreamCodec, LosslessRoundTripEveryDtypeAwkwardSizes) {
  unsigned seed = 1;
  for (auto shape : std::vector<std::vector<std::int64_t>>{{1}, {7}, {1021}, {13, 17}, {3, 5, 7}, {0}}) {
    round_trip<std::uint8_t>(shape, seed++);
    round_trip<std::int32_t>(shape, seed++);
    round_trip<float>(shape, seed++);
    round_trip<double>(shape, seed++);
  }
}

TEST(StreamCodec, CompressionShrinksRedundantData) {
  std::vector<double> smooth(4096);
  for (std::size_t i = 0; i < smooth.size(); ++i) smooth[i] = static_cast<double>(i % 64);
  const auto bytes = std::as_bytes(std::span(smooth));
  EXPECT_LT(ts::compress(ts::codec::zstd, bytes).size(), bytes.size() / 4);
  EXPECT_LT(ts::compress(ts::codec::lz4, bytes).size(), bytes.size() / 2);
}

TEST(StreamCodec, PngIsTheColourMappedArray) {
  const std::int64_t rows = 13, cols = 29;  // odd sizes: PNG rows are not padded in the decoded image
  const auto data = random_values<float>(rows * cols, 7);
  const auto msg = ts::encode_message(ts::make_frame<float>("slice", 3, 1.5, {rows, cols}, data), ts::codec::png, 0);
  std::string_view payload;
  const auto h = ts::parse_message(msg, &payload);
  ASSERT_EQ(h.encoding, ts::codec::png);
  const auto range = ts::value_range(ts::dtype::f32, std::as_bytes(std::span(data)));
  EXPECT_EQ(h.min, range[0]);
  EXPECT_EQ(h.max, range[1]);
  const auto rgb = ts::decode_payload(h, payload);
  ASSERT_EQ(rgb.size(), static_cast<std::size_t>(rows * cols * 3));
  // Reference by hand: index = round((v - min) * 255 / (max - min)), then the colour map.
  const auto& map = ts::colour_map();
  for (std::int64_t i = 0; i < rows * cols; ++i) {
    const auto k = static_cast<int>(std::lround((data[i] - range[0]) * 255.0 / (range[1] - range[0])));
    for (int c = 0; c < 3; ++c) ASSERT_EQ(std::to_integer<int>(rgb[3 * i + c]), map[k][c]) << "pixel " << i;
  }
  // The map runs dark to bright: a reader can tell low from high.
  EXPECT_LT(map[0][0] + map[0][1] + map[0][2], map[255][0] + map[255][1] + map[255][2]);
}

TEST(StreamCodec, RejectsBadFrames) {
  std::vector<float> v(10);
  EXPECT_THROW(ts::encode_message(ts::make_frame<float>("x", 0, 0, {3, 3}, v), ts::codec::raw, 0), toru::error);
  EXPECT_THROW(ts::encode_message(ts::make_frame<float>("", 0, 0, {10}, v), ts::codec::raw, 0), toru::error);
  EXPECT_THROW(ts::encode_message(ts::make_frame<float>("x", 0, 0, {10}, v), ts::codec::png, 0), toru::error);
  EXPECT_THROW(ts::encode_message(ts::make_frame<float>("x", 0, 0, {-2, -5}, v), ts::codec::raw, 0), toru::error);
  EXPECT_THROW(ts::parse_codec("gzip"), toru::error);
  EXPECT_THROW(ts::parse_dtype("f16"), toru::error);
}

TEST(StreamCodec, MalformedMessagesThrowNeverCrash) {
  const auto data = random_values<double>(100, 3);
  const auto msg = ts::encode_message(ts::make_frame<double>("s", 1, 1, {100}, data), ts::codec::zstd, 5);
  // Every truncation either parses (the header is intact) and fails to decode, or throws.
  for (std::size_t n = 0; n < msg.size(); ++n) {
    const std::string cut = msg.substr(0, n);
    try {
      std::string_view payload;
      const auto h = ts::parse_message(cut, &payload);
      EXPECT_THROW(ts::decode_payload(h, payload), toru::error) << n;
    } catch (const toru::error&) {
    }
  }
  // Random byte flips in the header and payload: no crash, and a decode either throws or yields the right size.
  std::mt19937 g(11);
  int rejected = 0;
  for (int trial = 0; trial < 300; ++trial) {
    std::string bad = msg;
    bad[g() % bad.size()] = static_cast<char>(g());
    try {
      std::string_view payload;
      const auto h = ts::parse_message(bad, &payload);
      EXPECT_EQ(ts::decode_payload(h, payload).size(), h.raw_bytes);
    } catch (const toru::error&) {
      ++rejected;
    }
  }
  EXPECT_GT(rejected, 0);
  std::string huge_header = msg;
  huge_header[4] = huge_header[5] = huge_header[6] = huge_header[7] = '\xff';
  EXPECT_THROW(ts::parse_message(huge_header), toru::error);
  EXPECT_THROW(ts::parse_message("TRF1"), toru::error);
  EXPECT_THROW(ts::parse_message(std::string("TRF1\x02\0\0\0{}", 10)), toru::error);
}
