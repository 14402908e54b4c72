// SPDX-License-Identifier: BSD-3-Clause
// The packet model's side of the ns-3 cross-check (ns3_shared_link.cc): N flows of `bytes` each
// from nodes 1..N of a ring of 2N+1 nodes to node 0, so that dimension-order routing sends each the
// short way, over the shared last link 1 -> 0, as the ns-3 chain does. Same JSON line.
//
//   model_shared_link --flows 15 --bytes 262144 --rate 10Mbps --tcp bbr|reno [--netmodel2]
#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>

#include "toru/topology/packet_sim.hpp"
#include "toru/topology/torus.hpp"
#include "toru/topology/units.hpp"

int main(int argc, char** argv) {
  CLI::App app{"toru-netmodel: N TCP flows sharing one tbf-shaped link (the ns-3 cross-check)"};
  int flows = 15;
  double bytes = 262144;
  std::string rate = "10Mb/s", tcp = "bbr";
  bool netmodel2 = false;
  app.add_option("--flows", flows, "concurrent flows sharing the last link")->check(CLI::Range(1, 1000));
  app.add_option("--bytes", bytes, "bytes per flow")->check(CLI::PositiveNumber);
  app.add_option("--rate", rate, "link rate (torus spec bandwidth, e.g. 10Mb/s)");
  app.add_option("--tcp", tcp, "congestion control")->check(CLI::IsMember({"bbr", "reno"}));
  app.add_flag("--netmodel2", netmodel2, "toru-netmodel 2's BBR (fixed quantization budget, no Linux state machine)");
  CLI11_PARSE(app, argc, argv);
  try {
    const auto t = toru::topology::torus::parse(fmt::format("{}[bw={}]", 2 * flows + 1, rate));
    toru::topology::packet_schedule s;
    const int sink = s.add_op(0, {}, "sink");
    for (int k = 1; k <= flows; ++k) s.add_message(k, 0, bytes, s.add_op(k, {}, "source"), sink);
    toru::topology::packet_params p;
    p.congestion = tcp == "bbr" ? toru::topology::packet_params::congestion_control::bbr
                                : toru::topology::packet_params::congestion_control::reno;
    p.host_delay = 0;
    p.post_overhead = 0;
    p.eager_limit = 1e18;  // plain TCP streams, no MPI protocol
    // as ns-3's chain: fresh links (full tbf buckets), PPP + IP + TCP with timestamps = 54 bytes
    p.tbf_initial_tokens = p.tbf_burst;
    p.header = 54;
    p.ack_bytes = 54;
    if (netmodel2) {
      p.bbr_tso_autosize = false;
      p.bbr_linux_state = false;
    }
    const auto r = toru::topology::simulate_packets(t, s, p);
    const double bw = t[0].bandwidth;
    const double payload = bytes * flows;
    const double t_min = payload * (1 + p.header / p.mss) / bw;
    const auto hops = static_cast<double>(r.packets);
    std::printf(
        "{\"engine\": \"toru-netmodel\", \"tcp\": \"%s\", \"flows\": %d, \"bytes\": %.0f, \"rate_bps\": %.0f, "
        "\"makespan_s\": %.6f, \"goodput_bps\": %.0f, \"percent_of_bound\": %.2f, \"drops\": %llu, \"local_drops\": "
        "%llu, \"packets\": %llu, \"drop_percent\": %.3f, \"timeouts\": %llu, \"retransmits\": %llu}\n",
        tcp.c_str(), flows, bytes, bw * 8, r.seconds, payload * 8 / r.seconds, 100 * t_min / r.seconds,
        static_cast<unsigned long long>(r.drops), static_cast<unsigned long long>(r.local_drops),
        static_cast<unsigned long long>(r.packets),
        100.0 * static_cast<double>(r.drops + r.local_drops) / std::max(1.0, hops + static_cast<double>(r.local_drops)),
        static_cast<unsigned long long>(r.timeouts), static_cast<unsigned long long>(r.retransmits));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "model_shared_link: %s\n", e.what());
    return 1;
  }
  return 0;
}
