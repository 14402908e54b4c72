// SPDX-License-Identifier: BSD-3-Clause
#include "toru/comm/alltoall_simulate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "alltoall_impl.hpp"
#include "toru/core/error.hpp"
#include "toru/topology/credit_model.hpp"
#include "toru/topology/fitted_model.hpp"
#include "toru/topology/network_model.hpp"
#include "toru/topology/packet_schedules.hpp"
#include "toru/topology/simulator.hpp"

namespace toru::comm {

std::string to_string(network_model m) {
  switch (m) {
    case network_model::fluid:
      return "fluid";
    case network_model::packet:
      return "packet";
    case network_model::fitted:
      return "fitted";
  }
  return "?";
}

network_model network_model_from_string(const std::string& s) {
  for (auto m : {network_model::fluid, network_model::packet, network_model::fitted})
    if (to_string(m) == s) return m;
  throw error(errc::invalid_argument, fmt::format("network model '{}': expected fluid, packet or fitted", s));
}

namespace {

// toru's algorithms as the schedules they issue: direct is the MPI library's MPI_Alltoall.
topology::packet_schedule_kind schedule_of(alltoall_algorithm a) {
  switch (a) {
    case alltoall_algorithm::pairwise:
      return topology::packet_schedule_kind::pairwise;
    case alltoall_algorithm::bruck:
      return topology::packet_schedule_kind::bruck;
    case alltoall_algorithm::indirect:
      return topology::packet_schedule_kind::indirect;
    default:
      return topology::packet_schedule_kind::ompi_tuned;
  }
}

}  // namespace

simulated_alltoall simulate_alltoall(const topology::torus& t, alltoall_algorithm algorithm, double bytes_per_pair,
                                     const simulation_options& opts) {
  expect(bytes_per_pair > 0, "bytes_per_pair", "> 0", fmt::format("{}", bytes_per_pair));
  expect(opts.chunks >= 0, "simulation_options::chunks", ">= 0", std::to_string(opts.chunks));
  expect(opts.seeds >= 1, "simulation_options::seeds", ">= 1", std::to_string(opts.seeds));
  expect(opts.timed_repetitions >= 1 && opts.timed_repetitions <= opts.packet.repetitions,
         "simulation_options::timed_repetitions", ">= 1 and <= packet.repetitions",
         std::to_string(opts.timed_repetitions));
  const auto P = static_cast<int>(t.size());
  const int L = t.longest_axis();
  const int Z = t[L].extent, Q = P / Z;
  detail::decision_input in;
  in.nranks = P;
  in.bytes_per_pair = bytes_per_pair;
  in.torus = &t;
  in.torus_given = true;
  in.plane_size = Q;
  in.line_size = Z;
  if (algorithm == alltoall_algorithm::automatic) algorithm = detail::decide_alltoall(in).algorithm;

  simulated_alltoall r;
  r.algorithm = algorithm;
  r.bound_seconds = topology::alltoall_bound(t, bytes_per_pair);
  r.model = opts.model;
  if (opts.model != network_model::fluid && t.transport() == topology::link_transport::credit) {
    const bool indirect = algorithm == alltoall_algorithm::indirect;
    r.chunks = indirect ? (opts.chunks > 0 ? opts.chunks : detail::model_indirect_chunks(in)) : 1;
    // On an HPC torus MPI_Alltoall is the library's linear schedule (pairwise and Bruck are
    // toru's own rows here too).
    const auto kind =
        algorithm == alltoall_algorithm::direct ? topology::packet_schedule_kind::linear : schedule_of(algorithm);
    r.schedule = topology::to_string(kind);
    topology::credit_model_options co{
        .packet = opts.credit,
        .packet_max_nodes = opts.model == network_model::packet ? opts.credit_packet_max_nodes : 0,
        .chunks = r.chunks};
    co.packet.route = indirect ? opts.credit_indirect_routing : opts.credit_direct_routing;
    const auto e = topology::credit_alltoall(t, kind, bytes_per_pair, co);
    r.seconds = e.seconds;
    r.model = e.tier == "packet" ? network_model::packet : network_model::fitted;
    r.schedule += " " + topology::to_string(co.packet.route);
    r.model_version = std::string(topology::credit_model_version);
    r.percent_of_bound = r.seconds > 0 ? 100.0 * r.bound_seconds / r.seconds : 0;
    return r;
  }
  if (opts.model != network_model::fluid) {
    r.model_version = std::string(topology::packet_model_version);
    const auto kind = schedule_of(algorithm);
    r.chunks = algorithm == alltoall_algorithm::indirect
                   ? (opts.chunks > 0 ? opts.chunks : detail::model_indirect_chunks(in))
                   : 1;
    r.schedule = topology::to_string(
        kind == topology::packet_schedule_kind::ompi_tuned ? topology::ompi_tuned_alltoall(P, bytes_per_pair) : kind);
    if (opts.model == network_model::packet && P <= opts.packet_max_nodes) {
      const auto s = topology::alltoall_schedule(t, kind, bytes_per_pair, {.chunks = r.chunks});
      const auto runs = topology::simulate_packets_seeded(t, s, opts.packet, opts.seeds);
      for (const auto& pr : runs) {
        r.drops += pr.drops;
        r.timeouts += pr.timeouts;
      }
      r.seconds = topology::timed_median_seconds(runs, opts.timed_repetitions);
      r.drops /= runs.size();
      r.timeouts /= runs.size();
    } else {
      r.model = network_model::fitted;
      r.seconds = topology::fitted_alltoall_seconds(t, kind, bytes_per_pair, r.chunks);
    }
    r.percent_of_bound = r.seconds > 0 ? 100.0 * r.bound_seconds / r.seconds : 0;
    return r;
  }
  topology::simulator sim(t, {.message_startup = opts.message_startup});
  std::vector<int> all_axes, plane_axes;
  for (int a = 0; a < t.ndims(); ++a) {
    all_axes.push_back(a);
    if (a != L && t[a].extent > 1) plane_axes.push_back(a);
  }
  switch (algorithm) {
    case alltoall_algorithm::automatic:
    case alltoall_algorithm::direct:
    case alltoall_algorithm::pairwise:
      sim.add_alltoall(all_axes, bytes_per_pair, {}, "all-to-all");
      break;
    case alltoall_algorithm::bruck: {
      if (P > 4096)
        throw error(errc::unsupported,
                    fmt::format("simulating bruck on {} nodes: explicit messages are limited to 4096 nodes", P));
      topology::simulator::task_id prev = -1;
      for (int k = 1; k < P; k <<= 1) {
        int blocks = 0;
        for (int i = k; i < P; ++i) blocks += (i & k) ? 1 : 0;
        std::vector<topology::flow> flows;
        for (int n = 0; n < P; ++n) flows.push_back({n, (n + k) % P, blocks * bytes_per_pair});
        prev = sim.add_messages(std::move(flows), prev < 0 ? std::vector<int>{} : std::vector<int>{prev},
                                fmt::format("step {}", k));
      }
      break;
    }
    case alltoall_algorithm::indirect: {
      const int C = opts.chunks > 0 ? opts.chunks : detail::model_indirect_chunks(in);
      r.chunks = C;
      const double chunk_bytes = bytes_per_pair / C;  // per pair and chunk
      const double copy = P * chunk_bytes / opts.copy_bandwidth;
      auto deps = [](std::initializer_list<int> ids) {
        std::vector<int> v;
        for (int id : ids)
          if (id >= 0) v.push_back(id);
        return v;
      };
      // The calling thread's program order (alltoall_indirect.cpp): iteration c packs chunk c+1 and
      // posts A(c+1), then waits for A(c), transposes chunk c and hands it to phase B; chunks are
      // unpacked as phase B delivers them. Copies share one "copy" resource (the calling thread);
      // phases of one kind run in chunk order.
      const auto uC = static_cast<std::size_t>(C);
      std::vector<int> pack(uC + 1, -1), a(uC, -1), tr(uC, -1), b(uC, -1);
      auto add_a = [&](int c) {
        const auto uc = static_cast<std::size_t>(c);
        a[uc] = plane_axes.empty() ? pack[uc]
                                   : sim.add_alltoall(plane_axes, Z * chunk_bytes, deps({pack[uc], c ? a[uc - 1] : -1}),
                                                      fmt::format("A {}", c), Q - 1);
      };
      pack[0] = sim.add_compute("copy", copy, {}, "pack 0");
      add_a(0);
      for (int c = 0; c < C; ++c) {
        const auto uc = static_cast<std::size_t>(c);
        if (c + 1 < C) {
          pack[uc + 1] = sim.add_compute("copy", copy, deps({c ? tr[uc - 1] : -1}), fmt::format("pack {}", c + 1));
          add_a(c + 1);
        }
        tr[uc] = sim.add_compute("copy", copy, deps({a[uc], pack[uc + 1], c ? tr[uc - 1] : -1}),
                                 fmt::format("transpose {}", c));
        b[uc] =
            sim.add_alltoall({L}, Q * chunk_bytes, deps({tr[uc], c ? b[uc - 1] : -1}), fmt::format("B {}", c), Z - 1);
        sim.add_compute("copy", copy, {b[uc]}, fmt::format("unpack {}", c));
      }
      break;
    }
  }
  r.seconds = sim.run().makespan;
  r.percent_of_bound = r.seconds > 0 ? 100.0 * r.bound_seconds / r.seconds : 0;
  return r;
}

}  // namespace toru::comm
