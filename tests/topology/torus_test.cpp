// SPDX-License-Identifier: BSD-3-Clause
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <random>

#include <nlohmann/json.hpp>

#include "test_util.hpp"
#include "toru/topology/torus.hpp"
#include "toru/topology/units.hpp"

using namespace toru::topology;

TEST(units, parse) {
  EXPECT_DOUBLE_EQ(parse_bandwidth("1.6GB/s", "bw"), 1.6e9);
  EXPECT_DOUBLE_EQ(parse_bandwidth("425 MB/s", "bw"), 425e6);
  EXPECT_DOUBLE_EQ(parse_bandwidth("100Gb/s", "bw"), 12.5e9);
  EXPECT_DOUBLE_EQ(parse_bandwidth("2GiB/s", "bw"), 2.0 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(parse_bandwidth("1e9", "bw"), 1e9);
  EXPECT_DOUBLE_EQ(parse_time("2.5us", "lat"), 2.5e-6);
  EXPECT_DOUBLE_EQ(parse_time("3ms", "lat"), 3e-3);
  EXPECT_DOUBLE_EQ(parse_time("0", "lat"), 0);
  EXPECT_DOUBLE_EQ(parse_bytes("64KiB", "b"), 65536);
  EXPECT_DOUBLE_EQ(parse_bytes("1MB", "b"), 1e6);
  EXPECT_DOUBLE_EQ(parse_bytes("65536", "b"), 65536);
  TORU_EXPECT_ERROR(parse_bandwidth("fast", "--bw"), "--bw", "'fast'");
  TORU_EXPECT_ERROR(parse_bandwidth("0GB/s", "--bw"), "--bw", "> 0");
  TORU_EXPECT_ERROR(parse_bandwidth("-1GB/s", "--bw"), "> 0");
  TORU_EXPECT_ERROR(parse_time("3parsecs", "lat"), "unknown unit 'parsecs'");
  TORU_EXPECT_ERROR(parse_time("-1us", "lat"), ">= 0");
  TORU_EXPECT_ERROR(parse_bytes("", "--alltoall-bytes"), "--alltoall-bytes");
  TORU_EXPECT_ERROR(parse_bytes("12XB", "--alltoall-bytes"), "'12XB'");
  EXPECT_EQ(format_bandwidth(1.6e9), "1.6 GB/s");
  EXPECT_EQ(format_time(2.5e-6), "2.5 us");
  EXPECT_EQ(format_bytes(65536), "64 KiB");
}

TEST(torus, parse_plain) {
  const auto t = torus::parse("16x16x32");
  ASSERT_EQ(t.ndims(), 3);
  EXPECT_EQ(t.size(), 8192);
  EXPECT_EQ(t[0].name, "X");
  EXPECT_EQ(t[1].name, "Y");
  EXPECT_EQ(t[2].name, "Z");
  for (const auto& a : t.axes()) {
    EXPECT_TRUE(a.wrap);
    EXPECT_FALSE(a.switched);
    EXPECT_EQ(a.bandwidth, default_bandwidth);
    EXPECT_EQ(a.latency, default_latency);
  }
  EXPECT_EQ(t.longest_axis(), 2);
  EXPECT_EQ(t.to_string(), "16x16x32");
}

TEST(torus, parse_options) {
  const auto a = torus::parse("16x16x32,bw=425MB/s,lat=2us");
  for (const auto& ax : a.axes()) {
    EXPECT_DOUBLE_EQ(ax.bandwidth, 425e6);
    EXPECT_DOUBLE_EQ(ax.latency, 2e-6);
  }
  const auto b = torus::parse("X=16x16[mesh]x32[bw=2GB/s]");
  EXPECT_EQ(b[0].name, "X");
  EXPECT_TRUE(b[0].wrap);
  EXPECT_FALSE(b[1].wrap);
  EXPECT_DOUBLE_EQ(b[2].bandwidth, 2e9);
  EXPECT_DOUBLE_EQ(b[1].bandwidth, default_bandwidth);
  const auto c = torus::parse("T=4[switch,bw=10GB/s]xN=16[switch,bw=3GB/s]");
  EXPECT_TRUE(c[0].switched);
  EXPECT_EQ(c[1].name, "N");
  EXPECT_DOUBLE_EQ(c[1].bandwidth, 3e9);
  // Names may contain the separator letter; blanks and '*' are accepted.
  const auto d = torus::parse("x=4xy=2 x z=3");
  EXPECT_EQ(d[0].name, "x");
  EXPECT_EQ(d[1].name, "y");
  EXPECT_EQ(d[2].extent, 3);
  EXPECT_EQ(torus::parse("8*8").size(), 64);
  // Per-axis options override the trailing ones for all axes.
  const auto e = torus::parse("4[bw=1GB/s]x4,bw=2GB/s,mesh");
  EXPECT_DOUBLE_EQ(e[0].bandwidth, 1e9);
  EXPECT_DOUBLE_EQ(e[1].bandwidth, 2e9);
  EXPECT_FALSE(e[0].wrap);
  EXPECT_FALSE(e[1].wrap);
  EXPECT_TRUE(torus::parse("4[torus]x4,mesh")[0].wrap);
}

TEST(torus, parse_invalid_names_the_offending_value) {
  TORU_EXPECT_ERROR(torus::parse(""), "empty spec");
  TORU_EXPECT_ERROR(torus::parse("16x"), "extent of axis 1", "end of the spec");
  TORU_EXPECT_ERROR(torus::parse("16x0x4"), "extent of axis 1", "'0'");
  TORU_EXPECT_ERROR(torus::parse("16x-4"), "extent of axis 1", "'-4'");
  TORU_EXPECT_ERROR(torus::parse("axb"), "'axb'");
  TORU_EXPECT_ERROR(torus::parse("16x16[foo]"), "'foo'");
  TORU_EXPECT_ERROR(torus::parse("16[bw=fast]"), "'fast'");
  TORU_EXPECT_ERROR(torus::parse("16[bw=-1GB/s]"), "> 0");
  TORU_EXPECT_ERROR(torus::parse("16[lat=3parsecs]"), "parsecs");
  TORU_EXPECT_ERROR(torus::parse("16,bw="), "bw=");
  TORU_EXPECT_ERROR(torus::parse("16[colour=red]"), "'colour'");
  TORU_EXPECT_ERROR(torus::parse("2x2x2x2x2x2x2"), "1 to 6 axes", "got 7");
  TORU_EXPECT_ERROR(torus::parse("X=4xX=4"), "distinct names", "'X'");
  TORU_EXPECT_ERROR(torus::parse("16[mesh"), "']'");
  TORU_EXPECT_ERROR(torus::parse("99999999999"), "'99999999999'");
  TORU_EXPECT_ERROR(torus::parse("16x16y"), "'y'");
  TORU_EXPECT_ERROR(torus::parse("65536x65536"), "at most");
  TORU_EXPECT_ERROR(torus(std::vector<axis>{}), "1 to 6 axes");
  axis bad;
  bad.extent = 0;
  TORU_EXPECT_ERROR(torus({bad}), "extent", "got 0");
  bad.extent = 2;
  bad.bandwidth = 0;
  TORU_EXPECT_ERROR(torus({bad}), "bandwidth");
  bad.bandwidth = 1;
  bad.name = "1x";
  TORU_EXPECT_ERROR(torus({bad}), "'1x'");
}

TEST(torus, string_and_json_round_trip_random) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<axis> axes(static_cast<std::size_t>(1 + rng() % 6));
    const bool named = rng() % 2;
    for (std::size_t i = 0; i < axes.size(); ++i) {
      auto& a = axes[i];
      a.extent = 1 + static_cast<int>(rng() % 4);
      const int kind = static_cast<int>(rng() % 3);
      a.wrap = kind != 1;
      a.switched = kind == 2;
      if (rng() % 2) a.bandwidth = std::uniform_real_distribution<double>(1e6, 1e11)(rng);
      if (rng() % 3 == 0) a.bandwidth = 425e6;
      if (rng() % 2) a.latency = std::uniform_real_distribution<double>(0, 1e-5)(rng);
      if (named) a.name = "ax" + std::to_string(i);
    }
    const torus t(axes);
    EXPECT_EQ(torus::parse(t.to_string()), t) << t.to_string();
    EXPECT_EQ(torus::from_json(t.to_json()), t) << t.to_json().dump();
    EXPECT_EQ(torus::from_json(nlohmann::json(t.to_string())), t);
  }
}

TEST(torus, json) {
  const auto j = nlohmann::json::parse(R"({"bandwidth": "2GB/s",
    "axes": [{"name": "A", "extent": 4}, {"extent": 3, "kind": "mesh", "latency": "5us"},
             {"extent": 2, "wrap": false, "bandwidth": 1e9}]})");
  const auto t = torus::from_json(j);
  EXPECT_EQ(t[0].name, "A");
  EXPECT_DOUBLE_EQ(t[0].bandwidth, 2e9);
  EXPECT_FALSE(t[1].wrap);
  EXPECT_DOUBLE_EQ(t[1].latency, 5e-6);
  EXPECT_DOUBLE_EQ(t[2].bandwidth, 1e9);
  EXPECT_FALSE(t[2].wrap);
  TORU_EXPECT_ERROR(torus::from_json(nlohmann::json::parse(R"({"axes":[{"extent":4,"bandwith":1}]})")), "axes[0]",
                    "unknown key 'bandwith'");
  TORU_EXPECT_ERROR(torus::from_json(nlohmann::json::parse(R"({"axes":[{"extent":-4}]})")), "axes[0].extent", "got -4");
  TORU_EXPECT_ERROR(torus::from_json(nlohmann::json::parse(R"({"axes":[{"name":"X"}]})")), "axes[0].extent", "nothing");
  TORU_EXPECT_ERROR(torus::from_json(nlohmann::json::parse(R"({"axes":[{"extent":4,"kind":"hypercube"}]})")),
                    "'hypercube'");
  TORU_EXPECT_ERROR(torus::from_json(nlohmann::json::parse(R"([1,2])")), "'axes'");
  TORU_EXPECT_ERROR(torus::load("/nonexistent/torus.json"), "/nonexistent/torus.json");
  const std::string path = testing::TempDir() + "toru_torus_bad.json";
  std::ofstream(path) << "{ not json";
  TORU_EXPECT_ERROR(torus::load(path), path, "expected JSON");
  std::ofstream(path) << t.to_json().dump();
  EXPECT_EQ(torus::load(path), t);
  std::remove(path.c_str());
}

TEST(torus, coords_round_trip) {
  const auto t = torus::parse("3x4x5");
  for (std::int64_t n = 0; n < t.size(); ++n) {
    const auto c = t.coords(n);
    EXPECT_EQ(t.node(c), n);
  }
  EXPECT_EQ(t.coords(1), (std::vector<int>{1, 0, 0}));  // axis 0 fastest
  EXPECT_EQ(t.coords(3), (std::vector<int>{0, 1, 0}));
  EXPECT_EQ(t.coords(12), (std::vector<int>{0, 0, 1}));
  TORU_EXPECT_ERROR(t.coords(60), "got 60");
  TORU_EXPECT_ERROR(t.node(std::vector<int>{0, 4, 0}), "coordinate 1", "got 4");
  TORU_EXPECT_ERROR(t.node(std::vector<int>{0, 0}), "3 values", "got 2");
  const auto s = t.sub(std::vector<int>{2, 0});
  EXPECT_EQ(s.ndims(), 2);
  EXPECT_EQ(s[0].extent, 5);
  EXPECT_EQ(s[1].extent, 3);
  TORU_EXPECT_ERROR(t.sub(std::vector<int>{1, 1}), "distinct axes");
}

TEST(torus, longest_axis_uses_bandwidth_and_kind) {
  EXPECT_EQ(torus::parse("8x8x8").longest_axis(), 2);  // ties: highest index
  EXPECT_EQ(torus::parse("4[bw=1GB/s]x8[bw=4GB/s]").longest_axis(), 0);
  EXPECT_EQ(torus::parse("8[mesh]x12").longest_axis(), 0);  // mesh 8 counts as 16
  EXPECT_EQ(torus::parse("5x4").longest_axis(), 0);         // 24/5 = 4.8 > 4
}

TEST(torus, factorize) {
  EXPECT_EQ(factorize(8192, 3), (std::vector<int>{16, 16, 32}));
  EXPECT_EQ(factorize(12, 2), (std::vector<int>{3, 4}));
  EXPECT_EQ(factorize(7, 3), (std::vector<int>{1, 1, 7}));
  EXPECT_EQ(factorize(1, 1), (std::vector<int>{1}));
  EXPECT_EQ(factorize(6, 2), (std::vector<int>{2, 3}));
  for (int n = 1; n <= 200; ++n)
    for (int d = 1; d <= 4; ++d) {
      long long p = 1;
      for (int e : factorize(n, d)) p *= e;
      EXPECT_EQ(p, n);
    }
  TORU_EXPECT_ERROR(factorize(0, 2), "got 0");
}
