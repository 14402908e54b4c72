// SPDX-License-Identifier: BSD-3-Clause
// toru-topo: describe a torus (or the current job's layout), its rank mapping, the all-to-all
// link loads and lower bound, and optionally simulate the pipelined two-phase all-to-all.
//
//   toru-topo --torus 16x16x32 --alltoall-bytes 64KiB --json
//   mpirun -n 8 toru-topo                      # the layout derived for this job
//   mpirun -n 8 toru-topo --torus 2x2x2 --map ZYX
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "common/cli.hpp"
#include "toru/core/error.hpp"
#include "toru/core/mpi.hpp"
#include "toru/topology/cart.hpp"
#include "toru/topology/credit_model.hpp"
#include "toru/topology/mapping.hpp"
#include "toru/topology/network_model.hpp"
#include "toru/topology/node.hpp"
#include "toru/topology/simulator.hpp"
#include "toru/topology/units.hpp"

namespace topo = toru::topology;

namespace {

constexpr const char* footer = R"(
TORUS SPEC
  axes separated by 'x':  16x16x32
  an axis:                EXTENT, NAME=EXTENT, either followed by [OPTIONS]   e.g. Z=32[mesh,bw=2GB/s]
  options for all axes:   a trailing ,OPTIONS list                          e.g. 16x16x32,bw=425MB/s,lat=2us
  OPTIONS (comma-separated):
    torus | ring          wrap-around links (default); extent 2 has ONE link
    mesh                  no wrap-around link
    switch                non-blocking switch: one port per node, any pair one hop apart
    bw=BANDWIDTH          per link and direction: 425MB/s, 1.6GB/s, 100Gb/s, 2GiB/s (default 1GB/s)
    lat=TIME              per hop: 2us, 500ns (default 1us)
  Default names are X Y Z T U V. A path to a JSON file (see docs/topology.md) is accepted too.
MAP
  an order string naming each axis once, fastest-varying first (XYZ, ZXY, "nodes,cores");
  a map file (one line per rank: coordinates, or "rank: coordinates"); or 'cart' for
  MPI_Cart_create with reordering. Default: identity (rank r on node r, axis 0 fastest).
Under mpirun the torus must have as many nodes as there are ranks; a single process evaluates
any torus offline. Without --torus, the layout derived for the job is reported (ranks per node
x nodes, node-aware).)";

struct options {
  std::string torus_spec, map, bytes_text = "65536", alpha_text = "0";
  bool json = false, node = false, explicit_routes = false, torus_given = false, map_given = false;
  int chunks = 0, repeat = 101;
};

std::string kind_of(const topo::axis& a) { return a.switched ? "switch" : a.wrap ? "torus" : "mesh"; }

// A spec never contains '/' outside its units ("bw=1GB/s"), so only a value that names a file or
// looks like a path ("./t.json", "map.txt") is read as one.
bool looks_like_file(const std::string& s) {
  if (std::filesystem::is_regular_file(s)) return true;
  if (s.find('[') != std::string::npos || s.find('=') != std::string::npos) return false;
  return s.find('/') != std::string::npos || s.ends_with(".json") || s.ends_with(".txt") || s.ends_with(".map");
}

// Makespan of the two-phase indirect all-to-all pipelined over `chunks`: phase A in the sub-tori
// orthogonal to the longest axis, phase B along it (see reference: A(c+1) overlaps B(c)).
double simulate_indirect(const topo::torus& t, double m, int chunks, double alpha) {
  const int l = t.longest_axis();
  std::vector<int> others;
  for (int i = 0; i < t.ndims(); ++i)
    if (i != l) others.push_back(i);
  const double per_line = static_cast<double>(t[l].extent), per_plane = static_cast<double>(t.size()) / per_line;
  topo::simulator sim(t, {.message_startup = alpha, .hop_latency = true});
  int prev_a = -1, prev_b = -1;
  for (int c = 0; c < chunks; ++c) {
    std::vector<int> after_b;
    if (!others.empty()) {
      std::vector<int> after_a;
      if (prev_a >= 0) after_a.push_back(prev_a);
      prev_a = sim.add_alltoall(others, m / chunks * per_line, after_a, fmt::format("A{}", c));
      after_b.push_back(prev_a);
    }
    if (prev_b >= 0) after_b.push_back(prev_b);
    prev_b = sim.add_alltoall({l}, m / chunks * per_plane, after_b, fmt::format("B{}", c));
  }
  return sim.run().makespan;
}

// Median wall time of `reps` calls of f, in seconds.
template <class F>
double median_seconds(int reps, F&& f) {
  std::vector<double> t;
  for (int i = 0; i < std::max(reps, 1); ++i) {
    const auto start = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::nth_element(t.begin(), t.begin() + static_cast<std::ptrdiff_t>(t.size() / 2), t.end());
  return t[t.size() / 2];
}

int run(const options& opt, MPI_Comm comm) {
  const int rank = toru::mpi_rank(comm), size = toru::mpi_size(comm);
  std::optional<topo::torus> shape;
  double bytes = 0, alpha = 0;
  // Every rank parses the same input; agreeing keeps a rank from waiting on one that failed.
  toru::validate_collectively(comm, [&] {
    bytes = topo::parse_bytes(opt.bytes_text, "--alltoall-bytes");
    alpha = topo::parse_time(opt.alpha_text, "--alpha");
    toru::expect(!opt.map_given || !opt.map.empty(), "--map", "an order string, a map file or 'cart'", "''");
    toru::expect(opt.chunks >= 0, "--chunks", "an integer >= 0", std::to_string(opt.chunks));
    if (opt.torus_given)
      shape = looks_like_file(opt.torus_spec) ? topo::torus::load(opt.torus_spec) : topo::torus::parse(opt.torus_spec);
  });

  std::optional<topo::mapping> layout;
  std::string source;
  nlohmann::json node_json;
  int ranks_per_node = 0;
  if (!shape) {
    layout = topo::derive_mapping(comm);
    shape = layout->shape();
    source = fmt::format("derived for this job of {} rank(s)", size);
    ranks_per_node = shape->ndims() == 2 ? (*shape)[0].extent : 0;
  }
  const bool live = size > 1 || shape->size() == 1 || !opt.torus_given;
  const bool map_is_file = !opt.map.empty() && opt.map != "cart" && looks_like_file(opt.map);
  std::optional<topo::cart> cart;
  if (live) {
    // The torus describes this job: it must have one node per rank, checked on every rank.
    if (opt.map == "cart") {
      cart.emplace(topo::cart::create(comm, *shape, true));
      layout = cart->layout();
      source = "MPI_Cart_create (reorder)";
    } else if (map_is_file) {
      layout = topo::load_mapping(comm, *shape, opt.map);
      source = "map file " + opt.map;
    } else if (!opt.map.empty() || !layout) {
      layout = topo::make_mapping(comm, *shape, opt.map);
      if (source.empty()) source = opt.map.empty() ? "default (rank r on node r)" : "--map " + opt.map;
    }
    if (!cart) cart.emplace(comm, *layout);  // builds and checks the line and plane communicators
  } else {
    toru::validate_collectively(comm, [&] {
      if (opt.map == "cart")
        throw toru::error(toru::errc::invalid_argument,
                          fmt::format("--map cart: expected a job of {} ranks to call MPI_Cart_create on, got {}",
                                      shape->size(), size));
      if (map_is_file)
        layout = topo::mapping::from_file(*shape, opt.map);
      else if (!opt.map.empty())
        layout = topo::mapping::from_order(*shape, opt.map);
      else if (shape->size() <= (1 << 22))
        layout = topo::mapping::identity(*shape);
    });
    source = opt.map.empty() ? "default (rank r on node r)" : map_is_file ? "map file " + opt.map : "--map " + opt.map;
    source += " (offline: evaluated by one process)";
  }
  if (opt.node || !opt.torus_given) node_json = topo::probe_node().to_json();
  if (rank != 0) return 0;

  const topo::torus& t = *shape;
  topo::alltoall_model model;
  const double model_seconds = median_seconds(opt.repeat, [&] { model = topo::alltoall_loads(t, bytes); });
  // The peer of the closed form: route every message of the all-to-all explicitly.
  std::optional<topo::load_map> routed;
  double routed_seconds = 0;
  if (opt.explicit_routes) {
    toru::expect(t.size() <= 4096, "--explicit", "a torus of at most 4096 nodes (P^2 messages are routed)",
                 std::to_string(t.size()) + " nodes");
    routed_seconds = median_seconds(3, [&] { routed = topo::link_loads(t, topo::alltoall_pattern(t, bytes)); });
  }
  const int longest = t.longest_axis();
  const double per_node = model.bound_seconds > 0 ? static_cast<double>(t.size() - 1) * bytes / model.bound_seconds : 0;
  std::optional<double> indirect;
  double simulate_seconds = 0;
  if (opt.chunks > 0)
    simulate_seconds =
        median_seconds(std::min(opt.repeat, 5), [&] { indirect = simulate_indirect(t, bytes, opt.chunks, alpha); });

  if (opt.json) {
    nlohmann::json axes = nlohmann::json::array();
    for (int i = 0; i < t.ndims(); ++i) {
      const auto ui = static_cast<std::size_t>(i);
      axes.push_back({{"name", t[i].name},
                      {"extent", t[i].extent},
                      {"kind", kind_of(t[i])},
                      {"bandwidth", t[i].bandwidth},
                      {"latency", t[i].latency},
                      {"effective_extent", topo::effective_extent(t[i])},
                      {"load", model.link_bytes[ui]},
                      {"seconds", model.seconds[ui]},
                      {"busy_fraction", model.bound_seconds > 0 ? model.seconds[ui] / model.bound_seconds : 0.0}});
    }
    const auto net = topo::selected_network_model(t);
    nlohmann::json j{{"torus", t.to_string()},
                     {"network_model", {{"transport", net.name}, {"version", net.version}}},
                     {"nodes", t.size()},
                     {"ranks", size},
                     {"alltoall_bytes", bytes},
                     {"longest_axis", longest},
                     {"longest_axis_name", t[longest].name},
                     {"bound_seconds", model.bound_seconds},
                     {"per_node_bandwidth", per_node},
                     {"axes", axes},
                     {"latency_floor_seconds",
                      {{"alpha", alpha},
                       {"direct", topo::alltoall_latency_direct(t, alpha)},
                       {"indirect", topo::alltoall_latency_indirect(t, alpha)}}},
                     {"mapping", {{"source", source}, {"layout", layout ? layout->describe() : "identity"}}}};
    if (layout && layout->nranks() <= 4096) j["mapping"]["coords"] = layout->to_json();
    if (ranks_per_node > 0) j["mapping"]["ranks_per_node"] = ranks_per_node;
    if (indirect)
      j["indirect_pipelined"] = {{"chunks", opt.chunks},
                                 {"seconds", *indirect},
                                 {"percent_of_bound", *indirect > 0 ? 100 * model.bound_seconds / *indirect : 0.0}};
    j["timing"] = {{"closed_form_seconds", model_seconds}, {"repeats", opt.repeat}};
    if (indirect) j["timing"]["simulate_seconds"] = simulate_seconds;
    if (routed) {
      j["explicit"] = {{"bound_seconds", routed->seconds},
                       {"axis_max", routed->axis_max},
                       {"route_seconds", routed_seconds},
                       {"agrees", std::abs(routed->seconds - model.bound_seconds) <= 1e-9 * model.bound_seconds}};
    }
    if (!node_json.is_null()) j["node"] = node_json;
    std::cout << j.dump(2) << std::endl;
    return 0;
  }

  fmt::print("torus      {} ({} nodes, {} axes){}\n", t.to_string(), t.size(), t.ndims(),
             live ? fmt::format(", job of {} rank(s)", size) : "");
  fmt::print("mapping    {} [{}]\n", source, layout ? layout->describe() : "identity");
  {
    const auto net = topo::selected_network_model(t);
    fmt::print("network    {} model ({}): {}\n", net.name,
               net.name == "credit" ? "HPC torus, lossless links" : "Ethernet, TCP; transport=credit for an HPC torus",
               net.version);
  }
  if (layout) {
    const int show = std::min(layout->nranks(), 8);
    for (int r = 0; r < show; ++r)
      fmt::print("             rank {:>4} -> ({})\n", r, fmt::join(layout->coords(r), ","));
    if (show < layout->nranks()) fmt::print("             ... {} more\n", layout->nranks() - show);
  }
  fmt::print("\nall-to-all of {} per pair ({} bytes), every node to every node:\n", topo::format_bytes(bytes), bytes);
  fmt::print("  {:<4} {:<6} {:>6} {:<6} {:>11} {:>9} {:>8} {:>12} {:>11} {:>6}\n", "axis", "name", "extent", "kind",
             "bandwidth", "latency", "eff.ext", "link load", "time", "busy");
  for (int i = 0; i < t.ndims(); ++i) {
    const auto ui = static_cast<std::size_t>(i);
    fmt::print("  {:<4} {:<6} {:>6} {:<6} {:>11} {:>9} {:>8.4g} {:>12} {:>11} {:>5.0f}%{}\n", i, t[i].name, t[i].extent,
               kind_of(t[i]), topo::format_bandwidth(t[i].bandwidth), topo::format_time(t[i].latency),
               topo::effective_extent(t[i]), topo::format_bytes(model.link_bytes[ui]),
               topo::format_time(model.seconds[ui]),
               model.bound_seconds > 0 ? 100 * model.seconds[ui] / model.bound_seconds : 0.0,
               i == longest ? "  <- longest" : "");
  }
  fmt::print("  bound T_min = {} (longest axis {}), per-node all-to-all bandwidth {}\n",
             topo::format_time(model.bound_seconds), t[longest].name, topo::format_bandwidth(per_node));
  fmt::print("  latency floor with alpha = {}: direct {}, two-phase indirect {}\n", topo::format_time(alpha),
             topo::format_time(topo::alltoall_latency_direct(t, alpha)),
             topo::format_time(topo::alltoall_latency_indirect(t, alpha)));
  if (indirect)
    fmt::print("  simulated two-phase indirect all-to-all, {} chunks: {} = {:.1f}% of bound\n", opt.chunks,
               topo::format_time(*indirect), *indirect > 0 ? 100 * model.bound_seconds / *indirect : 0.0);
  fmt::print("  closed form evaluated in {} (median of {})\n", topo::format_time(model_seconds), opt.repeat);
  if (indirect) fmt::print("  simulation ran in {}\n", topo::format_time(simulate_seconds));
  if (routed)
    fmt::print("  explicit routing of all {} messages: bound {} in {} ({:.0f}x the closed form's time), {}\n",
               t.size() * (t.size() - 1), topo::format_time(routed->seconds), topo::format_time(routed_seconds),
               model_seconds > 0 ? routed_seconds / model_seconds : 0.0,
               std::abs(routed->seconds - model.bound_seconds) <= 1e-9 * model.bound_seconds ? "agrees" : "DISAGREES");
  if (!node_json.is_null())
    fmt::print(
        "\nnode (rank 0, hwloc): {} - {} package(s), {} NUMA node(s), {} cores, {} PUs, {} GPU device(s), {} NIC(s)\n",
        node_json["hostname"].get<std::string>(), node_json["packages"].get<int>(), node_json["numa_nodes"].get<int>(),
        node_json["cores"].get<int>(), node_json["pus"].get<int>(), node_json["gpus"].size(), node_json["nics"].size());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  toru::set_error_rank(rank);

  CLI::App app{"toru-topo: the torus model, rank mapping and all-to-all bound of toru", "toru-topo"};
  options opt;
  auto* torus_option =
      app.add_option("--torus", opt.torus_spec, "Torus spec (see below) or JSON file; default: this job's layout");
  auto* map_option = app.add_option("--map", opt.map, "Rank mapping: an order string (XYZ), a map file, or 'cart'");
  app.add_option("--alltoall-bytes", opt.bytes_text, "Bytes per rank pair (64KiB, 1MB, ...)")->capture_default_str();
  app.add_option("--alpha", opt.alpha_text, "Per-message start-up time for latency floors and --chunks (2us)")
      ->capture_default_str();
  app.add_option("--chunks", opt.chunks, "Simulate the pipelined two-phase all-to-all with this many chunks");
  app.add_flag("--explicit", opt.explicit_routes,
               "Also route every message explicitly (tori up to 4096 nodes) and compare with the closed form");
  app.add_option("--repeat", opt.repeat, "Repetitions for the timing of the closed form (median)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_flag("--node", opt.node, "Show the hwloc view of rank 0's node");
  app.add_flag("--json", opt.json, "Print JSON for scripts instead of text");
  app.footer(footer);

  const int rc = toru::apps::run_cli(
      app, argc, argv,
      [&] {
        opt.torus_given = torus_option->count() > 0;
        opt.map_given = map_option->count() > 0;
        return run(opt, MPI_COMM_WORLD);
      },
      rank);
  MPI_Finalize();
  return rc;
}
