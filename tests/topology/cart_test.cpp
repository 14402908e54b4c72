// SPDX-License-Identifier: BSD-3-Clause
// Cartesian layouts on 1, 2, 3, 4, 6 and 8 ranks: line and plane sub-communicators, mappings
// made collectively, and bad input that must fail the same way on every rank.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <random>

#include "mpi_test.hpp"
#include "test_util.hpp"
#include "toru/topology/cart.hpp"

using namespace toru::topology;

namespace {

std::vector<int> to_vector(std::span<const int> s) { return {s.begin(), s.end()}; }

// Every rank's coordinates, gathered over `comm`, in that communicator's rank order.
std::vector<std::vector<int>> gather_coords(MPI_Comm comm, std::span<const int> mine) {
  const int n = toru::test::nranks(comm), nd = static_cast<int>(mine.size());
  std::vector<int> all(static_cast<std::size_t>(n * nd));
  MPI_Allgather(mine.data(), nd, MPI_INT, all.data(), nd, MPI_INT, comm);
  std::vector<std::vector<int>> out;
  for (int r = 0; r < n; ++r) out.emplace_back(all.begin() + r * nd, all.begin() + (r + 1) * nd);
  return out;
}

// The shapes tried for P ranks: 1, 2 and 3 axes, with mesh and switched axes mixed in.
std::vector<torus> shapes_for(int p) {
  std::vector<torus> out;
  for (int nd = 1; nd <= 3; ++nd) {
    const auto dims = factorize(p, nd);
    std::vector<axis> axes;
    for (int i = 0; i < nd; ++i) {
      axis a;
      a.extent = dims[static_cast<std::size_t>(i)];
      a.wrap = i != 1;
      a.switched = i == 2;
      axes.push_back(a);
    }
    out.emplace_back(axes);
  }
  return out;
}

// A random layout, the same on every rank (fixed seed).
mapping shuffled(const torus& t, unsigned seed) {
  std::vector<std::int64_t> nodes(static_cast<std::size_t>(t.size()));
  std::iota(nodes.begin(), nodes.end(), 0);
  std::shuffle(nodes.begin(), nodes.end(), std::mt19937(seed));
  std::vector<std::vector<int>> c;
  for (auto n : nodes) c.push_back(t.coords(n));
  return mapping(t, c);
}

void check_cart(const cart& c) {
  const torus& t = c.shape();
  const int p = toru::test::nranks();
  EXPECT_EQ(toru::test::nranks(c.comm()), p);
  EXPECT_EQ(c.rank(), toru::test::rank(c.comm()));
  const auto mine = to_vector(c.coords());
  EXPECT_EQ(gather_coords(c.comm(), c.coords()), [&] {
    std::vector<std::vector<int>> want;
    for (int r = 0; r < p; ++r) want.push_back(to_vector(c.layout().coords(r)));
    return want;
  }());
  for (int a = 0; a < t.ndims(); ++a) {
    const auto ua = static_cast<std::size_t>(a);
    // Line: ranks differ only along a, ordered by that coordinate.
    const auto line = gather_coords(c.line(a), c.coords());
    ASSERT_EQ(static_cast<int>(line.size()), t[a].extent) << "axis " << a;
    EXPECT_EQ(toru::test::rank(c.line(a)), mine[ua]);
    for (int k = 0; k < t[a].extent; ++k) {
      auto want = mine;
      want[ua] = k;
      EXPECT_EQ(line[static_cast<std::size_t>(k)], want) << "line " << a << " member " << k;
    }
    // Plane: ranks sharing coordinate a, ordered by node index of the other coordinates.
    const auto plane = gather_coords(c.plane(a), c.coords());
    ASSERT_EQ(static_cast<std::int64_t>(plane.size()), t.size() / t[a].extent);
    std::vector<int> others;
    for (int i = 0; i < t.ndims(); ++i)
      if (i != a) others.push_back(i);
    for (std::size_t k = 0; k < plane.size(); ++k) {
      EXPECT_EQ(plane[k][ua], mine[ua]);
      if (others.empty()) continue;  // a 1-axis torus: the plane is this rank alone
      std::vector<int> rc;
      for (int i : others) rc.push_back(plane[k][static_cast<std::size_t>(i)]);
      EXPECT_EQ(t.sub(others).node(rc), static_cast<std::int64_t>(k));
    }
  }
  // A general sub-torus: the last two axes in reverse order.
  if (t.ndims() >= 2) {
    const std::vector<int> axes{t.ndims() - 1, t.ndims() - 2};
    const unique_comm sub = c.sub(axes);
    const auto members = gather_coords(sub.get(), c.coords());
    const torus st = t.sub(axes);
    ASSERT_EQ(static_cast<std::int64_t>(members.size()), st.size());
    for (std::size_t k = 0; k < members.size(); ++k) {
      const std::vector<int> sc{members[k][static_cast<std::size_t>(axes[0])],
                                members[k][static_cast<std::size_t>(axes[1])]};
      EXPECT_EQ(st.node(sc), static_cast<std::int64_t>(k));
      for (int i = 0; i < t.ndims() - 2; ++i)
        EXPECT_EQ(members[k][static_cast<std::size_t>(i)], mine[static_cast<std::size_t>(i)]);
    }
  }
}

}  // namespace

TEST(cart, lines_and_planes_for_identity_order_and_random_layouts) {
  const int p = toru::test::nranks();
  for (const auto& t : shapes_for(p)) {
    SCOPED_TRACE(t.to_string());
    check_cart(cart(MPI_COMM_WORLD, mapping::identity(t)));
    std::string reversed;
    for (int i = t.ndims() - 1; i >= 0; --i) reversed += t[i].name;
    const auto m = make_mapping(MPI_COMM_WORLD, t, reversed);
    const cart c(MPI_COMM_WORLD, m);
    EXPECT_EQ(c.layout(), mapping::from_order(t, reversed));
    EXPECT_EQ(toru::test::rank(c.comm()), toru::test::rank());  // ranks kept
    check_cart(c);
    check_cart(cart(MPI_COMM_WORLD, shuffled(t, 42)));
  }
}

TEST(cart, mpi_cart_create_path) {
  const int p = toru::test::nranks();
  for (const auto& t : shapes_for(p)) {
    SCOPED_TRACE(t.to_string());
    const cart plain = cart::create(MPI_COMM_WORLD, t, false);
    EXPECT_TRUE(plain.layout().is_identity());  // MPI's row-major order is toru's axis-0-fastest
    int topo = MPI_UNDEFINED;
    MPI_Topo_test(plain.comm(), &topo);
    EXPECT_EQ(topo, MPI_CART);
    check_cart(plain);
    check_cart(cart::create(MPI_COMM_WORLD, t, true));
  }
}

TEST(cart, derived_layout_is_node_aware_and_agreed) {
  const int p = toru::test::nranks();
  const mapping m = derive_mapping(MPI_COMM_WORLD);
  EXPECT_EQ(m.nranks(), p);
  const torus& t = m.shape();
  ASSERT_EQ(t.ndims(), 2);  // the test job runs on one node: T = P ranks, N = 1 node
  EXPECT_EQ(t[0].name, "T");
  EXPECT_EQ(t[1].name, "N");
  EXPECT_TRUE(t[0].switched);
  EXPECT_EQ(t[0].extent * t[1].extent, p);
  // The same layout on every rank.
  const auto all = gather_coords(MPI_COMM_WORLD, m.coords(toru::test::rank()));
  for (int r = 0; r < p; ++r) EXPECT_EQ(all[static_cast<std::size_t>(r)], to_vector(m.coords(r)));
  check_cart(cart(MPI_COMM_WORLD, m));
}

TEST(cart, size_mismatch_fails_on_every_rank) {
  const int p = toru::test::nranks();
  const torus wrong = torus::parse(std::to_string(p + 1) + "x1");
  TORU_EXPECT_ERROR(make_mapping(MPI_COMM_WORLD, wrong, ""),
                    "expected the product of extents to equal the " + std::to_string(p),
                    "got " + std::to_string(p + 1) + " nodes");
  TORU_EXPECT_ERROR(cart::create(MPI_COMM_WORLD, wrong), "got " + std::to_string(p + 1) + " nodes");
  TORU_EXPECT_ERROR(cart(MPI_COMM_WORLD, mapping::identity(wrong)), "got " + std::to_string(p + 1) + " nodes");
  TORU_EXPECT_ERROR(make_mapping(MPI_COMM_WORLD, torus::parse(std::to_string(p)), "XY"), "unknown axis 'Y'");
  // Still usable afterwards: nobody is stuck in a collective.
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST(cart, different_mappings_on_different_ranks_fail_everywhere) {
  const int p = toru::test::nranks();
  if (p < 2) GTEST_SKIP() << "needs two ranks to disagree";
  const torus t = torus::parse(std::to_string(p));
  // Rank 1 passes a reversed layout, the others the identity.
  std::vector<std::vector<int>> reversed;
  for (int r = p - 1; r >= 0; --r) reversed.push_back({r});
  const mapping m = toru::test::rank() == 1 ? mapping(t, reversed) : mapping::identity(t);
  try {
    cart c(MPI_COMM_WORLD, m);
    ADD_FAILURE() << "expected a mismatch error";
  } catch (const toru::error& e) {
    EXPECT_EQ(e.code(), toru::errc::mismatch);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST(cart, bad_map_file_fails_on_every_rank) {
  const int p = toru::test::nranks();
  const torus t = torus::parse(std::to_string(p));
  const std::string path = testing::TempDir() + "toru_cart_map_" + std::to_string(p) + ".txt";
  if (toru::test::rank() == 0) {
    std::ofstream out(path);
    for (int r = 0; r < p; ++r) out << (r == p - 1 && p > 1 ? 0 : r) << "\n";  // last rank repeats node 0
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (p > 1) {
    TORU_EXPECT_ERROR(load_mapping(MPI_COMM_WORLD, t, path), "repeats (0)");
  } else {
    EXPECT_TRUE(load_mapping(MPI_COMM_WORLD, t, path).is_identity());
  }
  TORU_EXPECT_ERROR(load_mapping(MPI_COMM_WORLD, t, path + ".missing"), ".missing");
  MPI_Barrier(MPI_COMM_WORLD);
  if (toru::test::rank() == 0) std::remove(path.c_str());
}
