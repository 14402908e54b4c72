// SPDX-License-Identifier: BSD-3-Clause
#include "calibrate.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "toru/comm/communicator.hpp"
#include "toru/core/error.hpp"
#include "toru/core/mpi.hpp"
#include "toru/train/data_parallel.hpp"
#include "toru/train/host_sum.hpp"
#include "toru/train/optimizer.hpp"

namespace toru::train::detail {

namespace tt = toru::train;
using clock_type = std::chrono::steady_clock;

void layer_timer::add(tt::model& m, const std::vector<tt::model_layer>& layers) {
  if (sum.empty()) sum.assign(layers.size(), {});
  const auto& times = m.op_times();
  std::size_t l = 0;
  for (const auto& t : times) {
    while (l + 1 < layers.size() && t.op >= layers[l + 1].op) ++l;
    sum[l].forward += t.forward_seconds;
    sum[l].backward += t.backward_seconds;
  }
  for (std::size_t i = 0; i < layers.size(); ++i) sum[i].bytes = layers[i].count * 4;
  ++steps;
}

std::vector<tt::layer_cost> layer_timer::mean() const {
  auto out = sum;
  for (auto& c : out) {
    c.forward /= std::max(steps, 1);
    c.backward /= std::max(steps, 1);
  }
  return out;
}

namespace {

template <class F>
double median_seconds(int reps, F f) {
  std::vector<double> v;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = clock_type::now();
    f();
    v.push_back(std::chrono::duration<double>(clock_type::now() - t0).count());
  }
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double max_over(MPI_Comm comm, double x) {
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_DOUBLE, MPI_MAX, comm), "MPI_Allreduce");
  return x;
}

// A node barrier that sleeps instead of polling (Open MPI's blocking waits keep a core busy), so
// that the rank measuring alone has the node's cores to itself.
void quiet_barrier(MPI_Comm comm) {
  MPI_Request req = MPI_REQUEST_NULL;
  check_mpi(MPI_Ibarrier(comm, &req), "MPI_Ibarrier");
  for (int done = 0;;) {
    check_mpi(MPI_Test(&req, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done) return;
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
}

}  // namespace

tt::machine_model calibrate(MPI_Comm comm, std::int64_t bytes, int local_size, int nodes,
                            const tt::optimizer_options& opt) {
  const auto n = static_cast<std::size_t>(std::max<std::int64_t>(bytes / 4, 1024));
  std::vector<float> a(n, 1.0f), b(n, 2.0f), c(n, 0.5f);
  tt::machine_model m;
  m.workers = local_size;
  m.nodes = nodes;
  m.copies_on_worker = true;
  MPI_Comm node = MPI_COMM_NULL;
  int lr = 0, w = 1;
  check_mpi(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node), "MPI_Comm_split_type");
  MPI_Comm_rank(node, &lr);
  MPI_Comm_size(node, &w);
  auto copy = [&] { std::memcpy(a.data(), b.data(), n * 4); };
  // Posting a chunk: one worker copies while the others compute, so the rate is a free core's
  // (the model divides it by the cores' oversubscription). Measured by one rank a node at a time.
  double alone = 0;
  if (lr == 0) alone = median_seconds(5, copy);
  quiet_barrier(node);
  alone = max_over(comm, alone);
  m.d2h_bytes_per_s = static_cast<double>(n * 4) / alone;
  // Taking the weights back and the allreduce engine's update: every worker at once, as they run.
  m.h2d_bytes_per_s = static_cast<double>(n * 4) / max_over(comm, median_seconds(5, copy));
  tt::optimizer o(opt, static_cast<std::int64_t>(n));
  const double upd = max_over(comm, median_seconds(5, [&] { o.step(a, c, 1e-6); }));
  m.worker_update_s_per_byte = upd / static_cast<double>(n * 4);
  // The helpers' work as the engine runs it: every rank's helper at once on its 1/w of a chunk,
  // the node's w copies summed in one pass (the helpers' own kernel), then its update.
  {
    const std::size_t part = std::max<std::size_t>(n / static_cast<std::size_t>(w), 1024);
    std::vector<std::vector<float>> copies(static_cast<std::size_t>(w), std::vector<float>(part, 1.0f));
    std::vector<const float*> in;
    for (const auto& v : copies) in.push_back(v.data());
    std::vector<float> out(part), master(part, 0.5f);
    const double sum =
        max_over(comm, median_seconds(5, [&] { tt::sum_in_order(out.data(), in, part, static_cast<float>(w)); }));
    m.host_sum_bytes_per_s = static_cast<double>(w) * static_cast<double>(part * 4 * static_cast<std::size_t>(w)) / sum;
    tt::optimizer ho(opt, static_cast<std::int64_t>(part));
    const double hupd = max_over(comm, median_seconds(5, [&] { ho.step(master, out, 1e-6); }));
    m.host_update_s_per_byte = hupd / static_cast<double>(part * 4 * static_cast<std::size_t>(w));
  }
  MPI_Comm_free(&node);
  // The allreduce engine's own reduction (ordered), one bucket of the model's size and one float.
  toru::comm::communicator cm(comm, {.threads = 0});
  auto reduce = [&](std::int64_t count) {
    std::vector<tt::parameter_slot> slot{{.name = "x", .shape = {count}, .offset = 0, .count = count}};
    tt::data_parallel dp(cm, slot, tt::memory_space::host,
                         {.bucket_bytes = count * 4, .first_bucket_bytes = count * 4});
    std::vector<float> g(static_cast<std::size_t>(count), 1.0f);
    return max_over(comm, median_seconds(5, [&] {
                      dp.begin_step(g);
                      dp.gradient_ready(0);
                      dp.finish();
                    }));
  };
  reduce(1);  // warm-up: the first collectives on a fresh communicator set up connections
  const double full = reduce(static_cast<std::int64_t>(n));
  // On a loaded node the one-float time can exceed the full one: keep the fit physical.
  const double lat = std::min(reduce(1), full / 2);
  int p = 1;
  check_mpi(MPI_Comm_size(comm, &p), "MPI_Comm_size");
  m.allreduce_latency_s = lat;
  m.allreduce_bytes_per_s = p > 1 ? 2.0 * (p - 1) / p * static_cast<double>(n * 4) / std::max(full - lat, 1e-9) : 1e30;
  m.internode_bytes_per_s = m.allreduce_bytes_per_s;
  // How much of that reduction proceeds while the workers compute, measured as the engine runs it:
  // the model-sized bucket started, then `full` seconds of compute broken by 16 progress calls (as
  // backward reports slots: here 16 one-float slots), then the wait. On CPU workers Open MPI moves
  // the data only inside those calls and on the workers' own cores.
  if (p > 1) {
    constexpr int calls = 16;
    const auto count = static_cast<std::int64_t>(n);
    std::vector<tt::parameter_slot> slots;
    for (int k = 0; k < calls; ++k)
      slots.push_back({.name = fmt::format("t{}", k), .shape = {1}, .offset = k, .count = 1});
    slots.push_back({.name = "x", .shape = {count}, .offset = calls, .count = count});
    tt::data_parallel dp(cm, slots, tt::memory_space::host,
                         {.bucket_bytes = count * 4, .first_bucket_bytes = count * 4});
    std::vector<float> g(static_cast<std::size_t>(count + calls), 1.0f);
    auto compute = [](double seconds) {
      volatile double x = 1;
      for (const auto t0 = clock_type::now(); std::chrono::duration<double>(clock_type::now() - t0).count() < seconds;)
        for (int i = 0; i < 1000; ++i) x = x * 1.0000001;
    };
    std::vector<double> waits;
    for (int rep = 0; rep < 3; ++rep) {
      dp.begin_step(g);
      dp.gradient_ready(calls);  // the big bucket starts
      for (int k = calls; k-- > 0;) {
        compute(full / calls);
        dp.gradient_ready(k);
      }
      waits.push_back(max_over(comm, dp.finish()));
    }
    std::sort(waits.begin(), waits.end());
    m.allreduce_overlap = std::clamp(1 - waits[1] / full, 0.0, 1.0);
  }
  // The per-chunk handoff: a release store seen by a thread waiting as the engine's helpers and
  // workers wait (spin, then yield, then 20 us sleeps; cgdp_engine.cpp), there and back. On an
  // oversubscribed node this is the scheduler's latency, not the atomic's.
  {
    std::atomic<int> ping{0}, pong{0};
    auto wait_for = [](const std::atomic<int>& flag, int v) {
      for (int i = 0; flag.load(std::memory_order_acquire) < v; ++i) {
        if (i < 64) continue;
        if (i < 256)
          std::this_thread::yield();
        else
          std::this_thread::sleep_for(std::chrono::microseconds(20));
      }
    };
    constexpr int rounds = 21;
    // Median round trip; with `busy` spinning threads per rank (every rank calibrates at once),
    // the handoff of a node whose cores are all taken by computing workers.
    auto handoff = [&](int busy) {
      ping.store(0);
      pong.store(0);
      std::atomic<bool> spin{busy > 0};
      std::vector<std::thread> spinners;
      for (int k = 0; k < busy; ++k)
        spinners.emplace_back([&spin] {
          volatile double x = 1;
          while (spin.load(std::memory_order_relaxed)) x = x * 1.0000001;
        });
      std::thread echo([&] {
        for (int i = 1; i <= rounds; ++i) {
          wait_for(ping, i);
          pong.store(i, std::memory_order_release);
        }
      });
      std::vector<double> rt;
      for (int i = 1; i <= rounds; ++i) {
        const auto t0 = clock_type::now();
        ping.store(i, std::memory_order_release);
        wait_for(pong, i);
        rt.push_back(std::chrono::duration<double>(clock_type::now() - t0).count());
      }
      echo.join();
      spin.store(false);
      for (auto& t : spinners) t.join();
      std::sort(rt.begin(), rt.end());
      return max_over(comm, rt[rt.size() / 2]);
    };
    m.sync_overhead_s = handoff(0);
    m.contended_sync_s = std::max(m.sync_overhead_s, handoff(1));
  }
  return m;
}

}  // namespace toru::train::detail
