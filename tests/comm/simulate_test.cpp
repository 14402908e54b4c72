// The schedules in the topology simulator: the indirect pipeline reaches the bound on asymmetric
// tori, and the chunk model behaves.
#include <gtest/gtest.h>

#include "toru/comm/alltoall_simulate.hpp"
#include "toru/core/error.hpp"
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

}  // namespace
