// SPDX-License-Identifier: BSD-3-Clause
// The torus of a communicator: given through the API, or inherited. TORU_TORUS describes
// MPI_COMM_WORLD only; a sub-communicator gets the sub-torus its ranks occupy (a line of it), or the
// derived layout when they occupy none (a diagonal, one rank). Registered with TORU_TORUS set (2x2 on
// 4 ranks, 3x2 on 6) and without it; the expectations follow from the environment. Every exchange
// on every such communicator is checked against MPI_Alltoall(v) on the same communicator.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "mpi_test.hpp"
#include "toru/comm.h"
#include "toru/comm/alltoall.hpp"
#include "toru/comm/alltoall_plan.hpp"
#include "toru/comm/communicator.hpp"
#include "toru/topology/torus.hpp"

namespace {

using toru::comm::alltoall_algorithm;
using toru::comm::communicator;
using toru::topology::torus;

std::optional<torus> world_torus() {
  const char* env = std::getenv("TORU_TORUS");
  if (env == nullptr || *env == '\0') return std::nullopt;
  return torus::parse(env);
}

// A communicator of MPI_COMM_WORLD's ranks, freed at scope exit.
struct split_comm {
  MPI_Comm comm = MPI_COMM_NULL;
  split_comm(int color, int key) { MPI_Comm_split(MPI_COMM_WORLD, color, key, &comm); }
  ~split_comm() { MPI_Comm_free(&comm); }
};

// The line along axis `axis` of a 2-axis world torus through this rank (rank r on node r, axis 0 fastest).
int line_color(const torus& t, int axis) {
  const int me = toru::test::rank(), e0 = t[0].extent;
  return axis == 0 ? me / e0 : me % e0;
}

TEST(torus_env, world_gets_the_environment_torus) {
  const communicator c(MPI_COMM_WORLD, {.threads = 0});
  if (const auto t = world_torus()) {
    EXPECT_TRUE(c.torus_given());
    EXPECT_EQ(c.torus(), *t);
    EXPECT_TRUE(c.mapping().is_identity());
  } else {
    EXPECT_FALSE(c.torus_given());
  }
}

TEST(torus_env, a_line_of_the_world_torus_gets_that_line) {
  const auto t = world_torus();
  if (!t || t->ndims() != 2) GTEST_SKIP() << "needs TORU_TORUS with two axes";
  const int me = toru::test::rank();
  for (int axis : {0, 1}) {
    // Ranks ordered against their coordinate, so the mapping is not the identity.
    const split_comm line(line_color(*t, axis), -me);
    const communicator c(line.comm, {.threads = 0});
    EXPECT_TRUE(c.torus_given()) << "axis " << axis;
    ASSERT_EQ(c.torus().ndims(), 1);
    EXPECT_EQ(c.torus()[0], (*t)[axis]);
    const int coord = axis == 0 ? me % (*t)[0].extent : me / (*t)[0].extent;
    EXPECT_EQ(c.coords()[0], coord) << "axis " << axis;
  }
}

TEST(torus_env, ranks_that_form_no_sub_torus_get_the_derived_layout) {
  const auto t = world_torus();
  if (!t || t->ndims() != 2) GTEST_SKIP() << "needs TORU_TORUS with two axes";
  const int me = toru::test::rank(), e0 = (*t)[0].extent;
  // A diagonal: coordinates (x, y) with x - y equal mod e0; never a full line when both extents > 1.
  const int x = me % e0, y = me / e0;
  const split_comm diagonal(((x - y) % e0 + e0) % e0, me);
  const communicator c(diagonal.comm, {.threads = 0});
  EXPECT_FALSE(c.torus_given());
  const communicator self(MPI_COMM_SELF, {.threads = 0});
  EXPECT_FALSE(self.torus_given());
  EXPECT_EQ(self.size(), 1);
}

TEST(torus_api, a_torus_given_on_a_sub_communicator_is_used) {
  const int P = toru::test::nranks(), me = toru::test::rank();
  if (P < 2) GTEST_SKIP() << "needs two ranks";
  const int half = P / 2;
  const split_comm part(me < half ? 0 : 1, me);
  const int n = me < half ? half : P - half;
  const std::string spec = "1x" + std::to_string(n);
  const communicator c(part.comm, {.torus = spec, .threads = 0});
  EXPECT_TRUE(c.torus_given());
  EXPECT_EQ(c.torus(), torus::parse(spec));
}

TEST(torus_api, children_of_a_parent_with_an_api_torus_get_their_sub_torus) {
  if (toru::test::nranks() != 4) GTEST_SKIP() << "a 2x2 parent: 4 ranks";
  const communicator parent(MPI_COMM_WORLD, {.torus = "2[bw=1GB/s]x2[bw=100MB/s]", .threads = 0});
  const int me = toru::test::rank();
  const split_comm column(me % 2, me);  // ranks {0, 2} and {1, 3}: lines along axis 1
  const communicator c(column.comm, parent, {.threads = 0});
  EXPECT_TRUE(c.torus_given());
  ASSERT_EQ(c.torus().ndims(), 1);
  EXPECT_EQ(c.torus()[0], parent.torus()[1]);
  // The environment is not consulted for a child: without a described parent, derived.
  const communicator plain(MPI_COMM_WORLD, {.torus = "4", .threads = 0});
  const split_comm pair(me / 2, me);  // half of a 4-ring: no sub-torus
  const communicator d(pair.comm, plain, {.threads = 0});
  EXPECT_FALSE(d.torus_given());
}

std::vector<long long> random_data(std::size_t n, unsigned salt) {
  std::mt19937_64 gen(99991u * static_cast<unsigned>(toru::test::rank()) + salt);
  std::vector<long long> v(n);
  for (auto& e : v) e = static_cast<long long>(gen());
  return v;
}

// Drop-in calls and plans of every algorithm on `comm`, against MPI on the same communicator.
void check_exchanges(MPI_Comm comm, const std::string& label) {
  SCOPED_TRACE(label);
  const int P = toru::test::nranks(comm);
  for (int count : {1, 5, 300}) {
    const auto n = static_cast<std::size_t>(count) * static_cast<std::size_t>(P);
    const auto in = random_data(n, static_cast<unsigned>(count));
    std::vector<long long> want(n), out(n);
    MPI_Alltoall(in.data(), count, MPI_LONG_LONG, want.data(), count, MPI_LONG_LONG, comm);
    ASSERT_NO_THROW(toru::comm::alltoall(in.data(), count, MPI_LONG_LONG, out.data(), count, MPI_LONG_LONG, comm));
    EXPECT_EQ(out, want) << "drop-in alltoall, count " << count;
    std::vector<int> c(static_cast<std::size_t>(P), count), d(static_cast<std::size_t>(P));
    for (int j = 0; j < P; ++j) d[static_cast<std::size_t>(j)] = j * count;
    std::fill(out.begin(), out.end(), 0);
    ASSERT_NO_THROW(toru::comm::alltoallv(in.data(), c.data(), d.data(), MPI_LONG_LONG, out.data(), c.data(), d.data(),
                                          MPI_LONG_LONG, comm));
    EXPECT_EQ(out, want) << "drop-in alltoallv, count " << count;
    const communicator tc(comm, {.threads = 0});
    for (auto a : {alltoall_algorithm::automatic, alltoall_algorithm::direct, alltoall_algorithm::pairwise,
                   alltoall_algorithm::bruck, alltoall_algorithm::indirect}) {
      std::fill(out.begin(), out.end(), 0);
      const toru::comm::alltoall_plan plan(tc, static_cast<std::size_t>(count), MPI_LONG_LONG, {.algorithm = a});
      plan.execute(in.data(), out.data());
      EXPECT_EQ(out, want) << toru::comm::to_string(a) << ", count " << count;
    }
  }
}

TEST(torus_api, c_plans_take_the_torus_and_order_from_their_options) {
  const int P = toru::test::nranks();
  const std::string spec = P == 4 ? "2x2" : P == 6 ? "3x2" : "1x" + std::to_string(P);
  const int count = 7;
  const auto in = random_data(static_cast<std::size_t>(count * P), 5);
  std::vector<long long> want(in.size()), out(in.size());
  MPI_Alltoall(in.data(), count, MPI_LONG_LONG, want.data(), count, MPI_LONG_LONG, MPI_COMM_WORLD);
  for (const char* order : {"01", "10"}) {
    SCOPED_TRACE(spec + " order " + order);
    toru_alltoall_options o = toru_alltoall_options_default();
    o.algorithm = TORU_ALLTOALL_INDIRECT;
    o.torus = spec.c_str();
    o.order = order;
    toru_alltoall_plan plan = nullptr;
    ASSERT_EQ(toru_alltoall_plan_create(MPI_COMM_WORLD, count, MPI_LONG_LONG, &o, &plan), TORU_SUCCESS)
        << toru_last_error();
    std::fill(out.begin(), out.end(), 0);
    EXPECT_EQ(toru_alltoall_plan_execute(plan, in.data(), out.data()), TORU_SUCCESS) << toru_last_error();
    EXPECT_EQ(out, want);
    toru_alltoall_plan_destroy(plan);
  }
  // The order is really read: one naming no axis is refused on every rank.
  toru_alltoall_options bad = toru_alltoall_options_default();
  bad.torus = spec.c_str();
  bad.order = "Q";
  toru_alltoall_plan plan = nullptr;
  EXPECT_EQ(toru_alltoall_plan_create(MPI_COMM_WORLD, count, MPI_LONG_LONG, &bad, &plan), TORU_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(plan, nullptr);
}

TEST(torus_env, exchanges_on_world_split_and_self_communicators_match_mpi) {
  const int P = toru::test::nranks(), me = toru::test::rank();
  check_exchanges(MPI_COMM_WORLD, "world");
  check_exchanges(MPI_COMM_SELF, "self");
  {
    const split_comm reversed(0, P - 1 - me);
    check_exchanges(reversed.comm, "world, reversed rank order");
  }
  {
    const split_comm halves(me < P / 2 ? 0 : 1, me);
    check_exchanges(halves.comm, "halves");
  }
  {
    const split_comm odd_even(me % 2, me);
    check_exchanges(odd_even.comm, "odd/even");
  }
  if (const auto t = world_torus(); t && t->ndims() == 2)
    for (int axis : {0, 1}) {
      const split_comm line(line_color(*t, axis), me);
      check_exchanges(line.comm, "line along axis " + std::to_string(axis));
    }
}

}  // namespace
