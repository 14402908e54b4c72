// The packet model against the emulated torus (tests/topology/data/testbed_2x2x4.json): the
// testbed's described link rates and TCP/host defaults, no per-row parameters. A model change that
// moves a row outside its tolerance fails here.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>

#include "toru/topology/network_model.hpp"
#include "toru/topology/packet_schedules.hpp"

#ifndef TORU_TOPOLOGY_TEST_DATA
#error "TORU_TOPOLOGY_TEST_DATA must name tests/topology/data"
#endif

using namespace toru::topology;

TEST(netmodel_calibration, emulated_2x2x4_torus) {
  std::ifstream f(std::string(TORU_TOPOLOGY_TEST_DATA) + "/testbed_2x2x4.json");
  ASSERT_TRUE(f) << "testbed_2x2x4.json not found";
  const auto data = nlohmann::json::parse(f);
  const auto t = torus::parse(data["torus"].get<std::string>());
  const packet_params p;  // the described testbed: tbf 64 kB burst, 50 ms, BBR, Open MPI eager limit
  for (const auto& row : data["rows"]) {
    const double bytes = row["bytes"];
    const auto kind = packet_schedule_kind_from_string(row["schedule"]);
    const auto s = alltoall_schedule(t, kind, bytes, {.chunks = row.value("chunks", 64)});
    const auto r = simulate_packets(t, s, p);
    const double model = 100 * alltoall_bound(t, bytes) / r.seconds;
    const auto measured = row["measured"].get<std::vector<double>>();
    const double mean = std::accumulate(measured.begin(), measured.end(), 0.0) / static_cast<double>(measured.size());
    const double tol = row["tolerance"];
    std::cout << fmt::format("{:>8} {:>10}: model {:5.1f}% of T_min, testbed {:5.1f}% (mean of {}), {} {:.0f}\n", bytes,
                             row["schedule"].get<std::string>(), model, mean, measured.size(),
                             row["calibrated"].get<bool>() ? "within" : "known gap, limit", tol);
    EXPECT_NEAR(model, mean, tol) << row.dump();
  }
}
