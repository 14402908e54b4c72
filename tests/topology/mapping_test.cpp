// SPDX-License-Identifier: BSD-3-Clause
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <random>

#include <nlohmann/json.hpp>

#include "test_util.hpp"
#include "toru/topology/mapping.hpp"

using namespace toru::topology;

namespace {
std::string write_file(const std::string& name, const std::string& text) {
  const std::string path = testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}
}  // namespace

TEST(mapping, from_order) {
  const auto t = torus::parse("4x2x2");
  const auto m = mapping::from_order(t, "ZXY");
  EXPECT_EQ(std::vector<int>(m.coords(1).begin(), m.coords(1).end()), (std::vector<int>{0, 0, 1}));
  EXPECT_EQ(std::vector<int>(m.coords(2).begin(), m.coords(2).end()), (std::vector<int>{1, 0, 0}));
  EXPECT_EQ(m.rank_at(std::array{3, 1, 1}), 15);
  EXPECT_EQ(m.describe(), "order ZXY");
  EXPECT_TRUE(mapping::from_order(t, "xyz").is_identity());
  EXPECT_TRUE(mapping::from_order(t, "012").is_identity());
  EXPECT_EQ(mapping::from_order(t, "2,0,1"), m);
  EXPECT_EQ(mapping::identity(t).describe(), "order XYZ");
  const auto named = torus::parse("cores=4xnodes=3");
  const auto n = mapping::from_order(named, "nodes,cores");
  EXPECT_EQ(n.rank_at(std::array{1, 0}), 3);
  EXPECT_EQ(n.describe(), "order nodes,cores");
}

TEST(mapping, from_order_invalid) {
  const auto t = torus::parse("4x2x2");
  TORU_EXPECT_ERROR(mapping::from_order(t, "XY"), "'XY'", "got 2 of 3 axes");
  TORU_EXPECT_ERROR(mapping::from_order(t, "XXZ"), "axis 'X' twice");
  TORU_EXPECT_ERROR(mapping::from_order(t, "XQZ"), "unknown axis 'Q'");
  TORU_EXPECT_ERROR(mapping::from_order(t, "XYZT"), "unknown axis 'T'");
}

TEST(mapping, round_trip_random_permutations) {
  std::mt19937 rng(11);
  for (const char* spec : {"7", "2x3x4", "3x3x3", "2x2x2x2x1x3", "5x1x2"}) {
    const auto t = torus::parse(spec);
    std::vector<std::int64_t> nodes(static_cast<std::size_t>(t.size()));
    std::iota(nodes.begin(), nodes.end(), 0);
    std::shuffle(nodes.begin(), nodes.end(), rng);
    std::vector<std::vector<int>> c;
    for (auto n : nodes) c.push_back(t.coords(n));
    const mapping m(t, c);
    for (int r = 0; r < m.nranks(); ++r) {
      EXPECT_EQ(m.rank_at(m.coords(r)), r);
      EXPECT_EQ(m.node_of(r), nodes[static_cast<std::size_t>(r)]);
      EXPECT_EQ(m.rank_of_node(m.node_of(r)), r);
    }
    EXPECT_EQ(mapping::from_json(t, m.to_json()), m);
    const auto path = write_file("toru_map_rt.txt", [&] {
      std::string s = "# random map\n";
      for (int r = 0; r < m.nranks(); ++r) {
        for (int x : m.coords(r)) s += std::to_string(x) + " ";
        s += "\n";
      }
      return s;
    }());
    EXPECT_EQ(mapping::from_file(t, path), m);
    std::remove(path.c_str());
  }
}

TEST(mapping, bijection_checked) {
  const auto t = torus::parse("2x2");
  TORU_EXPECT_ERROR(mapping(t, {{0, 0}, {1, 0}, {0, 1}, {1, 0}}), "ranks 1 and 3", "(1,0)");
  TORU_EXPECT_ERROR(mapping(t, {{0, 0}, {1, 0}, {0, 1}}), "4 ranks", "got 3");
  TORU_EXPECT_ERROR(mapping(t, {{0, 0}, {1, 0}, {0, 1}, {1, 2}}), "rank 3 coordinate 1", "got 2");
  TORU_EXPECT_ERROR(mapping(t, {{0, 0}, {1, 0}, {0, 1}, {1}}), "rank 3", "2 coordinates");
}

TEST(mapping, from_file_formats_and_errors) {
  const auto t = torus::parse("2x2");
  // Ranked lines in any order, with comments, blanks, commas and colons.
  auto p = write_file("toru_map_a.txt", "# rank: x y\n3: 1 1\n\n0: 0,0\n2 0 1  # tail comment\n1: 1 0\n");
  const auto m = mapping::from_file(t, p);
  EXPECT_EQ(m.rank_at(std::array{0, 1}), 2);
  EXPECT_EQ(m.rank_at(std::array{1, 1}), 3);
  p = write_file("toru_map_b.txt", "0: 0 0\n1: 1 0\n1: 0 1\n3: 1 1\n");
  TORU_EXPECT_ERROR(mapping::from_file(t, p), "line 3", "rank 1 already given on line 2");
  p = write_file("toru_map_c.txt", "0: 0 0\n1: 1 0\n3: 1 1\n");
  TORU_EXPECT_ERROR(mapping::from_file(t, p), "rank 2 is missing");
  p = write_file("toru_map_d.txt", "0 0\n1 0\n0 1\n1 0\n");
  TORU_EXPECT_ERROR(mapping::from_file(t, p), "line 4", "rank 3 repeats (1,0) of rank 1");
  p = write_file("toru_map_e.txt", "0 0\n1 0\n0 1\n1 0\n1 1\n");
  TORU_EXPECT_ERROR(mapping::from_file(t, p), "line 5", "one line too many");
  p = write_file("toru_map_f.txt", "0 0\n1 0\n0 x1\n1 1\n");
  TORU_EXPECT_ERROR(mapping::from_file(t, p), "line 3", "'x1'");
  p = write_file("toru_map_g.txt", "0 0\n1 0\n0 1 1 1\n1 1\n");
  TORU_EXPECT_ERROR(mapping::from_file(t, p), "line 3", "got 4 values");
  p = write_file("toru_map_h.txt", "0 0\n1 0\n0 2\n1 1\n");
  TORU_EXPECT_ERROR(mapping::from_file(t, p), "line 3", "coordinate 1", "got 2");
  p = write_file("toru_map_i.txt", "0 0\n1: 1 0\n");
  TORU_EXPECT_ERROR(mapping::from_file(t, p), "line 2", "mix");
  p = write_file("toru_map_j.txt", "9: 0 0\n");
  TORU_EXPECT_ERROR(mapping::from_file(t, p), "line 1", "got 9");
  std::remove(p.c_str());
  TORU_EXPECT_ERROR(mapping::from_file(t, "/nonexistent/map.txt"), "/nonexistent/map.txt");
}
