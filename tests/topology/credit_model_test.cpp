// SPDX-License-Identifier: BSD-3-Clause
// The credit model's fitted tier against its packet tier on shapes outside its tables, and the
// Blue Gene/L comparison of docs/topology.md against Kumar et al. (ICPP 2008): the default MPI
// all-to-all reached 64% of peak on the 65,536-node 64x32x32 BG/L, symmetric partitions more.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "toru/core/error.hpp"
#include "toru/topology/credit_model.hpp"
#include "toru/topology/network_model.hpp"

using namespace toru::topology;

namespace {

// BG/L's torus links: 175 MB/s per direction (1.4 Gb/s; Adiga et al., IBM J. Res. Dev. 49(2/3),
// 2005), about 100 ns per hop; the model's defaults are BG/L's 256 B packets and VC FIFOs.
std::string bgl(const std::string& shape) { return shape + ",bw=175MB/s,lat=100ns,transport=credit"; }

credit_model_options with(credit_params::routing r, int packet_max_nodes = 1 << 20) {
  credit_model_options o;
  o.packet.route = r;
  o.packet_max_nodes = packet_max_nodes;
  return o;
}

double packet_percent(const std::string& shape, packet_schedule_kind k, double m, credit_params::routing r) {
  return credit_alltoall(torus::parse(bgl(shape)), k, m, with(r)).percent_of_bound;
}

double fitted_percent(const std::string& shape, packet_schedule_kind k, double m, credit_params::routing r) {
  return credit_alltoall(torus::parse(bgl(shape)), k, m, with(r, 0)).percent_of_bound;
}

constexpr auto dor = credit_params::routing::dimension_order;
constexpr auto adaptive = credit_params::routing::adaptive;

}  // namespace

TEST(credit_model, fitted_tier_is_within_eight_points_of_the_packet_tier_off_its_tables) {
  // None of these shapes is a table point: an interpolated ring, an interpolated plane, and the
  // indirect pipeline (its phases from the tables, their overlap from the flow-level simulator).
  // docs/topology.md lists where the tier is worse: three-axis tori of other sizes than the
  // table's, whose packet-tier efficiency falls with size.
  struct row {
    const char* shape;
    packet_schedule_kind kind;
    double m;
    credit_params::routing routing;
  };
  for (const auto& c :
       {row{"24", packet_schedule_kind::linear, 2048, dor}, row{"12x6", packet_schedule_kind::linear, 1024, dor},
        row{"8x4x4", packet_schedule_kind::indirect, 2048, dor}}) {
    const double packet = packet_percent(c.shape, c.kind, c.m, c.routing);
    const double fitted = fitted_percent(c.shape, c.kind, c.m, c.routing);
    EXPECT_NEAR(fitted, packet, 8.0) << c.shape << " " << to_string(c.kind) << " " << to_string(c.routing);
  }
}

TEST(credit_model, fitted_tier_answers_for_65536_nodes_at_once) {
  const auto t = torus::parse(bgl("64x32x32"));
  const auto e = credit_alltoall(t, packet_schedule_kind::indirect, 65536, with(dor, 128));
  EXPECT_EQ(e.tier, "fitted");
  EXPECT_GT(e.seconds, e.bound_seconds);  // no schedule beats T_min
  EXPECT_THROW(credit_fitted_seconds(t, packet_schedule_kind::pairwise, 4096, {}), toru::error);
  EXPECT_THROW(credit_phase_efficiency(torus::parse("4[switch]x4"), dor), toru::error);
}

TEST(credit_model, bgl_default_alltoall_near_64_percent_and_symmetric_partitions_better) {
  // Kumar et al.: the default all-to-all at 64% of peak on 64x32x32; asymmetric partitions worse.
  // The model's "default" is MPI's linear schedule (every send posted at once) with BG/L's
  // adaptive routing. Packet level on a 128-node torus of the same 2:1:1 shape and a symmetric one.
  const double small_default = packet_percent("8x4x4", packet_schedule_kind::linear, 1024, adaptive);
  EXPECT_NEAR(small_default, 64, 10);
  EXPECT_GT(packet_percent("4x4x4", packet_schedule_kind::linear, 1024, adaptive), small_default + 10);
  // The fitted tier on the machine (from the 1024- and 512-node packet runs): the symmetric
  // partition ahead. Its 64x32x32 value (49%) misses the published 64% by more than 10 points:
  // docs/topology.md, "Blue Gene/L".
  const double bgl_default = fitted_percent("64x32x32", packet_schedule_kind::linear, 65536, adaptive);
  EXPECT_GT(fitted_percent("32x32x32", packet_schedule_kind::linear, 65536, adaptive), bgl_default + 3);
}

TEST(credit_model, torus_description_selects_the_model) {
  EXPECT_EQ(selected_network_model(torus::parse("8x8x16")).name, "tcp");
  const auto t = torus::parse("8x8x16,transport=credit");
  EXPECT_EQ(t.transport(), link_transport::credit);
  EXPECT_EQ(selected_network_model(t).name, "credit");
  EXPECT_EQ(torus::parse(t.to_string()), t);  // the spec round-trips
  EXPECT_EQ(t.sub(std::vector<int>{2}).transport(), link_transport::credit);
  EXPECT_THROW(torus::parse("8x8x16,transport=infiniband"), toru::error);
  EXPECT_THROW(torus::parse("8[transport=credit]x8"), toru::error);
}
