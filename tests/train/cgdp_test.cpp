// SPDX-License-Identifier: BSD-3-Clause
// The CGDP engine against the allreduce engine and a serial reference: on one node, cgdp and
// cgdp-sum give the weights of data_parallel (ordered) + optimizer bit for bit, for every chunk
// size and optimizer; the host sum and update equal the serial rank-order sum and the optimizer
// applied to it; with emulated nodes (a per-node association of the sum) they agree to rounding.
// Rank agreement of the chunking, and bad input (chunk sizes, host memory) failing on every rank.
#include "toru/train/cgdp.hpp"
#include "toru/train/cgdp_cost.hpp"
#include "toru/train/chunk_search.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>

#include "mpi_test.hpp"
#include "toru/core/device.hpp"
#include "toru/core/error.hpp"
#include "toru/swap/models.hpp"
#include "toru/train/data.hpp"
#include "toru/train/data_parallel.hpp"
#include "toru/train/forward_hook.hpp"
#include "toru/train/host_sum.hpp"
#include "toru/train/model.hpp"
#include "toru/train/optimizer.hpp"

namespace {

using namespace toru::train;

// Nine layers of awkward sizes (weight + bias slots, primes, one-element ones), like a model's.
std::vector<parameter_slot> make_slots() {
  const std::int64_t counts[][2] = {{7, 1},  {1031, 13}, {4099, 3}, {257, 1}, {61, 0},
                                    {11, 2}, {509, 5},   {3, 1},    {97, 7}};
  std::vector<parameter_slot> slots;
  std::int64_t offset = 0;
  int op = 0;
  for (const auto& c : counts) {
    for (std::int64_t n : c) {
      if (n == 0) continue;
      slots.push_back({.name = "p" + std::to_string(slots.size()),
                       .shape = {n},
                       .offset = offset,
                       .count = n,
                       .first_forward_op = op});
      offset += n;
    }
    op += 2;
  }
  return slots;
}

std::int64_t extent(const std::vector<parameter_slot>& s) { return s.back().offset + s.back().count; }

std::vector<float> gradient(int r, std::int64_t n, unsigned step) {
  std::mt19937 rng(1000u * static_cast<unsigned>(r) + step);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> g(static_cast<std::size_t>(n));
  for (auto& x : g) x = u(rng) * std::pow(10.0f, static_cast<float>(rng() % 7) - 3);
  return g;
}

std::vector<float> initial(std::int64_t n) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> p(static_cast<std::size_t>(n));
  for (auto& x : p) x = u(rng);
  return p;
}

constexpr int steps = 3;
double lr_of(int s) { return 0.05 / (1 + s); }

optimizer_options opt_of(optimizer_kind k) {
  return {.kind = k, .lr = k == optimizer_kind::adam ? 1e-3 : 0.05, .weight_decay = 1e-4};
}

// Serial reference: sum over ranks in rank order, / P, the optimizer on the whole buffer.
std::vector<float> reference(const std::vector<parameter_slot>& slots, optimizer_kind k, int nranks) {
  const auto n = extent(slots);
  auto p = initial(n);
  optimizer opt(opt_of(k), n);
  for (int s = 0; s < steps; ++s) {
    auto sum = gradient(0, n, static_cast<unsigned>(s));
    for (int r = 1; r < nranks; ++r) {
      const auto g = gradient(r, n, static_cast<unsigned>(s));
      for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += g[i];
    }
    for (auto& x : sum) x /= static_cast<float>(nranks);
    opt.step(p, sum, lr_of(s));
  }
  return p;
}

std::vector<float> run_allreduce(const toru::comm::communicator& comm, const std::vector<parameter_slot>& slots,
                                 optimizer_kind k) {
  const auto n = extent(slots);
  auto p = initial(n);
  data_parallel dp(comm, slots, memory_space::host, {.bucket_bytes = 4000, .first_bucket_bytes = 400});
  optimizer opt(opt_of(k), n);
  for (int s = 0; s < steps; ++s) {
    auto g = gradient(comm.rank(), n, static_cast<unsigned>(s));
    dp.begin_step(g);
    for (int i = static_cast<int>(slots.size()) - 1; i >= 0; --i) dp.gradient_ready(i);
    dp.finish();
    opt.step(p, g, lr_of(s));
  }
  return p;
}

// per_op: a forward's ops (0..2 per layer, make_slots' numbering) call before_forward_op, as the
// forward hook does; otherwise acquire_weights takes every chunk before the step.
std::vector<float> run_cgdp(const toru::comm::communicator& comm, const std::vector<parameter_slot>& slots,
                            optimizer_kind k, cgdp_options o, bool per_op = false) {
  const auto n = extent(slots);
  auto p = initial(n);
  o.bind_helpers = false;  // hwloc's topology load per engine would dominate; binding is tested below
  cgdp eng(comm, slots, memory_space::host, p, opt_of(k), o);
  for (int s = 0; s < steps; ++s) {
    if (per_op)
      for (int op = 0; op <= slots.back().first_forward_op + 1; ++op) eng.before_forward_op(op, p);
    else
      eng.acquire_weights(p);
    auto g = gradient(comm.rank(), n, static_cast<unsigned>(s));
    eng.begin_step(s, lr_of(s), g);
    for (int i = static_cast<int>(slots.size()) - 1; i >= 0; --i) eng.gradient_ready(i);
    eng.end_backward();
  }
  eng.acquire_weights(p);
  return p;
}

TEST(Cgdp, ChunksCoverTheLayersWithTheLastLayerAlone) {
  const auto slots = make_slots();
  const auto layers = group_layers(slots);
  ASSERT_EQ(layers.size(), 9u);
  EXPECT_EQ(layers[4].first_slot, layers[4].last_slot);  // a weight without bias
  for (int k = 1; k <= 8; ++k) {
    const auto sizes = uniform_chunking(9, k);
    const auto chunks = make_chunks(layers, sizes);
    EXPECT_EQ(chunks.back().first_layer, 8);
    EXPECT_EQ(chunks.back().last_layer, 8);
    std::int64_t total = 0;
    for (std::size_t c = 0; c < chunks.size(); ++c) {
      total += chunks[c].count;
      if (c > 0) {
        EXPECT_EQ(chunks[c].first_layer, chunks[c - 1].last_layer + 1);
      }
      if (c + 1 < chunks.size() && c > 0) {
        EXPECT_EQ(chunks[c].last_layer - chunks[c].first_layer + 1, k);
      }
    }
    EXPECT_EQ(total, extent(slots));
    EXPECT_LE(chunks.front().last_layer - chunks.front().first_layer + 1, k);  // the remainder is input-side
  }
  EXPECT_THROW(uniform_chunking(9, 0), toru::error);
  EXPECT_THROW(uniform_chunking(9, 9), toru::error);
  const int bad[] = {3, 3};
  EXPECT_THROW(make_chunks(layers, bad), toru::error);
}

TEST(Cgdp, HostSumAndUpdateEqualTheSerialReferenceAndTheAllreduceEngineForEveryChunking) {
  toru::comm::communicator comm(MPI_COMM_WORLD, {.threads = 0});
  const auto slots = make_slots();
  for (auto k : {optimizer_kind::sgd, optimizer_kind::momentum, optimizer_kind::adam}) {
    const auto want = reference(slots, k, comm.size());
    const auto ar = run_allreduce(comm, slots, k);
    ASSERT_EQ(ar, want) << "allreduce engine " << to_string(k);
    for (int chunk = 1; chunk <= 8; ++chunk) {
      for (bool host_update : {true, false})
        for (bool per_op : {false, true}) {
          const auto got = run_cgdp(comm, slots, k, {.chunk_layers = chunk, .host_update = host_update}, per_op);
          ASSERT_EQ(got, want) << (host_update ? "cgdp" : "cgdp-sum") << " chunk " << chunk << " " << to_string(k)
                               << (per_op ? " per op" : "");
        }
    }
    // Irregular chunk sizes too.
    const auto got = run_cgdp(comm, slots, k, {.chunk_sizes = {1, 4, 2, 1}});
    ASSERT_EQ(got, want) << "chunks 1+4+2+1 " << to_string(k);
  }
}

TEST(Cgdp, EmulatedNodesAgreeToRounding) {
  toru::comm::communicator comm(MPI_COMM_WORLD, {.threads = 0});
  const auto slots = make_slots();
  // One rank per node: the sum goes through the helpers' cross-node allgather in node order,
  // which is rank order again (bitwise); two ranks per node reassociate it.
  for (int per_node : {1, 2}) {
    if (comm.size() % per_node) continue;
    for (auto k : {optimizer_kind::sgd, optimizer_kind::momentum}) {
      const auto want = reference(slots, k, comm.size());
      cgdp_options o{.chunk_layers = 3, .ranks_per_node = per_node};
      const auto got = run_cgdp(comm, slots, k, o);
      if (per_node == 1 || comm.size() <= 2) {
        EXPECT_EQ(got, want) << per_node << " per node";
      } else {
        // Bound per element: each step's sum is reassociated once (P - 1 additions, a relative
        // error of a few eps of sum |g_r|), scaled by lr and by momentum's carry (< 3 over 3 steps),
        // plus the rounding of the weight itself. A lost or doubled rank breaks it by orders.
        const auto n = extent(slots);
        std::vector<double> scale(want.size(), 0);
        for (int s = 0; s < steps; ++s)
          for (int r = 0; r < comm.size(); ++r) {
            const auto g = gradient(r, n, static_cast<unsigned>(s));
            for (std::size_t i = 0; i < scale.size(); ++i) scale[i] += lr_of(s) * std::abs(g[i]);
          }
        double worst = 0, differ = 0;
        for (std::size_t i = 0; i < want.size(); ++i) {
          const double e = std::abs(static_cast<double>(got[i]) - want[i]);
          worst = std::max(worst, e / (3 * 4 * 1.2e-7 * scale[i] + 2.4e-7 * std::abs(want[i])));
          differ = std::max(differ, e);
        }
        EXPECT_LE(worst, 1.0) << per_node << " per node";
        worst = differ;
        EXPECT_GT(worst, 0.0) << "expected the per-node association to differ somewhere (test data too tame)";
      }
    }
  }
}

TEST(Cgdp, RankZerosChunkingWinsAndOthersAreOverruled) {
  toru::comm::communicator comm(MPI_COMM_WORLD, {.threads = 0});
  const auto slots = make_slots();
  const auto p = initial(extent(slots));
  cgdp_options o{.chunk_layers = comm.rank() == 0 ? 2 : 5};
  cgdp eng(comm, slots, memory_space::host, p, opt_of(optimizer_kind::sgd), o);
  EXPECT_EQ(eng.chunk_sizes(), uniform_chunking(9, 2));
  EXPECT_EQ(eng.overruled(), comm.rank() != 0);
  EXPECT_FALSE(eng.binding().empty());
}

TEST(Cgdp, BadChunkSizeOnOneRankIsEveryRanksError) {
  toru::comm::communicator comm(MPI_COMM_WORLD, {.threads = 0});
  const auto slots = make_slots();
  const auto p = initial(extent(slots));
  const int last = comm.size() - 1;
  for (int bad : {0, 9, -3}) {
    try {
      cgdp eng(comm, slots, memory_space::host, p, opt_of(optimizer_kind::sgd),
               {.chunk_layers = comm.rank() == last ? bad : 2});
      FAIL() << "no error for chunk_layers " << bad;
    } catch (const toru::error& e) {
      EXPECT_EQ(e.code(), toru::errc::invalid_argument);
      EXPECT_NE(std::string(e.what()).find("chunk_layers"), std::string::npos) << e.what();
      EXPECT_EQ(e.rank(), last);
    }
  }
}

// Explicit sizes: a wrong total or a size below 1 on one rank is every rank's error naming them.
TEST(Cgdp, BadChunkSizesOnOneRankAreEveryRanksError) {
  toru::comm::communicator comm(MPI_COMM_WORLD, {.threads = 0});
  const auto slots = make_slots();
  const auto p = initial(extent(slots));
  const int last = comm.size() - 1;
  for (const std::vector<int>& bad : {std::vector<int>{4, 3}, {8, 0}, {9, -1}, {4, 4, 1}}) {
    try {
      cgdp eng(comm, slots, memory_space::host, p, opt_of(optimizer_kind::sgd),
               {.chunk_sizes = comm.rank() == last ? bad : std::vector<int>{4, 4}});
      FAIL() << "no error for chunk sizes of " << bad.size();
    } catch (const toru::error& e) {
      EXPECT_EQ(e.code(), toru::errc::invalid_argument);
      EXPECT_NE(std::string(e.what()).find("chunk sizes"), std::string::npos) << e.what();
      EXPECT_EQ(e.rank(), last);
    }
  }
}

// The message gives what the node needs, by part, against the budget; every rank gets the same.
TEST(Cgdp, TooLittleHostMemorySaysHowMuchIsNeededOnEveryRank) {
  toru::comm::communicator comm(MPI_COMM_WORLD, {.threads = 0});
  const std::int64_t n = 1 << 20;  // 4 MiB of weights: the parts print as whole MiB
  const std::vector<parameter_slot> slots{{.name = "w", .shape = {n}, .offset = 0, .count = n, .first_forward_op = 0},
                                          {.name = "b", .shape = {1}, .offset = n, .count = 1, .first_forward_op = 1}};
  const std::vector<float> p(static_cast<std::size_t>(n + 1), 0.5f);
  std::string w;
  try {
    cgdp eng(comm, slots, memory_space::host, p, opt_of(optimizer_kind::adam),
             {.bind_helpers = false, .host_memory_bytes = 8 << 20});
    FAIL() << "no error";
  } catch (const toru::error& e) {
    EXPECT_EQ(e.code(), toru::errc::out_of_memory);
    w = e.what();
  }
  // Master weights and the averaged gradient 4 MiB each, Adam's two words per weight 8 MiB, one
  // gradient copy per rank of the node; 16 + 4 P MiB in all (plus the counters' cache lines).
  const int P = comm.size();
  for (const std::string& part :
       {std::string("master weights 4.0 MiB"), std::string("optimizer state 8.0 MiB"),
        std::string("averaged gradient 4.0 MiB"), fmt::format("gradient window {:.1f} MiB for {} ranks", 4.0 * P, P),
        fmt::format("this node needs {:.1f} MiB", 16.0 + 4.0 * P), std::string("8.0 MiB available (the given budget)")})
    EXPECT_NE(w.find(part), std::string::npos) << "missing '" << part << "' in: " << w;
  int len = static_cast<int>(w.size()), lo = len, hi = len;
  MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  ASSERT_EQ(lo, hi) << w;
  std::vector<char> all(static_cast<std::size_t>(len * P));
  MPI_Allgather(w.data(), len, MPI_CHAR, all.data(), len, MPI_CHAR, MPI_COMM_WORLD);
  for (int r = 0; r < P; ++r)
    EXPECT_EQ(std::string(all.data() + static_cast<std::ptrdiff_t>(r) * len, static_cast<std::size_t>(len)), w)
        << "rank " << r;
}

TEST(Cgdp, DeviceMemoryWithoutAGpuIsEveryRanksError) {
  if (toru::gpu_count() > 0) GTEST_SKIP() << "a CUDA device is visible (cgdp_device_gpu_test covers the device path)";
  toru::comm::communicator comm(MPI_COMM_WORLD, {.threads = 0});
  const auto slots = make_slots();
  const auto p = initial(extent(slots));
  try {
    cgdp eng(comm, slots, memory_space::device, p, opt_of(optimizer_kind::sgd), {.chunk_layers = 2});
    FAIL() << "no error";
  } catch (const toru::error& e) {
    // no_device where the CUDA path is built, unsupported where it is not; the same on every rank.
    EXPECT_TRUE(e.code() == toru::errc::no_device || e.code() == toru::errc::unsupported) << e.what();
    const std::string w = e.what();
    EXPECT_TRUE(w.find("no CUDA device") != std::string::npos ||
                w.find("without the CUDA toolkit") != std::string::npos)
        << w;
    int code = static_cast<int>(e.code()), lo = code, hi = code;
    MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    EXPECT_EQ(lo, hi);
  }
  // cgdp-sum steps on the workers' host buffers: refused with a device model, GPU or not.
  EXPECT_THROW(cgdp(comm, slots, memory_space::device, p, opt_of(optimizer_kind::sgd), {.host_update = false}),
               toru::error);
}

// Checkpoints: the state gathered from the helpers equals the serial optimizer's after two steps,
// and engines started from it (and the weights) finish the third step as the serial run does.
TEST(Cgdp, OptimizerStateGathersAndResumesBitwise) {
  toru::comm::communicator comm(MPI_COMM_WORLD, {.threads = 0});
  const auto slots = make_slots();
  const auto n = extent(slots);
  for (auto k : {optimizer_kind::momentum, optimizer_kind::adam}) {
    // Serial: two steps, the state, then the third.
    auto want_p = initial(n);
    optimizer ref(opt_of(k), n);
    std::vector<float> want_state, want_p2;
    for (int s = 0; s < steps; ++s) {
      if (s == 2) {
        want_state.assign(ref.state().begin(), ref.state().end());
        want_p2 = want_p;
      }
      auto sum = gradient(0, n, static_cast<unsigned>(s));
      for (int r = 1; r < comm.size(); ++r) {
        const auto g = gradient(r, n, static_cast<unsigned>(s));
        for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += g[i];
      }
      for (auto& x : sum) x /= static_cast<float>(comm.size());
      ref.step(want_p, sum, lr_of(s));
    }
    for (bool host_update : {true, false}) {
      const char* what = host_update ? "cgdp" : "cgdp-sum";
      auto p = initial(n);
      std::vector<float> state;
      std::int64_t taken = 0;
      {
        cgdp eng(comm, slots, memory_space::host, p, opt_of(k),
                 {.chunk_layers = 3, .host_update = host_update, .bind_helpers = false});
        for (int s = 0; s < 2; ++s) {
          eng.acquire_weights(p);
          auto g = gradient(comm.rank(), n, static_cast<unsigned>(s));
          eng.begin_step(s, lr_of(s), g);
          for (int i = static_cast<int>(slots.size()) - 1; i >= 0; --i) eng.gradient_ready(i);
          eng.end_backward();
        }
        eng.acquire_weights(p);
        state = eng.optimizer_state(taken);
      }
      ASSERT_EQ(p, want_p2) << what << " " << to_string(k);
      ASSERT_EQ(taken, 2) << what;
      ASSERT_EQ(state, want_state) << what << " " << to_string(k);
      // Resume with another chunking: the state is per element.
      cgdp eng(comm, slots, memory_space::host, p, opt_of(k),
               {.chunk_layers = 2, .host_update = host_update, .bind_helpers = false});
      EXPECT_THROW(eng.set_optimizer_state(std::span(state).first(state.size() - 1), taken), toru::error);
      eng.set_optimizer_state(state, taken);
      auto g = gradient(comm.rank(), n, 2);
      eng.begin_step(2, lr_of(2), g);
      eng.end_backward();
      eng.acquire_weights(p);
      ASSERT_EQ(p, want_p) << what << " resumed " << to_string(k);
    }
  }
}

TEST(Cgdp, AbandonedStepDoesNotHang) {
  toru::comm::communicator comm(MPI_COMM_WORLD, {.threads = 0});
  const auto slots = make_slots();
  auto p = initial(extent(slots));
  auto g = gradient(comm.rank(), extent(slots), 0);
  {
    cgdp eng(comm, slots, memory_space::host, p, opt_of(optimizer_kind::sgd));
    eng.begin_step(0, 0.1, g);
    eng.gradient_ready(static_cast<int>(slots.size()) - 1);  // one chunk posted, the rest never
  }                                                          // the helper is stopped and joined
  MPI_Barrier(MPI_COMM_WORLD);
}

// A real model: CGDP and the allreduce engine give bit-identical weights (mlp, 4 steps). `hook`:
// the forward takes each chunk as it reaches it (the forward hook) instead of acquire_weights
// taking them all before it; `taken` (if given) records the order of takes ('t', chunk) and
// forward ops ('o', op).
std::vector<float> train_model(const toru::comm::communicator& comm, engine_kind e, int chunk, bool hook = false,
                               std::vector<std::pair<char, int>>* taken = nullptr) {
  const std::int64_t global = 12, local = global / comm.size();
  model m(toru::swap::build_model("mlp", {.batch = local, .height = 28, .width = 28}), {.threads = 1, .seed = 5});
  auto data = make_synthetic({1, 28, 28}, m.classes(), 48, 17);
  sample_order order(data->size(), global, 3);
  const optimizer_options oo{.kind = optimizer_kind::momentum, .lr = 0.05, .weight_decay = 1e-4};
  std::optional<data_parallel> dp;
  std::optional<optimizer> opt;
  std::optional<cgdp> cg;
  if (e == engine_kind::allreduce) {
    dp.emplace(comm, m.parameters(), m.space());
    opt.emplace(oo, m.parameter_count());
  } else {
    cgdp_options co{.chunk_layers = chunk, .host_update = e == engine_kind::cgdp};
    if (taken) co.on_take = [taken](std::size_t c) { taken->emplace_back('t', static_cast<int>(c)); };
    cg.emplace(comm, m.parameters(), m.space(), m.parameter_data(), oo, co);
    if (hook)
      set_forward_hook(m, [&](int op) {
        cg->before_forward_op(op, m.parameter_data());
        if (taken) taken->emplace_back('o', op);
      });
  }
  std::vector<float> x(static_cast<std::size_t>(local * 784));
  std::vector<std::int32_t> y(static_cast<std::size_t>(local));
  for (int s = 0; s < 4; ++s) {
    if (cg) {
      if (!hook) cg->acquire_weights(m.parameter_data());
      m.parameters_changed();
    }
    data->read(order.shard(0, s, comm.rank(), comm.size()), x, y);
    m.forward(x, y, {.training = true, .step = static_cast<std::uint64_t>(s), .first_sample = s * global});
    if (dp) {
      dp->begin_step(m.gradient_data());
      m.backward([&](int slot) { dp->gradient_ready(slot); });
      dp->finish();
      opt->step(m.parameter_data(), m.gradient_data(), 0.05);
      m.parameters_changed();
    } else {
      cg->begin_step(s, 0.05, m.gradient_data());
      m.backward([&](int slot) { cg->gradient_ready(slot); });
      cg->end_backward();
    }
  }
  if (cg) cg->acquire_weights(m.parameter_data());
  set_forward_hook(m, {});
  return {m.parameter_data().begin(), m.parameter_data().end()};
}

TEST(Cgdp, RealModelMatchesTheAllreduceEngineBitwise) {
  toru::comm::communicator comm(MPI_COMM_WORLD, {.threads = 0});
  const auto want = train_model(comm, engine_kind::allreduce, 0);
  for (int chunk : {1, 2})
    for (auto e : {engine_kind::cgdp, engine_kind::cgdp_sum})
      for (bool hook : {false, true})
        EXPECT_EQ(train_model(comm, e, chunk, hook), want)
            << to_string(e) << " chunk " << chunk << (hook ? " forward hook" : " acquire_weights");
}

// The forward waits per chunk: each chunk of the last step's update is taken right before the
// first forward op that reads it, after the ops of the chunks before it have run, and never
// before the forward reaches it (acquire_weights up front would take them all before op 0).
TEST(Cgdp, ForwardTakesEachChunkOnlyWhenItReachesIt) {
  toru::comm::communicator comm(MPI_COMM_WORLD, {.threads = 0});
  for (auto e : {engine_kind::cgdp, engine_kind::cgdp_sum}) {
    std::vector<std::pair<char, int>> ev;
    train_model(comm, e, 1, true, &ev);
    model probe(toru::swap::build_model("mlp", {.batch = 12 / comm.size(), .height = 28, .width = 28}), {});
    const auto layers = group_layers(probe.parameters());
    const auto chunks = make_chunks(layers, uniform_chunking(static_cast<int>(layers.size()), 1));
    ASSERT_GE(chunks.size(), 3u);
    // The last step's update is taken after the loop by acquire_weights (no forward follows).
    std::size_t tail = 0;
    while (!ev.empty() && ev.back().first == 't') {
      ev.pop_back();
      ++tail;
    }
    EXPECT_EQ(tail, chunks.size());
    // The forwards of steps 1..3 take every chunk, in forward order, each just before its first op.
    int takes = 0;
    for (std::size_t i = 0; i < ev.size(); ++i) {
      if (ev[i].first != 't') continue;
      const auto c = static_cast<std::size_t>(ev[i].second);
      ASSERT_EQ(c, static_cast<std::size_t>(takes) % chunks.size()) << "takes out of forward order";
      ++takes;
      const int first_op = layers[static_cast<std::size_t>(chunks[c].first_layer)].op;
      ASSERT_LT(i + 1, ev.size());
      EXPECT_EQ(ev[i + 1], std::make_pair('o', first_op)) << to_string(e) << ": chunk " << c << " taken at event " << i;
      if (c > 0) {
        // The forward already ran the ops of the chunk before (the last op recorded before this
        // take belongs to chunk c - 1).
        const int prev_op = layers[static_cast<std::size_t>(chunks[c - 1].first_layer)].op;
        int last_op = -1;
        for (std::size_t k = i; k-- > 0;)
          if (ev[k].first == 'o') {
            last_op = ev[k].second;
            break;
          }
        EXPECT_TRUE(last_op >= prev_op && last_op < first_op)
            << to_string(e) << ": chunk " << c << " taken after op " << last_op << ", expected an op in [" << prev_op
            << ", " << first_op << ")";
      }
    }
    EXPECT_EQ(takes, 3 * static_cast<int>(chunks.size())) << to_string(e);
  }
}

// A synthetic landscape with its optimum at 8 layers: the search finds it from either side,
// evaluates few candidates, and stops.
double landscape(int k) { return 1.0 + std::pow(std::log2(static_cast<double>(k)) - 3.0, 2); }

TEST(ChunkSearch, FindsTheOptimumOfASyntheticLandscapeAndStops) {
  for (int start : {1, 3, 8, 32, 64}) {
    chunk_search s(64, start, {.window = 4, .warmup = 1, .growth = 2});
    int recorded = 0;
    std::mt19937 rng(static_cast<unsigned>(start));
    std::uniform_real_distribution<double> noise(0, 0.05);
    while (!s.done()) {
      // The warm-up step is slow: excluded, or it would hide the optimum.
      const bool warm = recorded % 4 == 0;
      s.record(landscape(s.current()) + noise(rng) + (warm ? 10.0 : 0.0));
      ASSERT_LT(++recorded, 4 * 12) << "the search did not stop from " << start;
    }
    const int best = s.best();
    EXPECT_TRUE(best == 8 || (start == 3 && (best == 6 || best == 12))) << "from " << start << ": " << best;
    EXPECT_EQ(s.current(), best);
    EXPECT_LE(s.log().size(), 6u) << "from " << start;
  }
  EXPECT_THROW(chunk_search(8, 1, {.window = 2, .warmup = 2}), toru::error);
  EXPECT_THROW(chunk_search(8, 1, {.growth = 1}), toru::error);
  EXPECT_THROW(chunk_search(0, 1), toru::error);
}

TEST(HostSum, OnePassEqualsCopyAddDivideBitwiseOnAwkwardSizes) {
  // The helpers' kernel against the plain copy, add in rank order, divide it replaced; sizes
  // around its 4096-float block, a prime, one element and none; the output aliasing input 0.
  std::mt19937 gen(17);
  std::uniform_real_distribution<float> dist(-1e3f, 1e3f);
  for (const std::size_t len :
       {std::size_t{0}, std::size_t{1}, std::size_t{4095}, std::size_t{4097}, std::size_t{10007}})
    for (const int copies : {1, 3, 4}) {
      std::vector<std::vector<float>> g(static_cast<std::size_t>(copies), std::vector<float>(len));
      for (auto& v : g)
        for (auto& x : v) x = dist(gen);
      std::vector<const float*> in;
      for (const auto& v : g) in.push_back(v.data());
      for (const float divisor : {1.0f, 3.0f, static_cast<float>(copies)}) {
        std::vector<float> want = g[0];
        for (int r = 1; r < copies; ++r)
          for (std::size_t k = 0; k < len; ++k) want[k] += g[static_cast<std::size_t>(r)][k];
        if (divisor != 1.0f)
          for (auto& x : want) x /= divisor;
        std::vector<float> out(len, std::nanf(""));
        sum_in_order(out.data(), in, len, divisor);
        EXPECT_TRUE(len == 0 || std::memcmp(out.data(), want.data(), len * sizeof(float)) == 0)
            << len << " floats, " << copies << " copies, divisor " << divisor;
        auto alias = g;  // out is inputs[0]
        std::vector<const float*> ain;
        for (const auto& v : alias) ain.push_back(v.data());
        sum_in_order(alias[0].data(), ain, len, divisor);
        EXPECT_TRUE(len == 0 || std::memcmp(alias[0].data(), want.data(), len * sizeof(float)) == 0)
            << "aliased, " << len;
      }
    }
  float x = 0;
  EXPECT_THROW(sum_in_order(&x, {}, 1), toru::error);
}

TEST(CostModel, TailAndOverlapByHand) {
  // Three layers of 1 ms backward, 4 MB each, a GPU-like node: copies overlapped.
  std::vector<layer_cost> layers(3, {.forward = 1e-3, .backward = 1e-3, .bytes = 4'000'000});
  machine_model m{.workers = 2,
                  .copies_on_worker = false,
                  .d2h_bytes_per_s = 4e9,
                  .h2d_bytes_per_s = 4e9,
                  .host_sum_bytes_per_s = 8e9,
                  .host_update_s_per_byte = 0.25e-9,
                  .worker_update_s_per_byte = 0.1e-9,
                  .sync_overhead_s = 0,
                  .allreduce_bytes_per_s = 2e9,
                  .allreduce_latency_s = 0};
  const int sizes[] = {1, 1};
  const auto p = predict_cgdp(layers, m, sizes);
  // Per chunk: d2h 1 ms, host sum 2 x 4 MB / 8 GB/s = 1 ms + update 1 ms, h2d 1 ms.
  // Chunk 2 ready at 1 ms, chunk 1 at 2, chunk 0 at 3; link: 1-2, 2-3, 3-4; host: 2-4, 4-6, 6-8.
  EXPECT_NEAR(p.chunks[2].host_end, 4e-3, 1e-12);
  EXPECT_NEAR(p.chunks[0].host_start, 6e-3, 1e-12);
  EXPECT_NEAR(p.chunks[0].weights_ready, 9e-3, 1e-12);
  EXPECT_NEAR(p.tail, 6e-3, 1e-12);  // backward ends at 3 ms, chunk 0's weights at 9 ms
  EXPECT_NEAR(p.step, 3e-3 + 6e-3 + 3e-3, 1e-12);
  // Allreduce: one bucket per layer (1 MB first bucket cap is smaller than a layer), each 4 MB
  // takes 2 (2-1)/2 x 4 MB / 2 GB/s = 2 ms: 1-3, 3-5, 5-7; update 12 MB x 0.1 ns = 1.2 ms.
  const auto a = predict_allreduce(layers, m, 4'000'000, 1 << 20);
  EXPECT_EQ(a.chunks.size(), 3u);
  EXPECT_NEAR(a.step, 3e-3 + 7e-3 + 1.2e-3, 1e-12);
  // No progress while backward computes (CPU workers): the three run 3-5, 5-7, 7-9 after it. Half
  // the rate: the first does 1 ms of its 2 by 3 ms and ends at 4, then 4-6, 6-8.
  auto slow = m;
  slow.allreduce_overlap = 0;
  EXPECT_NEAR(predict_allreduce(layers, slow, 4'000'000, 1 << 20).step, 3e-3 + 9e-3 + 1.2e-3, 1e-12);
  slow.allreduce_overlap = 0.5;
  EXPECT_NEAR(predict_allreduce(layers, slow, 4'000'000, 1 << 20).step, 3e-3 + 8e-3 + 1.2e-3, 1e-12);
  const auto best = best_uniform_chunking(layers, m);
  EXPECT_LE(best.prediction.step, p.step);
}

TEST(CostModel, HelpersWithoutACoreStretchBackwardAndPayTheContendedHandoffByHand) {
  // CPU workers (own copies), 2 workers x 1 thread, three layers of 1 ms and 4 MB: post 1 ms,
  // host 2 x 4 MB / 8 GB/s + 4 MB x 0.25 ns = 2 ms per chunk.
  std::vector<layer_cost> layers(3, {.forward = 1e-3, .backward = 1e-3, .bytes = 4'000'000});
  machine_model m{.workers = 2,
                  .copies_on_worker = true,
                  .d2h_bytes_per_s = 4e9,
                  .h2d_bytes_per_s = 4e9,
                  .host_sum_bytes_per_s = 8e9,
                  .host_update_s_per_byte = 0.25e-9,
                  .sync_overhead_s = 0,
                  .cores = 4,
                  .worker_threads = 1,
                  .contended_sync_s = 0.5e-3};
  const int sizes[] = {1, 1};
  // A core per thread: chunk 2 posted at 2 ms, host 2-4; chunk 1 at 4, host 4-6; chunk 0 at 6,
  // host 6-8. Forward: waits 2 ms for chunk 0, then copy 1 + forward 1 per chunk: 6 + 2 + 6.
  auto p = predict_cgdp(layers, m, sizes);
  EXPECT_EQ(p.helpers_without_core, 0);
  EXPECT_NEAR(p.step, 14e-3, 1e-12);
  // Two cores: both helpers on the workers' cores. Chunk 2: ready 1, posted after its copy at 2
  // (the worker does not wait for the helper), seen 0.5 later: host 2.5-4.5, backward stretched
  // by its 2 to 4. Chunk 1: ready 5, posted 6, host 6.5-8.5, backward to 8. Chunk 0: ready 9,
  // posted 10 when backward has ended (nothing stolen), seen after the free-core handoff (0):
  // host 10-12. Forward: chunk 0 at 12 (tail 2), then 3 x (1 + 1) = 18.
  m.cores = 2;
  p = predict_cgdp(layers, m, sizes);
  EXPECT_EQ(p.helpers_without_core, 1);
  EXPECT_NEAR(p.chunks[2].host_end, 4.5e-3, 1e-12);
  EXPECT_NEAR(p.chunks[0].host_start, 10e-3, 1e-12);
  EXPECT_NEAR(p.tail, 2e-3, 1e-12);
  EXPECT_NEAR(p.step, 18e-3, 1e-12);
  // A busy-core handoff longer than the rest of backward: a waiting helper gets a core when the
  // workers stop computing (10 + 0), so chunks 2, 1 and 0 run 10-12, 12-14, 14-16: tail 6.
  m.contended_sync_s = 100e-3;
  p = predict_cgdp(layers, m, sizes);
  EXPECT_NEAR(p.chunks[2].host_start, 10e-3, 1e-12);
  EXPECT_NEAR(p.chunks[0].host_end, 16e-3, 1e-12);
  EXPECT_NEAR(p.step, 22e-3, 1e-12);
  m.contended_sync_s = 0.5e-3;
  // One core for two workers: each posting copy runs at half the free-core rate (2 ms). Chunk 2
  // posted at 3, backward to 5; chunk 1 posted 8, to 10; chunk 0 posted 13, host 13-15; forward:
  // 15, then 3 x (1 + 1) (the copy in is at the rate measured with every worker copying) = 21.
  m.cores = 1;
  p = predict_cgdp(layers, m, sizes);
  EXPECT_NEAR(p.chunks[0].host_start, 13e-3, 1e-12);
  EXPECT_NEAR(p.step, 21e-3, 1e-12);
  // Three cores: one helper has a core, one shares: half the host work is stolen.
  m.cores = 3;
  p = predict_cgdp(layers, m, sizes);
  EXPECT_EQ(p.helpers_without_core, 0.5);
  EXPECT_GT(p.step, 14e-3);
  EXPECT_LT(p.step, 20e-3);
}

}  // namespace
