// The packet model against the emulated torus (tests/topology/data/testbed_2x2x4.json): the
// testbed's described link rates and TCP/host defaults, no per-row parameters. A model change that
// moves a row outside its tolerance fails here.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iostream>
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
  // The described testbed: tbf 64 kB burst, 50 ms, BBR, Open MPI's eager limit (the defaults), and
  // its host: 16 ranks on `cores` shared cores, timed calls that follow warm-up calls.
  packet_params p;
  p.host_cores = data["host"]["cores"];
  p.repetitions = data["host"]["warm_repetitions"];
  for (const auto& row : data["rows"]) {
    const double bytes = row["bytes"];
    const auto kind = packet_schedule_kind_from_string(row["schedule"]);
    const auto s = alltoall_schedule(t, kind, bytes, {.chunks = row.value("chunks", 64)});
    const auto r = simulate_packets(t, s, p);
    const double model = 100 * alltoall_bound(t, bytes) / r.seconds;
    const auto measured = row["measured"].get<std::vector<double>>();
    const double mean = std::accumulate(measured.begin(), measured.end(), 0.0) / static_cast<double>(measured.size());
    const double tol = row["tolerance"];
    std::cout << fmt::format(
        "{:>8} {:>10}: testbed {:5.1f}% of T_min (mean of {}), model {:5.1f}%, difference {:+5.1f} "
        "({}, limit {:.0f}); model drops {:.1f}% (+{} local), {} timeouts\n",
        bytes, row["schedule"].get<std::string>(), mean, measured.size(), model, model - mean,
        row["calibrated"].get<bool>() ? "calibrated" : "known gap", tol,
        100.0 * static_cast<double>(r.drops) / static_cast<double>(std::max<std::uint64_t>(1, r.packets)),
        r.local_drops, r.timeouts);
    EXPECT_NEAR(model, mean, tol) << row.dump();
  }
}
