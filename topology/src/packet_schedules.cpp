// SPDX-License-Identifier: BSD-3-Clause
#include "toru/topology/packet_schedules.hpp"

#include <fmt/format.h>

#include <utility>
#include <vector>

#include "toru/core/error.hpp"

namespace toru::topology {

namespace {

// Open MPI 4.1 alltoall algorithm ids: 1 linear, 2 pairwise, 3 modified Bruck, 4 linear_sync,
// 5 two_proc. One row per communicator-size class: the class's upper bound (exclusive) and the
// (block size bound, algorithm) steps, then the algorithm above the last bound.
struct size_class {
  int below;  // communicator size < below (0: any)
  std::vector<std::pair<double, int>> steps;
  int otherwise;
};

const std::vector<size_class>& ompi41_table() {
  static const std::vector<size_class> t = {
      {3, {{2, 2}, {4, 5}, {16, 2}, {64, 5}, {256, 2}, {4096, 5}, {32768, 2}, {262144, 4}, {1048576, 5}}, 2},
      {8, {{8192, 4}, {16384, 1}, {65536, 4}, {524288, 1}, {1048576, 2}}, 1},
      {16, {{262144, 4}}, 1},
      {32, {{4, 4}, {512, 3}, {8192, 4}, {32768, 1}, {262144, 4}, {524288, 1}}, 4},
      {64, {{512, 3}, {524288, 1}}, 4},
      {128, {{1024, 3}, {2048, 1}, {4096, 4}, {262144, 1}}, 2},
      {256, {{1024, 3}, {2048, 4}, {262144, 1}}, 2},
      {512, {{1024, 3}, {8192, 4}, {32768, 1}}, 2},
      {1024, {{512, 3}, {8192, 4}, {16384, 1}, {131072, 4}, {262144, 1}}, 2},
      {2048, {{512, 3}, {1024, 4}, {2048, 1}, {16384, 4}, {262144, 1}}, 4},
      {4096, {{1024, 3}, {4096, 4}, {8192, 1}, {131072, 4}}, 1},
      {0, {{2048, 3}, {8192, 4}, {16384, 1}, {32768, 4}, {65536, 1}}, 4},
  };
  return t;
}

packet_schedule_kind from_ompi_id(int id) {
  switch (id) {
    case 2:
    case 5:
      return packet_schedule_kind::pairwise;
    case 3:
      return packet_schedule_kind::bruck;
    default:
      return packet_schedule_kind::linear;
  }
}

int coordinate(const torus& t, int node, int axis) {
  int c = node;
  for (int i = 0; i < axis; ++i) c /= t[i].extent;
  return c % t[axis].extent;
}

void linear(const torus&, packet_schedule& s, double m, int P) {
  std::vector<int> op(static_cast<std::size_t>(P));
  for (int r = 0; r < P; ++r) op[static_cast<std::size_t>(r)] = s.add_op(r, {}, "linear");
  // Sends posted in reverse rank order from rank-1, as coll/base basic_linear does.
  for (int r = 0; r < P; ++r)
    for (int k = 1; k < P; ++k) {
      const int to = (r - k + P) % P;
      s.add_message(r, to, m, op[static_cast<std::size_t>(r)], op[static_cast<std::size_t>(to)]);
    }
}

void pairwise(const torus&, packet_schedule& s, double m, int P) {
  std::vector<int> prev(static_cast<std::size_t>(P), -1), cur(static_cast<std::size_t>(P));
  for (int step = 1; step < P; ++step) {
    for (int r = 0; r < P; ++r) {
      const int p = prev[static_cast<std::size_t>(r)];
      cur[static_cast<std::size_t>(r)] =
          s.add_op(r, p < 0 ? std::vector<int>{} : std::vector<int>{p}, fmt::format("step {}", step));
    }
    for (int r = 0; r < P; ++r) {
      const int to = (r + step) % P;
      s.add_message(r, to, m, cur[static_cast<std::size_t>(r)], cur[static_cast<std::size_t>(to)]);
    }
    prev = cur;
  }
}

void bruck(const torus&, packet_schedule& s, double m, int P) {
  std::vector<int> prev(static_cast<std::size_t>(P), -1), cur(static_cast<std::size_t>(P));
  for (int k = 1; k < P; k <<= 1) {
    int blocks = 0;
    for (int i = k; i < P; ++i) blocks += (i & k) ? 1 : 0;
    for (int r = 0; r < P; ++r) {
      const int p = prev[static_cast<std::size_t>(r)];
      cur[static_cast<std::size_t>(r)] =
          s.add_op(r, p < 0 ? std::vector<int>{} : std::vector<int>{p}, fmt::format("bruck {}", k));
    }
    for (int r = 0; r < P; ++r) {
      const int to = (r + k) % P;
      s.add_message(r, to, blocks * m, cur[static_cast<std::size_t>(r)], cur[static_cast<std::size_t>(to)]);
    }
    prev = cur;
  }
}

void indirect(const torus& t, packet_schedule& s, double m, int P, const schedule_options& o) {
  const int L = t.longest_axis();
  const int Z = t[L].extent, Q = P / Z, C = o.chunks;
  int stride = 1;
  for (int i = 0; i < L; ++i) stride *= t[i].extent;
  auto line_peer = [&](int n, int z) { return n + (z - coordinate(t, n, L)) * stride; };
  // plane peers of n: every node with n's coordinate on L
  std::vector<std::vector<int>> plane(static_cast<std::size_t>(P));
  for (int n = 0; n < P; ++n)
    for (int k = 0; k < P; ++k)
      if (coordinate(t, k, L) == coordinate(t, n, L)) plane[static_cast<std::size_t>(n)].push_back(k);
  const auto uC = static_cast<std::size_t>(C);
  std::vector<std::vector<int>> a(static_cast<std::size_t>(P), std::vector<int>(uC)), b = a;
  for (int c = 0; c < C; ++c) {
    const auto uc = static_cast<std::size_t>(c);
    for (int n = 0; n < P; ++n) {
      auto& an = a[static_cast<std::size_t>(n)];
      an[uc] = s.add_op(n, c >= 2 ? std::vector<int>{an[uc - 2]} : std::vector<int>{}, fmt::format("A {}", c));
    }
    if (Q > 1)
      for (int n = 0; n < P; ++n)
        for (int peer : plane[static_cast<std::size_t>(n)])
          s.add_message(n, peer, Z * m / C, a[static_cast<std::size_t>(n)][uc], a[static_cast<std::size_t>(peer)][uc]);
    for (int n = 0; n < P; ++n) {
      const auto un = static_cast<std::size_t>(n);
      std::vector<int> after{a[un][uc]};
      if (c >= 1) after.push_back(a[un][uc - 1]);
      if (c >= o.b_window) after.push_back(b[un][uc - static_cast<std::size_t>(o.b_window)]);
      b[un][uc] = s.add_op(n, std::move(after), fmt::format("B {}", c));
    }
    for (int n = 0; n < P; ++n)
      for (int z = 0; z < Z; ++z) {
        const int peer = line_peer(n, z);
        s.add_message(n, peer, Q * m / C, b[static_cast<std::size_t>(n)][uc], b[static_cast<std::size_t>(peer)][uc]);
      }
  }
}

}  // namespace

packet_schedule_kind ompi_tuned_alltoall(int ranks, double bytes) {
  for (const auto& cls : ompi41_table()) {
    if (cls.below != 0 && ranks >= cls.below) continue;
    for (const auto& [bound, alg] : cls.steps)
      if (bytes < bound) return from_ompi_id(alg);
    return from_ompi_id(cls.otherwise);
  }
  return packet_schedule_kind::linear;
}

packet_schedule alltoall_schedule(const torus& t, packet_schedule_kind kind, double bytes_per_pair,
                                  const schedule_options& opts) {
  expect(bytes_per_pair >= 0, "bytes_per_pair", ">= 0", fmt::format("{}", bytes_per_pair));
  expect(opts.chunks >= 1, "schedule_options::chunks", ">= 1", std::to_string(opts.chunks));
  expect(opts.b_window >= 1, "schedule_options::b_window", ">= 1", std::to_string(opts.b_window));
  const auto P = static_cast<int>(t.size());
  if (kind == packet_schedule_kind::ompi_tuned) kind = ompi_tuned_alltoall(P, bytes_per_pair);
  packet_schedule s;
  switch (kind) {
    case packet_schedule_kind::linear:
    case packet_schedule_kind::ompi_tuned:
      linear(t, s, bytes_per_pair, P);
      break;
    case packet_schedule_kind::pairwise:
      pairwise(t, s, bytes_per_pair, P);
      break;
    case packet_schedule_kind::bruck:
      bruck(t, s, bytes_per_pair, P);
      break;
    case packet_schedule_kind::indirect:
      indirect(t, s, bytes_per_pair, P, opts);
      break;
  }
  return s;
}

std::string to_string(packet_schedule_kind k) {
  switch (k) {
    case packet_schedule_kind::linear:
      return "linear";
    case packet_schedule_kind::pairwise:
      return "pairwise";
    case packet_schedule_kind::bruck:
      return "bruck";
    case packet_schedule_kind::ompi_tuned:
      return "ompi-tuned";
    case packet_schedule_kind::indirect:
      return "indirect";
  }
  return "?";
}

packet_schedule_kind packet_schedule_kind_from_string(const std::string& s) {
  for (auto k : {packet_schedule_kind::linear, packet_schedule_kind::pairwise, packet_schedule_kind::bruck,
                 packet_schedule_kind::ompi_tuned, packet_schedule_kind::indirect})
    if (to_string(k) == s) return k;
  throw error(errc::invalid_argument,
              fmt::format("schedule '{}': expected linear, pairwise, bruck, ompi-tuned or indirect", s));
}

}  // namespace toru::topology
