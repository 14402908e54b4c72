// SPDX-License-Identifier: BSD-3-Clause
// The schedules in the topology simulator: the indirect pipeline reaches the bound on asymmetric
// tori, and the chunk model behaves.
#include <gtest/gtest.h>

#include <algorithm>

#include "toru/comm/alltoall_simulate.hpp"
#include "toru/core/error.hpp"
#include "toru/topology/credit_model.hpp"
#include "toru/topology/fitted_model.hpp"
#include "toru/topology/network_model.hpp"
#include "toru/topology/packet_schedules.hpp"
#include "toru/topology/packet_sim.hpp"
#include "toru/topology/torus.hpp"

namespace {

using toru::comm::alltoall_algorithm;
using toru::comm::simulate_alltoall;
using toru::topology::torus;

TEST(simulate, indirect_reaches_95_percent_of_the_bound_on_asymmetric_tori) {
  for (const char* spec : {"8x8x16", "16x16x32", "32x32x64"}) {
    const auto t = torus::parse(spec);
    const auto r = simulate_alltoall(t, alltoall_algorithm::indirect, 64 * 1024);
    EXPECT_GE(r.percent_of_bound, 95.0) << spec << ": " << r.percent_of_bound << "% with " << r.chunks << " chunks";
    EXPECT_LE(r.percent_of_bound, 100.0 + 1e-9) << spec;
    EXPECT_GT(r.chunks, 1) << spec;
  }
}

// The decision keeps every phase message at or under 16 KiB on the slow emulated tori (Open MPI's
// TCP eager regime): the plane's Q blocks of m / C bytes in phase B. On 2x4x4 at 1 MiB per pair that
// is 512 chunks (the testbed: 256 chunks, 32 KiB messages, 66 % of T_min; 512, 90 %).
TEST(simulate, chunks_keep_phase_messages_eager_on_slow_tori) {
  const toru::comm::simulation_options fitted{.model = toru::comm::network_model::fitted};
  struct row {
    const char* spec;
    double m;
    int chunks;
  };
  for (const row& r : {row{"2[bw=20Mb/s]x2[bw=20Mb/s]x4[bw=10Mb/s]", 256 * 1024.0, 64},
                       row{"2[bw=20Mb/s]x2[bw=20Mb/s]x4[bw=10Mb/s]", 1024 * 1024.0, 256},
                       row{"2[bw=20Mb/s]x4[bw=20Mb/s]x4[bw=10Mb/s]", 256 * 1024.0, 128},
                       row{"2[bw=20Mb/s]x4[bw=20Mb/s]x4[bw=10Mb/s]", 1024 * 1024.0, 512}}) {
    const auto t = torus::parse(r.spec);
    const auto s = simulate_alltoall(t, alltoall_algorithm::indirect, r.m, fitted);
    EXPECT_EQ(s.chunks, r.chunks) << r.spec << " at " << r.m << " bytes per pair";
  }
}

TEST(simulate, one_chunk_cannot_hide_phase_a) {
  const auto t = torus::parse("8x8x16");
  const auto one = simulate_alltoall(t, alltoall_algorithm::indirect, 64 * 1024, {.chunks = 1});
  const auto many = simulate_alltoall(t, alltoall_algorithm::indirect, 64 * 1024);
  // Unpipelined, A and B run back to back: B alone is the bound and A is half of it here (8 vs 16).
  EXPECT_LT(one.percent_of_bound, 70.0);
  EXPECT_GT(many.percent_of_bound, one.percent_of_bound);
}

TEST(simulate, direct_is_the_flow_bound_plus_startups) {
  const auto t = torus::parse("4x4x8");
  const auto r = simulate_alltoall(t, alltoall_algorithm::direct, 1 << 20);
  EXPECT_GT(r.percent_of_bound, 90.0);
  EXPECT_LE(r.percent_of_bound, 100.0 + 1e-9);
  const auto b = simulate_alltoall(t, alltoall_algorithm::bruck, 1 << 20);
  EXPECT_LT(b.percent_of_bound, r.percent_of_bound);  // bruck moves every block log2 P times
  EXPECT_THROW(simulate_alltoall(torus::parse("64x64x64"), alltoall_algorithm::bruck, 8), toru::error);
  EXPECT_THROW(simulate_alltoall(t, alltoall_algorithm::direct, 0), toru::error);
}

// --simulate --model fitted and the decision read the fast tier fitted on the packet model
// (topology/src/fitted_model.cpp): MPI's algorithm at its fitted fraction, and the automatic choice
// is the indirect pipeline at its own fitted fraction, on a torus far beyond the packet tier.
TEST(simulate, fitted_tier_is_what_the_decision_and_simulate_report) {
  namespace tp = toru::topology;
  const auto t = torus::parse("16[bw=20Mb/s]x16[bw=20Mb/s]x32[bw=10Mb/s]");
  const int P = 8192;
  for (double m : {4096.0, 65536.0, 1048576.0}) {
    const toru::comm::simulation_options fitted{.model = toru::comm::network_model::fitted};
    const auto mpi = simulate_alltoall(t, alltoall_algorithm::direct, m, fitted);
    EXPECT_EQ(mpi.model, toru::comm::network_model::fitted);
    EXPECT_DOUBLE_EQ(mpi.seconds, tp::fitted_alltoall_seconds(t, tp::packet_schedule_kind::ompi_tuned, m));
    const auto kind = tp::ompi_tuned_alltoall(P, m);
    if (kind == tp::packet_schedule_kind::linear) {
      EXPECT_NEAR(mpi.percent_of_bound, 100 * tp::fitted_efficiency(kind, m, P), 1e-6) << m;
    }
    const auto a = simulate_alltoall(t, alltoall_algorithm::automatic, m, fitted);
    EXPECT_EQ(a.algorithm, alltoall_algorithm::indirect) << m;
    EXPECT_NEAR(a.percent_of_bound, 100 * tp::fitted_efficiency(tp::packet_schedule_kind::indirect, m, P), 1e-6) << m;
    EXPECT_GT(a.percent_of_bound, 1.5 * mpi.percent_of_bound) << m;
  }
}

// --timed N: the median of the last N packet-model repetitions, as a benchmark reports its timed
// calls after the warm-ups; it needs that many repetitions.
TEST(simulate, timed_repetitions_report_the_median_of_the_last_ones) {
  const auto t = torus::parse("2[bw=20Mb/s]x2[bw=20Mb/s]x4[bw=10Mb/s]");
  toru::comm::simulation_options o{.model = toru::comm::network_model::packet};
  o.packet.repetitions = 4;
  const auto last = simulate_alltoall(t, alltoall_algorithm::direct, 65536, o);
  o.timed_repetitions = 3;
  const auto med = simulate_alltoall(t, alltoall_algorithm::direct, 65536, o);
  namespace tp = toru::topology;
  tp::packet_params p;
  p.repetitions = 4;
  auto reps = tp::simulate_packets(t, tp::alltoall_schedule(t, tp::packet_schedule_kind::ompi_tuned, 65536), p)
                  .repetition_seconds;
  ASSERT_EQ(reps.size(), 4u);
  EXPECT_DOUBLE_EQ(last.seconds, reps[3]);
  std::sort(reps.begin() + 1, reps.end());
  EXPECT_DOUBLE_EQ(med.seconds, reps[2]);
  o.timed_repetitions = 5;
  EXPECT_THROW(simulate_alltoall(t, alltoall_algorithm::direct, 65536, o), toru::error);
}

// --seeds N: the median over seeded runs of each run's figure (here the median of its timed calls).
TEST(simulate, seeds_report_the_median_over_seeded_runs) {
  const auto t = torus::parse("2[bw=20Mb/s]x2[bw=20Mb/s]x4[bw=10Mb/s]");
  toru::comm::simulation_options o{.model = toru::comm::network_model::packet};
  o.packet.host_cores = 2;
  o.packet.repetitions = 3;
  o.timed_repetitions = 2;
  o.seeds = 3;
  const auto r = simulate_alltoall(t, alltoall_algorithm::direct, 65536, o);
  namespace tp = toru::topology;
  std::vector<tp::packet_result> runs;
  tp::simulate_packets_median(t, tp::alltoall_schedule(t, tp::packet_schedule_kind::ompi_tuned, 65536), o.packet, 3,
                              &runs);
  std::vector<double> per_run;
  for (const auto& pr : runs) per_run.push_back((pr.repetition_seconds[1] + pr.repetition_seconds[2]) / 2);
  std::sort(per_run.begin(), per_run.end());
  EXPECT_DOUBLE_EQ(r.seconds, per_run[1]);
  o.seeds = 0;
  EXPECT_THROW(simulate_alltoall(t, alltoall_algorithm::direct, 65536, o), toru::error);
}

// The torus description picks the network model: the same shapes as an Ethernet (tcp) torus and as
// an HPC (credit) one. auto follows the credit model's times there, with MPI's linear schedule under
// adaptive routing as direct.
TEST(simulate, transport_selects_the_network_model_and_the_decision) {
  namespace tp = toru::topology;
  const toru::comm::simulation_options fitted{.model = toru::comm::network_model::fitted};
  const double m = 65536;
  for (const char* shape : {"32x32x32,bw=175MB/s", "64x32x32,bw=175MB/s"}) {
    const auto tcp = torus::parse(shape);
    const auto credit = torus::parse(std::string(shape) + ",transport=credit");
    const auto a_tcp = simulate_alltoall(tcp, alltoall_algorithm::automatic, m, fitted);
    EXPECT_EQ(a_tcp.model_version, tp::packet_model_version) << shape;
    EXPECT_EQ(a_tcp.algorithm, alltoall_algorithm::indirect) << shape;
    const auto a_credit = simulate_alltoall(credit, alltoall_algorithm::automatic, m, fitted);
    EXPECT_EQ(a_credit.model_version, tp::credit_model_version) << shape;
    const auto direct = simulate_alltoall(credit, alltoall_algorithm::direct, m, fitted);
    const auto indirect = simulate_alltoall(credit, alltoall_algorithm::indirect, m, fitted);
    EXPECT_EQ(direct.schedule, "linear adaptive");
    EXPECT_EQ(indirect.schedule, "indirect dimension-order");
    // auto takes the faster of the two in the credit model
    EXPECT_EQ(a_credit.algorithm,
              direct.seconds < indirect.seconds ? alltoall_algorithm::direct : alltoall_algorithm::indirect)
        << shape;
  }
  // BG/L's shape: the credit model has the direct all-to-all at about half the bound (the packet
  // tier's 16x8x8 point) and the pipeline ahead of it
  const auto bgl = torus::parse("64x32x32,bw=175MB/s,lat=100ns,transport=credit");
  EXPECT_LT(simulate_alltoall(bgl, alltoall_algorithm::direct, m, fitted).percent_of_bound, 55);
  EXPECT_EQ(simulate_alltoall(bgl, alltoall_algorithm::automatic, m, fitted).algorithm, alltoall_algorithm::indirect);
}

}  // namespace
