// SPDX-License-Identifier: BSD-3-Clause
// The trainer's engine choice (docs/train.md, "CGDP"): probe steps time the layers, the machine is
// calibrated, the cost model picks a chunking (and with engine auto an engine); with `tune` the
// chunk search measures candidates (cached in the wisdom file). Probes change the weights,
// statistics and optimizer state: all are restored before the engine is built.
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "impl.hpp"
#include "toru/core/mpi.hpp"
#include "toru/train/chunk_search.hpp"

namespace toru::train {

namespace {

using clock_type = std::chrono::steady_clock;

// Workers per node, nodes, and the cores the node's ranks may run on (the union of their affinity
// masks: bound one to a core, each sees one) against the workers' compute threads plus one helper
// each (cgdp_cost.hpp).
void describe_node(machine_model& mm, MPI_Comm mpi, int rank, int threads) {
  MPI_Comm node = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split_type(mpi, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node), "MPI_Comm_split_type");
  int local_size = 1, leaders = 0, lr = 0;
  MPI_Comm_size(node, &local_size);
  MPI_Comm_rank(node, &lr);
  leaders = lr == 0;
  MPI_Allreduce(MPI_IN_PLACE, &leaders, 1, MPI_INT, MPI_SUM, mpi);
  mm.workers = local_size;
  mm.nodes = leaders;
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  if (sched_getaffinity(0, sizeof cpus, &cpus) != 0)
    for (unsigned k = 0; k < std::thread::hardware_concurrency(); ++k) CPU_SET(k, &cpus);
  const int own = CPU_COUNT(&cpus);  // what a worker's OpenMP team defaults to
  static_assert(sizeof cpus % sizeof(unsigned long) == 0);
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &cpus, static_cast<int>(sizeof cpus / sizeof(unsigned long)), MPI_UNSIGNED_LONG,
                          MPI_BOR, node),
            "MPI_Allreduce");
  MPI_Comm_free(&node);
  mm.cores = CPU_COUNT(&cpus);
  mm.worker_threads = threads > 0 ? threads : own;
}

}  // namespace

// One training step on batch `k` of epoch 0 with the engine in place (for probes and the search,
// whose weights are thrown away). Returns the step time, max over ranks.
double trainer::impl::probe(std::int64_t k) {
  train_set->read(order->shard(0, k % order->steps_per_epoch(), rank, nranks), images, labels);
  check_mpi(MPI_Barrier(mpi), "MPI_Barrier");
  const auto t0 = clock_type::now();
  eng->before_forward(*m);
  m->forward(images, labels, {.training = true, .step = 0, .first_sample = k * o.batch + rank * local});
  step_timing unused;
  eng->backward_and_update(*m, 0, lr(0), unused, {});
  double t = std::chrono::duration<double>(clock_type::now() - t0).count();
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, mpi), "MPI_Allreduce");
  return t;
}

void trainer::impl::choose_engine() {
  engine_kind engine = o.engine;
  const int max_chunk = std::max(1, static_cast<int>(layers.size()) - 1);
  auto cgdp_opts = [&](bool host_update, int chunk) {
    return cgdp_options{.chunk_layers = chunk,
                        .chunk_sizes = o.chunk_sizes,
                        .host_update = host_update,
                        .host_memory_bytes = static_cast<std::uint64_t>(o.host_memory_mib * (1 << 20))};
  };
  eng = detail::make_allreduce_engine(*dp, o.optimizer, m->parameter_count(), o.clip_grad_norm, o.threads);
  if (on_device()) {
    eng = detail::make_cgdp_engine(comm, *m, m->parameter_data(), o.optimizer, cgdp_opts(true, chunk_layers));
    return;
  }
  if (engine == engine_kind::allreduce && !o.explain) return;

  const std::vector<float> p0(m->parameter_data().begin(), m->parameter_data().end());
  const std::vector<float> b0(m->buffer_data().begin(), m->buffer_data().end());
  std::int64_t o0_steps = 0;
  const std::vector<float> o0 = eng->optimizer_state(o0_steps);
  for (int k = 0; k < 3; ++k) {
    probe(k);
    if (k > 0) timer.add(*m, layers);
  }
  auto costs = timer.mean();
  for (auto& c : costs) {  // every rank decides from the same (slowest) costs
    double fb[2] = {c.forward, c.backward};
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, fb, 2, MPI_DOUBLE, MPI_MAX, mpi), "MPI_Allreduce");
    c.forward = fb[0];
    c.backward = fb[1];
  }
  timer = {};
  machine = detail::calibrate(mpi, m->parameter_count() * 4, 0, 1, o.optimizer);
  describe_node(*machine, mpi, rank, o.threads);
  const auto best = best_uniform_chunking(costs, *machine, engine != engine_kind::cgdp_sum);
  const std::string cache = o.tune_cache.empty() ? detail::default_cache_file() : o.tune_cache;
  const std::string key = detail::cache_key(model_name, o.batch, nranks);
  if (chunk_layers == 0) chunk_layers = best.chunk_layers;
  if (o.tune && o.chunk_sizes.empty() && o.chunk_layers == 0 && engine != engine_kind::allreduce) {
    int cached = rank == 0 ? detail::cached_chunk(cache, key) : 0;
    check_mpi(MPI_Bcast(&cached, 1, MPI_INT, 0, mpi), "MPI_Bcast");
    if (cached > 0 && cached <= max_chunk) {
      chunk_layers = cached;
      chunk_log = fmt::format("chunk size {} from the cache {} ({})", cached, cache, key);
    } else {
      chunk_search search(max_chunk, best.chunk_layers,
                          {.window = static_cast<int>(o.tune_window), .warmup = 1, .growth = 2});
      auto allreduce = std::move(eng);
      std::int64_t k = 0;
      while (!search.done()) {
        eng.reset();
        eng = detail::make_cgdp_engine(comm, *m, p0, o.optimizer,
                                       cgdp_opts(engine != engine_kind::cgdp_sum, search.current()));
        std::copy(p0.begin(), p0.end(), m->parameter_data().begin());
        m->parameters_changed();
        for (int w = 0; w < o.tune_window; ++w) search.record(probe(k++));
        eng->sync_weights(*m);
      }
      eng = std::move(allreduce);
      chunk_layers = search.best();
      std::string trials;
      for (const auto& t : search.log()) trials += fmt::format("{}:{:.2f}ms ", t.chunk_layers, 1e3 * t.median_seconds);
      chunk_log =
          fmt::format("chunk search from the model's {}: {}-> {} layers", best.chunk_layers, trials, chunk_layers);
      if (rank == 0) detail::store_chunk(cache, key, chunk_layers, trials);
      if (engine == engine_kind::auto_select) {
        // Measured too: the allreduce engine over one window against the best chunking.
        std::vector<double> w;
        for (int i = 0; i < o.tune_window; ++i) w.push_back(probe(k++));
        const double ar = detail::median(std::vector<double>(w.begin() + 1, w.end()));
        engine = ar <= search.best_seconds() ? engine_kind::allreduce : engine_kind::cgdp;
        chunk_log +=
            fmt::format("; measured allreduce {:.2f} ms vs cgdp {:.2f} ms", 1e3 * ar, 1e3 * search.best_seconds());
      }
    }
  }
  if (engine == engine_kind::auto_select) {
    const auto ar = predict_allreduce(costs, *machine, o.bucket_bytes, o.first_bucket_bytes);
    const auto sum = best_uniform_chunking(costs, *machine, false);
    const double c = best.prediction.step, cs = sum.prediction.step;
    engine = ar.step <= std::min(c, cs) ? engine_kind::allreduce : c <= cs ? engine_kind::cgdp : engine_kind::cgdp_sum;
    if (engine == engine_kind::cgdp_sum && o.chunk_layers == 0) chunk_layers = sum.chunk_layers;
    chunk_log += fmt::format("{}auto: predicted allreduce {:.2f} ms, cgdp {:.2f} ms, cgdp-sum {:.2f} ms -> {}",
                             chunk_log.empty() ? "" : "; ", 1e3 * ar.step, 1e3 * c, 1e3 * cs, to_string(engine));
  }
  std::copy(p0.begin(), p0.end(), m->parameter_data().begin());
  std::copy(b0.begin(), b0.end(), m->buffer_data().begin());
  m->parameters_changed();
  eng->restore(*m, o0, o0_steps);
  if (engine != engine_kind::allreduce)
    eng = detail::make_cgdp_engine(comm, *m, m->parameter_data(), o.optimizer,
                                   cgdp_opts(engine == engine_kind::cgdp, chunk_layers));
}

}  // namespace toru::train
