// SPDX-License-Identifier: BSD-3-Clause
// The overlapped pipeline on a described torus, against serial FFTW: the local FFTs follow the
// all-to-all's own chunks (strategy "overlap at the all-to-all's chunks"), which need not divide the
// FFT's rows evenly nor match anything the FFT planned. TORU_ALLTOALL_CHUNKS forces odd chunk counts
// (set equally on every rank before the plans are made); the pipelined indirect algorithm is forced
// so that chunks really arrive one by one, with and without its phase-B thread. TORU_FFT_OVERLAP=force
// makes the plans overlap at these small sizes, where the model rightly would not.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "fft_test_util.hpp"
#include "host_share.hpp"
#include "mpi_test.hpp"
#include "strategy.hpp"
#include "toru/comm/communicator.hpp"
#include "toru/fft/fft1d.hpp"
#include "toru/fft/fft3d.hpp"
#include "toru/topology/network_model.hpp"
#include "toru/topology/node.hpp"
#include "toru/topology/torus.hpp"

namespace {

using toru::comm::alltoall_algorithm;
using toru::test::cnoise;
using N3 = std::array<std::int64_t, 3>;

// A two-axis torus where the rank count allows one (a plane and a line), else a ring.
std::string torus_of(int P) { return P == 4 ? "2x2" : std::to_string(P); }

// Sets an environment variable for the scope (empty: unset).
class scoped_env {
 public:
  scoped_env(const char* name, const std::string& v) : name_(name) {
    if (v.empty())
      unsetenv(name);
    else
      setenv(name, v.c_str(), 1);
  }
  ~scoped_env() { unsetenv(name_); }
  scoped_env(const scoped_env&) = delete;
  scoped_env& operator=(const scoped_env&) = delete;

 private:
  const char* name_;
};

struct variant {
  std::string chunks;  // TORU_ALLTOALL_CHUNKS
  alltoall_algorithm algorithm;
  int threads;
};

const variant variants[] = {{"", alltoall_algorithm::automatic, 1},
                            {"7", alltoall_algorithm::indirect, 1},
                            {"3", alltoall_algorithm::indirect, 0},
                            {"13", alltoall_algorithm::indirect, 1}};

TEST(fft_torus_overlap, one_dimensional_plans_follow_the_all_to_all_chunks) {
  const int P = toru::test::nranks();
  const scoped_env force("TORU_FFT_OVERLAP", "force");
  // n1 x n2 = 9 x 35 and 25 x 28: rows split unevenly over 2-4 ranks and over the chunks.
  for (const std::int64_t n : {std::int64_t{9 * 35}, std::int64_t{700}}) {
    std::vector<std::complex<double>> x(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) x[static_cast<std::size_t>(i)] = cnoise(static_cast<std::uint64_t>(i), 11);
    const auto X = toru::test::serial_dft1(x, FFTW_FORWARD);
    for (const auto order : {toru::fft::order::natural, toru::fft::order::transposed})
      for (const variant& v : variants) {
        SCOPED_TRACE(::testing::Message()
                     << "n " << n << " chunks '" << v.chunks << "' algorithm " << toru::comm::to_string(v.algorithm)
                     << " threads " << v.threads << " order " << static_cast<int>(order));
        const scoped_env env("TORU_ALLTOALL_CHUNKS", v.chunks);
        toru::fft::fft1d<double> plan(
            MPI_COMM_WORLD, n,
            {.output = order, .algorithm = v.algorithm, .comm = {.torus = torus_of(P), .threads = v.threads}});
        EXPECT_NE(plan.strategy().find("overlap at the all-to-all's chunks"), std::string::npos) << plan.strategy();
        std::vector<std::complex<double>> a(plan.alloc_size()), b(plan.alloc_size());
        for (std::int64_t i = 0; i < plan.in_count(); ++i) a[i] = x[plan.in_start() + i];
        plan.forward(a.data(), b.data());
        if (order == toru::fft::order::natural) {
          toru::test::error_norm e;
          for (std::int64_t i = 0; i < plan.out_count(); ++i) e.add(b[i], X[plan.out_start() + i]);
          EXPECT_LT(e.rel(), toru::test::tolerance<double>(static_cast<double>(n)));
        }
        // The round trip checks the backward pipeline (and the transposed order's layout).
        plan.backward(b.data(), a.data(), toru::fft::scale::full);
        toru::test::error_norm r;
        for (std::int64_t i = 0; i < plan.in_count(); ++i) r.add(a[i], x[plan.in_start() + i]);
        EXPECT_LT(r.rel(), toru::test::tolerance<double>(static_cast<double>(n)));
      }
  }
}

TEST(fft_torus_overlap, three_dimensional_plans_follow_the_all_to_all_chunks) {
  const int P = toru::test::nranks();
  const scoped_env force("TORU_FFT_OVERLAP", "force");
  const N3 n{7, 10, 9};
  std::vector<std::complex<double>> input(static_cast<std::size_t>(n[0] * n[1] * n[2]));
  for (std::size_t i = 0; i < input.size(); ++i) input[i] = cnoise(i, 13);
  const auto ref = toru::test::serial_dft3(n, input, FFTW_FORWARD);
  const double N = static_cast<double>(n[0] * n[1] * n[2]);
  for (const auto decomp : {toru::fft::decomposition::slab, toru::fft::decomposition::pencil})
    for (const variant& v : variants) {
      if (decomp == toru::fft::decomposition::pencil && P % 2 != 0) continue;
      SCOPED_TRACE(::testing::Message() << toru::fft::to_string(decomp) << " chunks '" << v.chunks << "' algorithm "
                                        << toru::comm::to_string(v.algorithm) << " threads " << v.threads);
      const scoped_env env("TORU_ALLTOALL_CHUNKS", v.chunks);
      toru::fft::options3d o{
          .decomp = decomp, .algorithm = v.algorithm, .comm = {.torus = torus_of(P), .threads = v.threads}};
      if (decomp == toru::fft::decomposition::pencil) o.grid = {2, P / 2};
      toru::fft::fft3d<double> plan(MPI_COMM_WORLD, n, o);
      std::vector<std::complex<double>> a(plan.alloc_size()), b(plan.alloc_size());
      toru::test::for_each(plan.inbox(), [&](N3 g, std::int64_t i) { a[i] = input[toru::test::flat(n, g)]; });
      plan.forward(a.data(), b.data());
      toru::test::error_norm e;
      toru::test::for_each(plan.outbox(), [&](N3 g, std::int64_t i) { e.add(b[i], ref[toru::test::flat(n, g)]); });
      EXPECT_LT(e.rel(), toru::test::tolerance<double>(N)) << plan.strategy();
      EXPECT_NE(plan.strategy().find("overlap at the all-to-all's chunks"), std::string::npos) << plan.strategy();
      plan.backward(b.data(), a.data(), toru::fft::scale::full);
      toru::test::error_norm r;
      toru::test::for_each(plan.inbox(), [&](N3 g, std::int64_t i) { r.add(a[i], input[toru::test::flat(n, g)]); });
      EXPECT_LT(r.rel(), toru::test::tolerance<double>(N)) << plan.strategy();
    }
}

// Every rank of the test runs on this host: ranks per core is the rank count over the cores this
// process may use (at least 1), on every rank.
TEST(fft_torus_overlap, ranks_per_core_counts_the_ranks_on_one_host) {
  // Every rank of the test is on this host: the grouping by host must count all of them, and a
  // communicator of one rank counts one.
  const int pus = toru::topology::probe_node().pus;
  const double expected = std::max(1.0, static_cast<double>(toru::test::nranks()) / pus);
  EXPECT_DOUBLE_EQ(toru::fft::detail::ranks_per_core(MPI_COMM_WORLD), expected);
  EXPECT_DOUBLE_EQ(toru::fft::detail::ranks_per_core(MPI_COMM_SELF), std::max(1.0, 1.0 / pus));
}

// The exchange's wire times come from the torus given through the options (TORU_TORUS unset), per
// path: MPI_Alltoallw is MPI's linear schedule, comm's all-to-all its torus-aware choice. Each is a
// schedule on the torus, so none beats its bandwidth bound; at 16 KiB per pair (the emulated
// torus's 64^3 slab) the linear schedule is the slower one. Without a torus there is no wire time.
TEST(fft_torus_overlap, wire_times_come_from_the_torus_of_the_options) {
  const int P = toru::test::nranks();
  if (P < 2) GTEST_SKIP() << "needs two ranks";
  const scoped_env no_env("TORU_TORUS", "");
  const std::string spec = P == 4 ? "2[bw=20Mb/s]x2[bw=10Mb/s]" : std::to_string(P) + "[bw=10Mb/s]";
  const double bytes_per_rank = 16384.0 * P;
  const toru::comm::communicator on_torus(MPI_COMM_WORLD, {.torus = spec, .threads = 0});
  const auto w = toru::fft::detail::torus_wire_seconds(on_torus, bytes_per_rank, alltoall_algorithm::automatic);
  const double bound = toru::topology::alltoall_bound(toru::topology::torus::parse(spec), 16384.0);
  EXPECT_GE(w.alltoall, bound);
  EXPECT_GE(w.alltoallw, bound);
  if (P == 4) {
    EXPECT_GT(w.alltoallw, w.alltoall) << "linear against comm's choice on " << spec;
  }
  // A forced algorithm is the one costed: the direct schedule is not faster than comm's choice.
  const auto d = toru::fft::detail::torus_wire_seconds(on_torus, bytes_per_rank, alltoall_algorithm::direct);
  EXPECT_GE(d.alltoall, w.alltoall);
  const toru::comm::communicator plain(MPI_COMM_WORLD, {.threads = 0});
  const auto none = toru::fft::detail::torus_wire_seconds(plain, bytes_per_rank, alltoall_algorithm::automatic);
  EXPECT_LT(none.alltoall, 0);
  EXPECT_LT(none.alltoallw, 0);
}

// The strategy table costs the middle layout's MPI_Alltoallw at its own wire time: the 64^3 slab on
// the emulated 2x2x4 torus (256 KiB per rank, 2 exchanges, ranks on 16 "nodes" of one 2-core host)
// took the middle layout while both paths were costed at the torus bound; with MPI's linear
// schedule at 2.5 times comm's wire time, comm's all-to-all is the cheaper row.
TEST(fft_torus_overlap, the_middle_layout_is_costed_at_mpi_alltoallw_wire_time) {
  toru::fft::detail::plan_facts f;
  f.exchange_bytes = 262144;
  f.exchanges = 2;
  f.mid_exchanges = 2;
  f.fft_flops = 5.0 * 262144 * 18 / 16;
  f.torus_described = true;
  f.ranks_per_core = 8;
  f.mid_possible = true;
  f.wire_seconds = 0.116;   // ~T_min / 0.9 at 16 KiB per pair on 2x2x4 at 20/20/10 Mb/s
  f.mid_wire_seconds = -1;  // the old costing: MPI_Alltoallw at comm's wire time
  auto t = toru::fft::detail::strategy_table(f);
  int best = toru::fft::detail::cheapest(t);
  ASSERT_GE(best, 0);
  EXPECT_TRUE(t[static_cast<std::size_t>(best)].s.mid) << toru::fft::detail::describe_table(t);
  f.mid_wire_seconds = 2.5 * f.wire_seconds;
  t = toru::fft::detail::strategy_table(f);
  best = toru::fft::detail::cheapest(t);
  ASSERT_GE(best, 0);
  EXPECT_FALSE(t[static_cast<std::size_t>(best)].s.mid) << toru::fft::detail::describe_table(t);
  EXPECT_FALSE(t[static_cast<std::size_t>(best)].s.window) << toru::fft::detail::describe_table(t);
  // On one node the wire is not used at all: the choice there does not change.
  f.one_node = true;
  f.torus_described = false;
  const int local = toru::fft::detail::cheapest(toru::fft::detail::strategy_table(f));
  f.mid_wire_seconds = -1;
  EXPECT_EQ(toru::fft::detail::cheapest(toru::fft::detail::strategy_table(f)), local);
}

// ESTIMATE takes overlap only where the model puts it clearly ahead. The emulated 2x4x4 torus at
// 128^3 (1 MiB per rank, 32 ranks on 2 cores): the model saves about 4 % by overlapping, inside its
// error (runs measured overlap 12 % faster and 9 % slower), so the plan does not overlap; the plain
// minimum took overlap there. Across nodes with local FFTs comparable to the wire (a 2^24 1D FFT on
// 16 nodes at 1 GB/s) the saving is a fifth of the transform, and overlap stays the choice.
TEST(fft_torus_overlap, estimate_overlaps_only_where_the_model_puts_it_clearly_ahead) {
  namespace d = toru::fft::detail;
  d::plan_facts f;
  f.exchange_bytes = 1 << 20;
  f.exchanges = 2;
  f.fft_flops = 5.0 * (1 << 21) * 21 / 32;
  f.torus_described = true;
  f.ranks_per_core = 16;
  f.wire_seconds = 0.45;
  auto t = d::strategy_table(f);
  int overlap = -1, plain = -1;
  for (int i = 0; i < static_cast<int>(t.size()); ++i)
    if (t[static_cast<std::size_t>(i)].applicable) (t[static_cast<std::size_t>(i)].s.overlap ? overlap : plain) = i;
  ASSERT_GE(overlap, 0) << d::describe_table(t);
  ASSERT_GE(plain, 0) << d::describe_table(t);
  const double saving = 1 - t[static_cast<std::size_t>(overlap)].cost / t[static_cast<std::size_t>(plain)].cost;
  EXPECT_GT(saving, 0) << "the case must be one the plain minimum gives to overlap: " << d::describe_table(t);
  EXPECT_LT(saving, d::overlap_margin) << d::describe_table(t);
  EXPECT_EQ(d::cheapest(t), plain) << d::describe_table(t);

  d::plan_facts across;
  across.exchange_bytes = 16.0 * (1 << 20);
  across.exchanges = 3;
  across.fft_flops = 5.0 * (1 << 24) * 24 / 16;
  t = d::strategy_table(across);
  const int pick = d::cheapest(t);
  ASSERT_GE(pick, 0);
  EXPECT_TRUE(t[static_cast<std::size_t>(pick)].s.overlap) << d::describe_table(t);

  // With overlap forbidden or forced, the margin has nothing to choose between.
  f.overlap_allowed = false;
  t = d::strategy_table(f);
  ASSERT_GE(d::cheapest(t), 0);
  EXPECT_FALSE(t[static_cast<std::size_t>(d::cheapest(t))].s.overlap);
  f.overlap_allowed = true;
  f.overlap_forced = true;
  t = d::strategy_table(f);
  ASSERT_GE(d::cheapest(t), 0);
  EXPECT_TRUE(t[static_cast<std::size_t>(d::cheapest(t))].s.overlap);
}

}  // namespace
