#include "toru/comm/alltoall_simulate.hpp"

#include <fmt/format.h>

#include <cmath>
#include <vector>

#include "alltoall_impl.hpp"
#include "toru/core/error.hpp"
#include "toru/topology/network_model.hpp"
#include "toru/topology/simulator.hpp"

namespace toru::comm {

simulated_alltoall simulate_alltoall(const topology::torus& t, alltoall_algorithm algorithm, double bytes_per_pair,
                                     const simulation_options& opts) {
  expect(bytes_per_pair > 0, "bytes_per_pair", "> 0", fmt::format("{}", bytes_per_pair));
  expect(opts.chunks >= 0, "simulation_options::chunks", ">= 0", std::to_string(opts.chunks));
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
      int prev_a = -1, prev_b = -1, prev_copy = -1;
      auto deps = [](std::initializer_list<int> ids) {
        std::vector<int> v;
        for (int id : ids)
          if (id >= 0) v.push_back(id);
        return v;
      };
      std::vector<int> b_of(static_cast<std::size_t>(C));
      for (int c = 0; c < C; ++c) {
        // One copy thread: pack(c) after the previous copy task; transpose(c) after A(c); unpack(c-1)
        // is interleaved where the real pipeline does it (after B(c-1)).
        const int pack = sim.add_compute("copy", copy, deps({prev_copy}), fmt::format("pack {}", c));
        const int a = plane_axes.empty() ? pack
                                         : sim.add_alltoall(plane_axes, Z * chunk_bytes, deps({pack, prev_a}),
                                                            fmt::format("A {}", c), Q - 1);
        const int tr = sim.add_compute("copy", copy, deps({a, pack}), fmt::format("transpose {}", c));
        const int b = sim.add_alltoall({L}, Q * chunk_bytes, deps({tr, prev_b}), fmt::format("B {}", c), Z - 1);
        b_of[static_cast<std::size_t>(c)] = b;
        prev_copy = tr;
        if (c > 0)
          prev_copy = sim.add_compute("copy", copy, deps({b_of[static_cast<std::size_t>(c) - 1], tr}),
                                      fmt::format("unpack {}", c - 1));
        prev_a = a;
        prev_b = b;
      }
      sim.add_compute("copy", copy, deps({prev_b, prev_copy}), fmt::format("unpack {}", C - 1));
      break;
    }
  }
  r.seconds = sim.run().makespan;
  r.percent_of_bound = r.seconds > 0 ? 100.0 * r.bound_seconds / r.seconds : 0;
  return r;
}

}  // namespace toru::comm
