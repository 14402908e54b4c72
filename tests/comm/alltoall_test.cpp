// SPDX-License-Identifier: BSD-3-Clause
// Every algorithm against MPI_Alltoall(v) on random data, at every rank count the test is run with.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "mpi_test.hpp"
#include "toru/comm/alltoall.hpp"
#include "toru/comm/alltoall_plan.hpp"
#include "toru/comm/communicator.hpp"
#include "toru/core/error.hpp"

namespace {

using toru::comm::alltoall_algorithm;
using toru::comm::alltoall_options;
using toru::comm::alltoall_plan;
using toru::comm::alltoallv_plan;
using toru::comm::communicator;
using elem = long long;

// Torus shapes for P ranks: one whose plane and line are both non-trivial where P allows it, so the
// indirect algorithm really forwards; the rest of the rank counts get a ring.
std::string torus_for(int P) {
  switch (P) {
    case 4:
      return "2x2";
    case 6:
      return "3x2";  // longest axis 0 (extent 3): Q = 2, Z = 3
    case 8:
      return "2x4";  // longest axis 1: Q = 2, Z = 4
    default:
      return std::to_string(P);
  }
}

// Communicators are collective to build; share them between tests, and free them before
// MPI_Finalize (a gtest environment's TearDown runs inside RUN_ALL_TESTS).
std::map<std::pair<std::string, int>, std::unique_ptr<communicator>> cache;
struct free_communicators : testing::Environment {
  void TearDown() override { cache.clear(); }
};
[[maybe_unused]] const auto* const environment = testing::AddGlobalTestEnvironment(new free_communicators);

const communicator& comm_for(const std::string& torus, int threads) {
  auto& c = cache[{torus, threads}];
  if (!c)
    c = std::make_unique<communicator>(MPI_COMM_WORLD,
                                       toru::comm::communicator_options{.torus = torus, .threads = threads});
  return *c;
}

std::vector<elem> random_data(std::size_t n, unsigned salt) {
  std::mt19937_64 gen(1234567u + 7919u * static_cast<unsigned>(toru::test::rank()) + salt);
  std::vector<elem> v(n);
  for (auto& e : v) e = static_cast<elem>(gen());
  return v;
}

std::vector<elem> reference(const std::vector<elem>& in, std::size_t count) {
  std::vector<elem> out(in.size());
  MPI_Alltoall(in.data(), static_cast<int>(count), MPI_LONG_LONG, out.data(), static_cast<int>(count), MPI_LONG_LONG,
               MPI_COMM_WORLD);
  return out;
}

struct case_t {
  alltoall_algorithm algorithm;
  int chunks;
  int threads;
};

class alltoall_all : public testing::TestWithParam<case_t> {};

TEST_P(alltoall_all, matches_mpi_alltoall_out_of_place_and_in_place) {
  const auto [algorithm, chunks, threads] = GetParam();
  const int P = toru::test::nranks();
  const auto& comm = comm_for(torus_for(P), threads);
  for (std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{13}, std::size_t{1031}}) {
    SCOPED_TRACE("count " + std::to_string(count));
    alltoall_plan plan(comm, count, MPI_LONG_LONG, {.algorithm = algorithm, .chunks = chunks});
    EXPECT_EQ(plan.algorithm(), algorithm);
    const auto in = random_data(count * static_cast<std::size_t>(P), static_cast<unsigned>(count));
    const auto want = reference(in, count);
    std::vector<elem> out(in.size(), -1);
    plan.execute(in.data(), out.data());
    EXPECT_EQ(out, want);
    // Repeated execution of one plan, with a caller workspace.
    std::vector<std::byte> ws(plan.workspace_size());
    std::fill(out.begin(), out.end(), -1);
    plan.execute(in.data(), out.data(), ws.data());
    EXPECT_EQ(out, want);
    // In place.
    auto inout = in;
    plan.execute(inout.data(), inout.data());
    EXPECT_EQ(inout, want);
  }
}

TEST_P(alltoall_all, chunk_hook_sees_every_chunk_once_in_order_with_its_data) {
  const auto [algorithm, chunks, threads] = GetParam();
  const int P = toru::test::nranks();
  const auto& comm = comm_for(torus_for(P), threads);
  const std::size_t count = 37;
  const auto in = random_data(count * static_cast<std::size_t>(P), 99);
  const auto want = reference(in, count);
  std::vector<elem> out(in.size(), -1);
  std::vector<int> seen;
  bool data_ready = true;
  alltoall_options opts{.algorithm = algorithm, .chunks = chunks};
  opts.on_chunk = [&](const toru::comm::chunk_info& ci) {
    seen.push_back(ci.chunk);
    // Chunk c of every source's block must be in place when the hook runs.
    const std::size_t lo = count * static_cast<std::size_t>(ci.chunk) / static_cast<std::size_t>(ci.nchunks);
    const std::size_t hi = count * static_cast<std::size_t>(ci.chunk + 1) / static_cast<std::size_t>(ci.nchunks);
    for (int s = 0; s < P; ++s)
      for (std::size_t i = lo; i < hi; ++i) {
        const std::size_t k = static_cast<std::size_t>(s) * count + i;
        data_ready = data_ready && out[k] == want[k];
      }
  };
  alltoall_plan plan(comm, count, MPI_LONG_LONG, opts);
  plan.execute(in.data(), out.data());
  // The plan must honour the requested chunking where the algorithm pipelines (direct, indirect);
  // the others run as one chunk. Checked independently of plan.chunks(), which the list below uses.
  const bool chunked = algorithm == alltoall_algorithm::direct || algorithm == alltoall_algorithm::indirect;
  EXPECT_EQ(plan.chunks(), chunked ? chunks : 1);
  std::vector<int> expected(static_cast<std::size_t>(plan.chunks()));
  for (int c = 0; c < plan.chunks(); ++c) expected[static_cast<std::size_t>(c)] = c;
  EXPECT_EQ(seen, expected);
  EXPECT_TRUE(data_ready);
  EXPECT_EQ(out, want);
}

TEST_P(alltoall_all, v_variant_matches_mpi_alltoallv_with_zero_counts_and_gaps) {
  const auto [algorithm, chunks, threads] = GetParam();
  if (algorithm == alltoall_algorithm::bruck) GTEST_SKIP() << "bruck needs equal blocks";
  const int P = toru::test::nranks(), me = toru::test::rank();
  const auto& comm = comm_for(torus_for(P), threads);
  // counts[i][j] from rank i to rank j: the same pseudo-random matrix on every rank, about a third zeros.
  std::mt19937 gen(4242);
  std::vector<int> matrix(static_cast<std::size_t>(P) * P);
  for (auto& c : matrix) c = gen() % 3 == 0 ? 0 : static_cast<int>(gen() % 29);
  std::vector<int> sc(P), sd(P), rc(P), rd(P);
  int so = 0, ro = 0;
  for (int j = 0; j < P; ++j) {
    sc[j] = matrix[static_cast<std::size_t>(me) * P + j];
    rc[j] = matrix[static_cast<std::size_t>(j) * P + me];
    sd[j] = so, so += sc[j] + 2;  // gaps between blocks
    rd[j] = ro, ro += rc[j] + 1;
  }
  const auto in = random_data(static_cast<std::size_t>(so), 5);
  std::vector<elem> want(static_cast<std::size_t>(ro), -7), out(want);
  MPI_Alltoallv(in.data(), sc.data(), sd.data(), MPI_LONG_LONG, want.data(), rc.data(), rd.data(), MPI_LONG_LONG,
                MPI_COMM_WORLD);
  alltoallv_plan plan(comm, sc, sd, rc, rd, MPI_LONG_LONG, {.algorithm = algorithm, .chunks = chunks});
  plan.execute(in.data(), out.data());
  EXPECT_EQ(out, want);
  plan.execute(in.data(), out.data());
  EXPECT_EQ(out, want);
  // In place needs identical send and receive layouts: a symmetric matrix.
  for (int j = 0; j < P; ++j) rc[j] = sc[j] = matrix[static_cast<std::size_t>(std::min(me, j)) * P + std::max(me, j)];
  so = 0;
  for (int j = 0; j < P; ++j) sd[j] = so, so += sc[j] + 1;
  auto inout = random_data(static_cast<std::size_t>(so), 6);
  std::vector<elem> want2(inout.size(), 0);
  MPI_Alltoallv(inout.data(), sc.data(), sd.data(), MPI_LONG_LONG, want2.data(), sc.data(), sd.data(), MPI_LONG_LONG,
                MPI_COMM_WORLD);
  for (std::size_t k = 0; k < inout.size(); ++k) {
    bool covered = false;
    for (int j = 0; j < P; ++j) covered = covered || (int(k) >= sd[j] && int(k) < sd[j] + sc[j]);
    if (!covered) want2[k] = inout[k];  // gaps keep their content
  }
  alltoallv_plan in_place(comm, sc, sd, sc, sd, MPI_LONG_LONG, {.algorithm = algorithm, .chunks = chunks});
  in_place.execute(inout.data(), inout.data());
  EXPECT_EQ(inout, want2);
}

std::string name_of(const testing::TestParamInfo<case_t>& info) {
  return std::string(toru::comm::to_string(info.param.algorithm)) + "_c" + std::to_string(info.param.chunks) + "_t" +
         std::to_string(info.param.threads);
}

INSTANTIATE_TEST_SUITE_P(
    algorithms, alltoall_all,
    testing::Values(case_t{alltoall_algorithm::direct, 1, 1}, case_t{alltoall_algorithm::direct, 3, 1},
                    case_t{alltoall_algorithm::pairwise, 1, 1}, case_t{alltoall_algorithm::bruck, 1, 1},
                    case_t{alltoall_algorithm::indirect, 1, 1}, case_t{alltoall_algorithm::indirect, 4, 1},
                    case_t{alltoall_algorithm::indirect, 4, 0}),
    name_of);

// More than two axes, and the node hierarchy (ranks per node x nodes, switched axes): the indirect
// algorithm must still deliver every block, plane and line being whatever the torus makes them.
// Rank 0 moves nothing and passes two null pointers (reads as in == out): it must not turn into an
// in-place exchange on that rank alone, which hung Open MPI's alltoallv on the others.
TEST(alltoall, v_rank_with_nothing_to_move_may_pass_nulls) {
  const int P = toru::test::nranks(), me = toru::test::rank();
  if (P < 3) GTEST_SKIP() << "needs two ranks that exchange and one that does not";
  toru::comm::communicator comm(MPI_COMM_WORLD);
  std::vector<int> sc(P, me == 0 ? 0 : 1), sd(P);
  sc[0] = 0;
  sc[me] = 0;
  for (int j = 1; j < P; ++j) sd[j] = sd[j - 1] + sc[j - 1];
  toru::comm::alltoallv_plan plan(comm, sc, sd, sc, sd, MPI_INT);
  std::vector<int> in(P, me), out(P, -1), want(P, -1);
  plan.execute(me == 0 ? nullptr : in.data(), me == 0 ? nullptr : out.data());
  MPI_Alltoallv(in.data(), sc.data(), sd.data(), MPI_INT, want.data(), sc.data(), sd.data(), MPI_INT, MPI_COMM_WORLD);
  if (me != 0) {
    EXPECT_EQ(out, want);
  }
}

TEST(alltoall, indirect_on_three_axes_and_on_a_node_hierarchy) {
  const int P = toru::test::nranks();
  std::vector<std::string> shapes;
  if (P == 8) shapes = {"2x2x2", "X=2x2x2[bw=100MB/s]", "T=4[switch,bw=5GB/s]xN=2[switch,bw=1GB/s]"};
  if (P == 6) shapes = {"T=3[switch,bw=5GB/s]xN=2[switch,bw=500MB/s]", "1x2x3"};
  if (P == 4) shapes = {"T=2[switch]xN=2[switch,bw=100MB/s]"};
  if (shapes.empty()) GTEST_SKIP() << "shapes for 4, 6 and 8 ranks";
  for (const auto& shape : shapes) {
    SCOPED_TRACE(shape);
    communicator comm(MPI_COMM_WORLD, {.torus = shape});
    EXPECT_EQ(toru::test::nranks(comm.plane()) * toru::test::nranks(comm.line()), P);
    for (int chunks : {1, 3}) {
      alltoall_plan plan(comm, 29, MPI_LONG_LONG, {.algorithm = alltoall_algorithm::indirect, .chunks = chunks});
      const auto in = random_data(29 * static_cast<std::size_t>(P), 11);
      std::vector<elem> out(in.size());
      plan.execute(in.data(), out.data());
      EXPECT_EQ(out, reference(in, 29));
    }
  }
}

TEST(alltoall, automatic_without_a_torus_is_direct) {
  if (const char* env = std::getenv("TORU_TORUS"); env && *env)
    GTEST_SKIP() << "TORU_TORUS=" << env << " describes the world communicator (tests/comm/torus_test.cpp)";
  communicator comm(MPI_COMM_WORLD);
  alltoall_plan plan(comm, 100, MPI_DOUBLE);
  EXPECT_EQ(plan.algorithm(), alltoall_algorithm::direct);
}

TEST(alltoall, environment_forces_the_algorithm) {
  const auto& comm = comm_for(torus_for(toru::test::nranks()), 1);
  setenv("TORU_ALLTOALL_ALGORITHM", "pairwise", 1);
  alltoall_plan plan(comm, 5, MPI_INT);
  unsetenv("TORU_ALLTOALL_ALGORITHM");
  EXPECT_EQ(plan.algorithm(), alltoall_algorithm::pairwise);
}

TEST(alltoall, two_plans_alive_at_once_on_different_communicators) {
  const int P = toru::test::nranks();
  const auto& a = comm_for(torus_for(P), 1);
  communicator b(MPI_COMM_WORLD, {.threads = 0});
  alltoall_plan p1(a, 11, MPI_LONG_LONG, {.algorithm = alltoall_algorithm::indirect, .chunks = 2});
  alltoall_plan p2(b, 3, MPI_LONG_LONG, {.algorithm = alltoall_algorithm::bruck});
  const auto in1 = random_data(11 * static_cast<std::size_t>(P), 1),
             in2 = random_data(3 * static_cast<std::size_t>(P), 2);
  std::vector<elem> o1(in1.size()), o2(in2.size());
  for (int rep = 0; rep < 3; ++rep) {
    p1.execute(in1.data(), o1.data());
    p2.execute(in2.data(), o2.data());
  }
  EXPECT_EQ(o1, reference(in1, 11));
  EXPECT_EQ(o2, reference(in2, 3));
}

TEST(alltoall, non_contiguous_datatype_with_direct_and_pairwise) {
  const int P = toru::test::nranks();
  // Every other int: size 4, extent 8 after resizing a 1-int type to 2 ints.
  MPI_Datatype strided = MPI_DATATYPE_NULL;
  MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &strided);
  MPI_Type_commit(&strided);
  const auto& comm = comm_for(torus_for(P), 1);
  const int count = 5;
  std::vector<int> in(2 * count * P), want(in.size(), -1);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<int>(i) + 1000 * toru::test::rank();
  MPI_Alltoall(in.data(), count, strided, want.data(), count, strided, MPI_COMM_WORLD);
  for (auto algorithm : {alltoall_algorithm::direct, alltoall_algorithm::pairwise, alltoall_algorithm::automatic}) {
    alltoall_plan plan(comm, count, strided, {.algorithm = algorithm});
    std::vector<int> out(in.size(), -1);
    plan.execute(in.data(), out.data());
    EXPECT_EQ(out, want);
  }
  EXPECT_THROW(alltoall_plan(comm, count, strided, {.algorithm = alltoall_algorithm::bruck}), toru::error);
  EXPECT_THROW(alltoall_plan(comm, count, strided, {.algorithm = alltoall_algorithm::indirect}), toru::error);
  MPI_Type_free(&strided);
}

TEST(alltoall, drop_in_calls_match_mpi) {
  const int P = toru::test::nranks();
  const int count = 9;
  const auto in = random_data(static_cast<std::size_t>(count) * P, 17);
  const auto want = reference(in, count);
  std::vector<elem> out(in.size());
  EXPECT_EQ(toru::comm::alltoall(in.data(), count, MPI_LONG_LONG, out.data(), count, MPI_LONG_LONG, MPI_COMM_WORLD),
            MPI_SUCCESS);
  EXPECT_EQ(out, want);
  auto inout = in;
  toru::comm::alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, inout.data(), count, MPI_LONG_LONG, MPI_COMM_WORLD);
  EXPECT_EQ(inout, want);
  // Different types of the same size: 8 bytes as 2 ints.
  std::fill(out.begin(), out.end(), 0);
  toru::comm::alltoall(in.data(), 2 * count, MPI_INT, out.data(), count, MPI_LONG_LONG, MPI_COMM_WORLD);
  EXPECT_EQ(out, want);
  std::vector<int> c(P, count), d(P);
  for (int j = 0; j < P; ++j) d[j] = j * count;
  std::fill(out.begin(), out.end(), 0);
  toru::comm::alltoallv(in.data(), c.data(), d.data(), MPI_LONG_LONG, out.data(), c.data(), d.data(), MPI_LONG_LONG,
                        MPI_COMM_WORLD);
  EXPECT_EQ(out, want);
}

// ---- bad input: an error on every rank that should see it, never a hang ----

TEST(alltoall_errors, torus_that_does_not_match_the_rank_count) {
  const int P = toru::test::nranks();
  const std::string wrong = std::to_string(P + 1);
  try {
    communicator comm(MPI_COMM_WORLD, {.torus = wrong});
    ADD_FAILURE() << "no error for torus " << wrong << " on " << P << " ranks";
  } catch (const toru::error& e) {
    EXPECT_NE(std::string(e.what()).find(wrong), std::string::npos) << e.what();
  }
  EXPECT_THROW(communicator(MPI_COMM_WORLD, {.torus = "4x?"}), toru::error);
  EXPECT_THROW(communicator(MPI_COMM_WORLD, {.threads = 2}), toru::error);
  if (P > 1) {  // options that decide which collectives follow must agree
    EXPECT_THROW(communicator(MPI_COMM_WORLD, {.threads = toru::test::rank() == 0 ? 0 : 1}), toru::error);
  }
}

TEST(alltoall_errors, counts_differing_across_ranks) {
  const auto& comm = comm_for(torus_for(toru::test::nranks()), 1);
  if (toru::test::nranks() == 1) GTEST_SKIP() << "needs two ranks";
  const std::size_t count = toru::test::rank() == 0 ? 4 : 5;
  try {
    alltoall_plan plan(comm, count, MPI_INT);
    ADD_FAILURE() << "no error";
  } catch (const toru::error& e) {
    EXPECT_EQ(e.code(), toru::errc::mismatch);
  }
  // Same element count, different type sizes.
  try {
    alltoall_plan plan(comm, 4, toru::test::rank() == 0 ? MPI_INT : MPI_DOUBLE);
    ADD_FAILURE() << "no error";
  } catch (const toru::error& e) {
    EXPECT_EQ(e.code(), toru::errc::mismatch);
  }
}

TEST(alltoall_errors, v_counts_that_do_not_match_the_peer) {
  const int P = toru::test::nranks(), me = toru::test::rank();
  if (P == 1) GTEST_SKIP() << "needs two ranks";
  const auto& comm = comm_for(torus_for(P), 1);
  std::vector<int> c(P, 2), d(P), rc(P, 2);
  for (int j = 0; j < P; ++j) d[j] = 2 * j;
  if (me == 1) rc[0] = 3;  // rank 1 expects 3 from rank 0, which sends 2
  EXPECT_THROW(alltoallv_plan(comm, c, d, rc, d, MPI_INT), toru::error);
  std::vector<int> short_counts(static_cast<std::size_t>(P - 1), 1);
  EXPECT_THROW(
      alltoallv_plan(comm, me == 0 ? std::span<const int>(short_counts) : std::span<const int>(c), d, c, d, MPI_INT),
      toru::error);
  std::vector<int> negative = c;
  if (me == P - 1) negative[0] = -1;
  EXPECT_THROW(alltoallv_plan(comm, negative, d, c, d, MPI_INT), toru::error);
}

TEST(alltoall_errors, null_buffer_throws_on_its_rank_without_hanging_the_others) {
  const int P = toru::test::nranks(), me = toru::test::rank();
  const auto& comm = comm_for(torus_for(P), 1);
  for (auto algorithm : {alltoall_algorithm::direct, alltoall_algorithm::pairwise, alltoall_algorithm::bruck,
                         alltoall_algorithm::indirect}) {
    alltoall_plan plan(comm, 3, MPI_INT, {.algorithm = algorithm});
    std::vector<int> in(3 * static_cast<std::size_t>(P), 1), out(in.size());
    if (me == P - 1) {
      EXPECT_THROW(plan.execute(nullptr, out.data()), toru::error);
    } else {
      EXPECT_NO_THROW(plan.execute(in.data(), out.data()));
    }
  }
  // The drop-in call validates collectively: every rank throws.
  std::vector<int> in(4 * static_cast<std::size_t>(P), 1), out(in.size());
  EXPECT_THROW(toru::comm::alltoall(me == 0 ? nullptr : in.data(), 4, MPI_INT, out.data(), 4, MPI_INT, MPI_COMM_WORLD),
               toru::error);
  // sendcount * size(sendtype) != recvcount * size(recvtype) on one rank
  EXPECT_THROW(toru::comm::alltoall(in.data(), me == 0 ? 3 : 4, MPI_INT, out.data(), 4, MPI_INT, MPI_COMM_WORLD),
               toru::error);
  // counts equal locally but different across ranks
  if (P > 1) {
    EXPECT_THROW(
        toru::comm::alltoall(in.data(), me == 0 ? 3 : 4, MPI_INT, out.data(), me == 0 ? 3 : 4, MPI_INT, MPI_COMM_WORLD),
        toru::error);
  }
}

}  // namespace
