// SPDX-License-Identifier: BSD-3-Clause
#include "toru/topology/mapping.hpp"

#include <algorithm>
#include <charconv>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <numeric>
#include <optional>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "toru/core/error.hpp"
#include "toru/core/log.hpp"
#include "toru/core/mpi.hpp"
#include "toru/topology/units.hpp"

namespace toru::topology {
namespace {

std::string coords_text(std::span<const int> c) { return fmt::format("({})", fmt::join(c, ",")); }

// Axis indices named by an order string, fastest first.
std::vector<int> parse_order(const torus& t, std::string_view order) {
  auto fail = [&](std::string_view why) -> std::vector<int> {
    std::vector<std::string> names;
    for (const auto& a : t.axes()) names.push_back(a.name);
    throw error(errc::invalid_argument,
                fmt::format("mapping order '{}': expected each axis of torus {} once (names {} or indices 0..{}), {}",
                            order, t.to_string(), fmt::join(names, ","), t.ndims() - 1, why));
  };
  std::vector<std::string_view> tokens;
  if (order.find(',') != std::string_view::npos) {
    std::size_t start = 0;
    for (;;) {
      const auto comma = order.find(',', start);
      std::string_view tok =
          order.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
      while (!tok.empty() && tok.front() == ' ') tok.remove_prefix(1);
      while (!tok.empty() && tok.back() == ' ') tok.remove_suffix(1);
      tokens.push_back(tok);
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
  } else {
    for (std::size_t i = 0; i < order.size(); ++i) tokens.push_back(order.substr(i, 1));
  }
  std::vector<int> axes;
  for (auto tok : tokens) {
    if (tok.empty()) return fail("got an empty name");
    int a = t.find_axis(tok);
    if (a < 0 &&
        std::all_of(tok.begin(), tok.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
      a = std::atoi(std::string(tok).c_str());
      if (a >= t.ndims()) a = -1;
    }
    if (a < 0) return fail(fmt::format("got unknown axis '{}'", tok));
    if (std::find(axes.begin(), axes.end(), a) != axes.end()) return fail(fmt::format("got axis '{}' twice", tok));
    axes.push_back(a);
  }
  if (static_cast<int>(axes.size()) != t.ndims()) return fail(fmt::format("got {} of {} axes", axes.size(), t.ndims()));
  return axes;
}

// Coordinates of rank r under an order (fastest axis first), written to c.
void order_coords_into(const torus& t, const std::vector<int>& order, std::int64_t r, std::span<int> c) {
  for (int a : order) {
    c[static_cast<std::size_t>(a)] = static_cast<int>(r % t[a].extent);
    r /= t[a].extent;
  }
}

double env_bandwidth(const char* name, double fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  return parse_bandwidth(v, name);
}

}  // namespace

mapping::mapping(torus shape, std::vector<std::vector<int>> coords_of_rank) : shape_(std::move(shape)) {
  const auto n = static_cast<std::size_t>(shape_.size());
  const auto nd = static_cast<std::size_t>(shape_.ndims());
  if (coords_of_rank.size() != n)
    throw error(errc::invalid_argument,
                fmt::format("mapping: expected one coordinate set per node of torus {} ({} ranks), got {}",
                            shape_.to_string(), n, coords_of_rank.size()));
  coords_.resize(n * nd);
  node_of_rank_.resize(n);
  rank_of_node_.assign(n, -1);
  for (std::size_t r = 0; r < n; ++r) {
    const auto& c = coords_of_rank[r];
    if (c.size() != nd)
      throw error(errc::invalid_argument,
                  fmt::format("mapping rank {}: expected {} coordinates, got {}", r, nd, c.size()));
    for (std::size_t i = 0; i < nd; ++i)
      if (c[i] < 0 || c[i] >= shape_[static_cast<int>(i)].extent)
        throw error(errc::invalid_argument,
                    fmt::format("mapping rank {} coordinate {} ({}): expected 0..{}, got {}", r, i,
                                shape_[static_cast<int>(i)].name, shape_[static_cast<int>(i)].extent - 1, c[i]));
    std::copy(c.begin(), c.end(), coords_.begin() + static_cast<std::ptrdiff_t>(r * nd));
    const std::int64_t node = shape_.node_unchecked(c);
    auto& owner = rank_of_node_[static_cast<std::size_t>(node)];
    if (owner >= 0)
      throw error(errc::invalid_argument, fmt::format("mapping: expected a bijection, got ranks {} and {} both at {}",
                                                      owner, r, coords_text(c)));
    owner = static_cast<int>(r);
    node_of_rank_[r] = node;
  }
}

mapping::mapping(torus shape, const std::vector<int>& order) : shape_(std::move(shape)) {
  // An order is a bijection by construction: no checks, no per-rank allocations (big tori).
  const auto n = static_cast<std::size_t>(shape_.size());
  const auto nd = static_cast<std::size_t>(shape_.ndims());
  coords_.resize(n * nd);
  node_of_rank_.resize(n);
  rank_of_node_.resize(n);
  for (std::size_t r = 0; r < n; ++r) {
    const std::span<int> c(coords_.data() + r * nd, nd);
    order_coords_into(shape_, order, static_cast<std::int64_t>(r), c);
    node_of_rank_[r] = shape_.node_unchecked(c);
    rank_of_node_[static_cast<std::size_t>(node_of_rank_[r])] = static_cast<int>(r);
  }
}

mapping mapping::identity(const torus& shape) {
  std::vector<int> order(static_cast<std::size_t>(shape.ndims()));
  std::iota(order.begin(), order.end(), 0);
  return mapping(shape, order);
}

mapping mapping::from_order(const torus& shape, std::string_view order) {
  return mapping(shape, parse_order(shape, order));
}

mapping mapping::from_file(const torus& shape, const std::string& path) {
  std::ifstream in(path);
  if (!in) throw error(errc::io, fmt::format("map file '{}': cannot open it for reading", path));
  const int nd = shape.ndims();
  const auto n = static_cast<std::size_t>(shape.size());
  std::vector<std::vector<int>> coords(n);
  std::vector<int> line_of_rank(n, 0);
  std::string line;
  int lineno = 0, entries = 0, with_rank = -1;
  while (std::getline(in, line)) {
    ++lineno;
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::vector<long long> v;
    std::size_t i = 0;
    while (i < line.size()) {
      const char c = line[i];
      if (c == ' ' || c == '\t' || c == ',' || c == ':' || c == '\r') {
        ++i;
        continue;
      }
      long long x = 0;
      auto [p, ec] = std::from_chars(line.data() + i, line.data() + line.size(), x);
      if (ec != std::errc() || (p < line.data() + line.size() && !std::strchr(" \t,:\r", *p))) {
        std::size_t end = i;
        while (end < line.size() && !std::strchr(" \t,:\r", line[end])) ++end;
        throw error(errc::invalid_argument, fmt::format("map file '{}' line {}: expected integers, got '{}'", path,
                                                        lineno, line.substr(i, end - i)));
      }
      v.push_back(x);
      i = static_cast<std::size_t>(p - line.data());
    }
    if (v.empty()) continue;
    const bool ranked = static_cast<int>(v.size()) == nd + 1;
    if (!ranked && static_cast<int>(v.size()) != nd)
      throw error(errc::invalid_argument,
                  fmt::format("map file '{}' line {}: expected {} coordinates (or a rank and {} coordinates) for "
                              "torus {}, got {} values",
                              path, lineno, nd, nd, shape.to_string(), v.size()));
    if (with_rank < 0) with_rank = ranked ? 1 : 0;
    if (with_rank != (ranked ? 1 : 0))
      throw error(errc::invalid_argument, fmt::format("map file '{}' line {}: expected every line {} a rank, got a mix",
                                                      path, lineno, with_rank ? "to start with" : "not to start with"));
    long long rank = ranked ? v.front() : entries;
    if (rank < 0 || rank >= static_cast<long long>(n))
      throw error(
          errc::invalid_argument,
          fmt::format("map file '{}' line {}: expected a rank in 0..{} (torus {} has {} nodes), got {}", path, lineno,
                      n - 1, shape.to_string(), n, ranked ? std::to_string(rank) : "one line too many"));
    auto& slot = coords[static_cast<std::size_t>(rank)];
    if (!slot.empty())
      throw error(errc::invalid_argument, fmt::format("map file '{}' line {}: rank {} already given on line {}", path,
                                                      lineno, rank, line_of_rank[static_cast<std::size_t>(rank)]));
    for (int k = 0; k < nd; ++k) {
      const long long x = v[static_cast<std::size_t>(k + (ranked ? 1 : 0))];
      if (x < 0 || x >= shape[k].extent)
        throw error(errc::invalid_argument,
                    fmt::format("map file '{}' line {}: coordinate {} ({}) expected 0..{}, got {}", path, lineno, k,
                                shape[k].name, shape[k].extent - 1, x));
      slot.push_back(static_cast<int>(x));
    }
    line_of_rank[static_cast<std::size_t>(rank)] = lineno;
    ++entries;
  }
  for (std::size_t r = 0; r < n; ++r)
    if (coords[r].empty())
      throw error(errc::invalid_argument,
                  fmt::format("map file '{}': expected all {} ranks of torus {}, rank {} is missing ({} given)", path,
                              n, shape.to_string(), r, entries));
  // Repeated coordinates: report with the file's line numbers rather than the constructor's ranks only.
  std::map<std::vector<int>, std::size_t> seen;
  for (std::size_t r = 0; r < n; ++r) {
    auto [it, fresh] = seen.emplace(coords[r], r);
    if (!fresh)
      throw error(errc::invalid_argument,
                  fmt::format("map file '{}' line {}: expected distinct coordinates, rank {} repeats {} of rank {} "
                              "(line {})",
                              path, line_of_rank[r], r, coords_text(coords[r]), it->second, line_of_rank[it->second]));
  }
  return mapping(shape, std::move(coords));
}

mapping mapping::from_json(const torus& shape, const nlohmann::json& j) {
  if (!j.is_array())
    throw error(errc::invalid_argument,
                fmt::format("mapping JSON: expected an array of coordinate arrays, got {}", j.dump().substr(0, 100)));
  std::vector<std::vector<int>> c;
  for (std::size_t r = 0; r < j.size(); ++r) {
    if (!j[r].is_array() || !std::all_of(j[r].begin(), j[r].end(), [](const auto& x) { return x.is_number_integer(); }))
      throw error(errc::invalid_argument,
                  fmt::format("mapping JSON [{}]: expected an array of integers, got {}", r, j[r].dump()));
    c.push_back(j[r].get<std::vector<int>>());
  }
  return mapping(shape, std::move(c));
}

std::span<const int> mapping::coords(int rank) const {
  if (rank < 0 || rank >= nranks())
    throw error(errc::invalid_argument, fmt::format("mapping rank: expected 0..{}, got {}", nranks() - 1, rank));
  const auto nd = static_cast<std::size_t>(shape_.ndims());
  return std::span<const int>(coords_).subspan(static_cast<std::size_t>(rank) * nd, nd);
}

std::int64_t mapping::node_of(int rank) const {
  if (rank < 0 || rank >= nranks())
    throw error(errc::invalid_argument, fmt::format("mapping rank: expected 0..{}, got {}", nranks() - 1, rank));
  return node_of_rank_[static_cast<std::size_t>(rank)];
}

int mapping::rank_of_node(std::int64_t node) const {
  if (node < 0 || node >= shape_.size())
    throw error(errc::invalid_argument, fmt::format("mapping node: expected 0..{}, got {}", shape_.size() - 1, node));
  return rank_of_node_[static_cast<std::size_t>(node)];
}

int mapping::rank_at(std::span<const int> c) const { return rank_of_node_[static_cast<std::size_t>(shape_.node(c))]; }

bool mapping::is_identity() const {
  for (std::size_t r = 0; r < node_of_rank_.size(); ++r)
    if (node_of_rank_[r] != static_cast<std::int64_t>(r)) return false;
  return true;
}

nlohmann::json mapping::to_json() const {
  nlohmann::json j = nlohmann::json::array();
  for (int r = 0; r < nranks(); ++r) {
    auto c = coords(r);
    j.push_back(std::vector<int>(c.begin(), c.end()));
  }
  return j;
}

std::string mapping::describe() const {
  std::vector<int> order(static_cast<std::size_t>(shape_.ndims()));
  std::iota(order.begin(), order.end(), 0);
  const bool short_names =
      std::all_of(shape_.axes().begin(), shape_.axes().end(), [](const axis& a) { return a.name.size() == 1; });
  std::vector<int> c(order.size());
  do {
    bool same = true;
    for (int r = 0; r < nranks() && same; ++r) {
      order_coords_into(shape_, order, r, c);
      same = std::equal(c.begin(), c.end(), coords(r).begin());
    }
    if (same) {
      std::vector<std::string> names;
      for (int a : order) names.push_back(shape_[a].name);
      return fmt::format("order {}", fmt::join(names, short_names ? "" : ","));
    }
  } while (std::next_permutation(order.begin(), order.end()));
  return "explicit";
}

mapping derive_mapping(MPI_Comm comm) {
  const int rank = mpi_rank(comm), size = mpi_size(comm);
  double shm_bw = 0, net_bw = 0;
  validate_collectively(comm, [&] {
    shm_bw = env_bandwidth("TORU_SHM_BANDWIDTH", 5e9);
    net_bw = env_bandwidth("TORU_NET_BANDWIDTH", 12.5e9);
  });
  // Each rank learns every rank's (node's lowest rank, local rank, ranks on the node); nodes are
  // then numbered in the order of their lowest rank, so the layout is the same on every rank.
  MPI_Comm local = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &local), "MPI_Comm_split_type");
  int mine[3] = {rank, mpi_rank(local), mpi_size(local)};
  const int rc = MPI_Allreduce(&rank, &mine[0], 1, MPI_INT, MPI_MIN, local);
  MPI_Comm_free(&local);
  check_mpi(rc, "MPI_Allreduce");
  std::vector<int> all(static_cast<std::size_t>(3 * size));
  check_mpi(MPI_Allgather(mine, 3, MPI_INT, all.data(), 3, MPI_INT, comm), "MPI_Allgather");

  std::map<int, int> node_index;  // first rank -> node number
  int max_local = 0;
  bool even = true;
  for (int r = 0; r < size; ++r) {
    node_index.emplace(all[static_cast<std::size_t>(3 * r)], 0);
    max_local = std::max(max_local, all[static_cast<std::size_t>(3 * r + 2)]);
  }
  int k = 0;
  for (auto& [first, index] : node_index) index = k++;
  for (int r = 0; r < size; ++r) even = even && all[static_cast<std::size_t>(3 * r + 2)] == max_local;
  const int nodes = static_cast<int>(node_index.size());

  if (even) {
    axis t{.extent = max_local, .wrap = true, .bandwidth = shm_bw, .latency = 0.5e-6, .name = "T", .switched = true};
    axis n{
        .extent = nodes, .wrap = true, .bandwidth = net_bw / max_local, .latency = 2e-6, .name = "N", .switched = true};
    torus shape({t, n});
    std::vector<std::vector<int>> c(static_cast<std::size_t>(size));
    for (int r = 0; r < size; ++r)
      c[static_cast<std::size_t>(r)] = {all[static_cast<std::size_t>(3 * r + 1)],
                                        node_index.at(all[static_cast<std::size_t>(3 * r)])};
    return mapping(std::move(shape), std::move(c));
  }
  if (rank == 0)
    log::warn(
        "derive_mapping: nodes hold different numbers of ranks (up to {}); modelling all {} ranks as one "
        "switched axis",
        max_local, size);
  axis n{.extent = size, .wrap = true, .bandwidth = net_bw / max_local, .latency = 2e-6, .name = "N", .switched = true};
  return mapping::identity(torus({n}));
}

mapping make_mapping(MPI_Comm comm, const torus& shape, std::string_view order_or_empty) {
  const int size = mpi_size(comm);
  std::optional<mapping> m;
  validate_collectively(comm, [&] {
    if (shape.size() != size)
      throw error(errc::invalid_argument,
                  fmt::format("torus {}: expected the product of extents to equal the {} ranks of the communicator, "
                              "got {} nodes",
                              shape.to_string(), size, shape.size()));
    m = order_or_empty.empty() ? mapping::identity(shape) : mapping::from_order(shape, order_or_empty);
  });
  return std::move(*m);
}

mapping load_mapping(MPI_Comm comm, const torus& shape, const std::string& path) {
  const int size = mpi_size(comm);
  std::optional<mapping> m;
  validate_collectively(comm, [&] {
    if (shape.size() != size)
      throw error(errc::invalid_argument,
                  fmt::format("torus {}: expected the product of extents to equal the {} ranks of the communicator, "
                              "got {} nodes",
                              shape.to_string(), size, shape.size()));
    m = mapping::from_file(shape, path);
  });
  return std::move(*m);
}

}  // namespace toru::topology
