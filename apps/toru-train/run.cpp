// SPDX-License-Identifier: BSD-3-Clause
#include "run.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <numeric>
#include <optional>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cgdp_run.hpp"
#include "swap_plan.hpp"
#include "toru/comm/communicator.hpp"
#include "toru/core/agreement.hpp"
#include "toru/core/error.hpp"
#include "toru/core/mpi.hpp"
#include "toru/swap/models.hpp"
#include "toru/swap/onnx_import.hpp"
#include "toru/train/cgdp.hpp"
#include "toru/train/checkpoint.hpp"
#include "toru/train/chunk_search.hpp"
#include "toru/train/data.hpp"
#include "toru/train/data_parallel.hpp"
#include "toru/train/forward_hook.hpp"
#include "toru/train/model.hpp"
#include "toru/train/optimizer.hpp"

namespace toru::apps::train {

namespace tt = toru::train;
namespace fs = std::filesystem;
using json = nlohmann::ordered_json;
using clock_type = std::chrono::steady_clock;

namespace {

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Runs `f` on this rank; if it throws on any rank, every rank throws the lowest failing rank's error.
void agree(MPI_Comm comm, std::string_view what, const std::function<void()>& f) {
  std::exception_ptr failure;
  try {
    f();
  } catch (...) {
    failure = std::current_exception();
  }
  std::optional<toru::defer_error> deferred;
  if (failure) deferred.emplace(failure);
  toru::validate_collectively(comm, what, std::span<const same_on_all_ranks>{}, [] {});
}

std::string hex_digest(std::span<const float> v) {
  return fmt::format("{:016x}", static_cast<std::uint64_t>(toru::digest(std::string_view(
                                    reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float)))));
}

struct step_times {
  double forward = 0, backward = 0, comm_wait = 0, update = 0, total = 0;
};

void progress_bar(std::int64_t epoch, std::int64_t epochs, std::int64_t step, std::int64_t steps, double loss,
                  double acc, double ips) {
  constexpr int width = 30;
  const int filled = static_cast<int>(width * (step + 1) / std::max<std::int64_t>(steps, 1));
  std::fprintf(stdout, "\repoch %lld/%lld [%s%s] %lld/%lld loss %.4f acc %5.1f%% %7.0f img/s ",
               static_cast<long long>(epoch + 1), static_cast<long long>(epochs), std::string(filled, '=').c_str(),
               std::string(width - filled, ' ').c_str(), static_cast<long long>(step + 1),
               static_cast<long long>(steps), loss, 100 * acc, ips);
  std::fflush(stdout);
}

}  // namespace

int run(const settings& s, MPI_Comm world) {
  toru::comm::communicator comm(world, {.threads = 0});
  MPI_Comm mpi = comm.mpi();
  const int rank = comm.rank(), nranks = comm.size();
  const bool root = rank == 0;

  std::optional<tt::model> m;
  std::unique_ptr<tt::dataset> train_set, test_set;
  std::optional<tt::sample_order> order;
  tt::optimizer_options oo;
  tt::schedule_options so;
  tt::reduction red = tt::reduction::ordered;
  tt::engine_kind engine = tt::engine_kind::allreduce;
  std::optional<tt::checkpoint_state> resumed;
  fs::path resumed_from;
  std::int64_t total_steps = 0;
  const std::string model_name = s.onnx.empty() ? s.model : fs::path(s.onnx).filename().string();
  std::shared_ptr<tt::plan_executor> executor;

  // Every argument is agreed on and every local check (dataset files, the model, the checkpoint)
  // made before anything trains: one rank's bad input is every rank's clear error, never a hang.
  toru::validate_collectively(
      mpi, "toru-train",
      {same_text("model", s.model),
       same_text("onnx", s.onnx),
       same_text("data", s.data),
       {"batch", s.batch},
       {"epochs", s.epochs},
       {"steps", s.steps},
       same_text("optimizer", s.optimizer),
       {"seed", static_cast<std::int64_t>(s.seed)},
       {"bucket-bytes", s.bucket_bytes},
       same_text("checkpoint", s.checkpoint),
       {"checkpoint-every", s.checkpoint_every},
       {"resume", s.resume},
       same_text("schedule", s.schedule),
       same_text("device", s.device),
       same_text("engine", fmt::format("{} {} {} {} {}", s.engine, s.chunk_layers, fmt::join(s.chunk_sizes, ","),
                                       s.tune, s.host_memory_mib)),
       same_text("numbers",
                 fmt::format("{} {} {} {} {} {}", s.lr, s.momentum, s.weight_decay, s.gamma, s.warmup, s.step_size))},
      [&] {
        expect(s.model.empty() != s.onnx.empty(), "--model/--onnx", "exactly one of them",
               s.model.empty() ? "neither" : "both");
        expect(s.batch >= 1 && s.batch % nranks == 0, "--batch",
               fmt::format("a global batch divisible by the {} ranks", nranks), std::to_string(s.batch));
        oo = {.kind = tt::parse_optimizer(s.optimizer, "--optimizer"),
              .lr = s.lr,
              .momentum = s.momentum,
              .nesterov = s.nesterov,
              .weight_decay = s.weight_decay};
        tt::validate(oo);
        red = s.reduction == "mpi" ? tt::reduction::mpi : tt::reduction::ordered;
        engine = tt::parse_engine(s.engine, "--engine");
        expect(!s.resume || !s.checkpoint.empty(), "--resume", "--checkpoint DIR to resume from", "no --checkpoint");

        const std::int64_t local = s.batch / nranks;
        if (s.data == "fashion-mnist") {
          const tt::normalization norm = s.normalize ? tt::fashion_mnist_normalization : tt::normalization{};
          train_set = tt::open_fashion_mnist(s.data_dir, tt::split::train, norm);
          if (s.eval) test_set = tt::open_fashion_mnist(s.data_dir, tt::split::test, norm);
        }
        const std::int64_t side = s.data == "fashion-mnist" ? 28 : s.image;
        swap::graph g = s.onnx.empty() ? swap::build_model(s.model, {.batch = local, .height = side, .width = side})
                                       : swap::import_onnx(s.onnx, {.batch = local});
        if (s.memory_budget.empty()) {
          expect(s.timeline.empty(), "--timeline", "--memory-budget (the timeline is the executed plan's)",
                 "no --memory-budget");
          if (s.device == "cuda" && engine != tt::engine_kind::cgdp)
            throw error(errc::unsupported,
                        fmt::format("--device cuda: only --engine cgdp has a device path (gradients to pinned host "
                                    "buffers, host update); got --engine {}",
                                    s.engine));
          if (s.device == "cuda") {
            // The device path is the engine's alone: the probes, the chunk search and checkpoints
            // read the weights on the host.
            expect(s.chunk_layers > 0 || !s.chunk_sizes.empty(), "--device cuda",
                   "an explicit --chunk-layers or --chunks (the cost model is calibrated on CPU workers only)",
                   "neither");
            expect(!s.explain && !s.tune && s.checkpoint.empty(), "--device cuda",
                   "no --explain, --tune or --checkpoint (they read the weights on the host)", "one of them");
            try {
              m.emplace(g, tt::model_options{.backend = tt::backend_kind::cuda, .seed = s.seed});
            } catch (const toru::error& e) {
              throw error(e.code(), fmt::format("--device cuda --engine {}: {}", s.engine, e.message()));
            }
          } else {
            m.emplace(g, tt::model_options{.threads = s.threads, .seed = s.seed});
          }
        } else {
          executor = install_plan(s, g, m, mpi);
        }
        auto shape = m->input_shape();
        shape.erase(shape.begin());
        if (s.data == "synthetic") {
          train_set = tt::make_synthetic(shape, m->classes(), std::max(s.synthetic_samples, s.batch), s.seed);
          if (s.eval)
            test_set = tt::make_synthetic(shape, m->classes(), std::max<std::int64_t>(s.batch, 1024), s.seed + 1);
        }
        expect(train_set->sample_shape() == shape, "--model",
               fmt::format("a model taking {} samples of {}", s.data, fmt::join(train_set->sample_shape(), "x")),
               fmt::format("input {}", fmt::join(shape, "x")));
        expect(m->classes() >= train_set->classes(), "--model",
               fmt::format("at least the data's {} classes", train_set->classes()), std::to_string(m->classes()));
        if (m->space() != tt::memory_space::host && engine != tt::engine_kind::cgdp)
          throw error(errc::unsupported,
                      "toru-train: the optimizer runs on host buffers; device models are not wired in");
        if (engine != tt::engine_kind::allreduce || s.explain) {
          const auto ls = tt::group_layers(m->parameters());
          if (s.chunk_layers > 0) tt::uniform_chunking(static_cast<int>(ls.size()), s.chunk_layers);
          if (!s.chunk_sizes.empty()) tt::make_chunks(ls, s.chunk_sizes);
        }
        order.emplace(train_set->size(), s.batch, s.seed);
        total_steps = s.steps > 0 ? s.steps : s.epochs * order->steps_per_epoch();
        so = {.kind = tt::parse_schedule(s.schedule, "--schedule"),
              .step_size = s.step_size > 0 ? s.step_size : order->steps_per_epoch(),
              .gamma = s.gamma,
              .total_steps = total_steps,
              .warmup_steps = s.warmup};
        tt::validate(so);

        if (s.resume) {
          resumed_from = tt::latest_checkpoint(s.checkpoint);
          resumed = tt::read_checkpoint(resumed_from);
          tt::checkpoint_state expected;
          expected.model_name = model_name;
          expected.model_signature = tt::model_signature(m->parameters(), shape, m->classes(),
                                                         static_cast<std::int64_t>(m->buffer_data().size()));
          expected.nranks = nranks;
          expected.global_batch = s.batch;
          expected.optimizer = std::string(tt::to_string(oo.kind));
          expected.parameters.resize(static_cast<std::size_t>(m->parameter_count()));
          expected.buffers.resize(m->buffer_data().size() * static_cast<std::size_t>(nranks));
          expected.optimizer_state.resize(tt::optimizer(oo, m->parameter_count()).state().size());
          tt::check_compatible(*resumed, expected, resumed_from);
          if (resumed->seed != s.seed)
            throw error(errc::mismatch, fmt::format("{}: checkpoint of seed {}, this run has --seed {}: cannot resume",
                                                    resumed_from.string(), resumed->seed, s.seed));
        }
      });

  const std::int64_t local = s.batch / nranks;
  const auto spe = order->steps_per_epoch();
  const std::int64_t epochs = (total_steps + spe - 1) / spe;
  // Host buffers only: a device model trains with CGDP, whose engine moves its buffers itself.
  const bool on_device = m->space() == tt::memory_space::device;
  tt::data_parallel dp(comm, m->parameters(), tt::memory_space::host,
                       {.bucket_bytes = s.bucket_bytes,
                        .first_bucket_bytes = std::min(s.first_bucket_bytes, s.bucket_bytes),
                        .algorithm = red});
  tt::optimizer opt(oo, m->parameter_count());
  const auto nb = m->buffer_data().size();
  std::int64_t step = 0;
  if (resumed) {
    std::copy(resumed->parameters.begin(), resumed->parameters.end(), m->parameter_data().begin());
    std::copy_n(resumed->buffers.begin() + static_cast<std::ptrdiff_t>(nb) * rank, nb, m->buffer_data().begin());
    std::copy(resumed->optimizer_state.begin(), resumed->optimizer_state.end(), opt.state().begin());
    opt.set_steps(resumed->optimizer_steps);
    m->parameters_changed();
    step = resumed->step;
  }

  // ---- CGDP: engine and chunking (docs/train.md, "CGDP") ----
  std::optional<tt::cgdp> cg;
  const auto layers = tt::group_layers(m->parameters());
  const int max_chunk = std::max(1, static_cast<int>(layers.size()) - 1);
  layer_timer timer;
  std::optional<tt::machine_model> machine;
  std::string chunk_log;
  int chunk_layers = s.chunk_layers;
  std::vector<float> images(static_cast<std::size_t>(local * train_set->sample_elements()));
  std::vector<std::int32_t> labels(static_cast<std::size_t>(local));
  auto make_cgdp = [&](bool host_update, int chunk, std::span<const float> params) {
    cg.reset();
    cg.emplace(comm, m->parameters(), m->space(), params, oo,
               tt::cgdp_options{.chunk_layers = chunk,
                                .chunk_sizes = s.chunk_sizes,
                                .host_update = host_update,
                                .host_memory_bytes = static_cast<std::uint64_t>(s.host_memory_mib * (1 << 20))});
  };
  // One training step on batch `k` of epoch 0 with the engine in place (for probes and the
  // search, whose weights are thrown away). Returns the step time, max over ranks.
  auto probe = [&](std::int64_t k) {
    train_set->read(order->shard(0, k % spe, rank, nranks), images, labels);
    check_mpi(MPI_Barrier(mpi), "MPI_Barrier");
    const auto t0 = clock_type::now();
    if (cg) m->parameters_changed();  // the forward hook takes the chunks
    m->forward(images, labels, {.training = true, .step = 0, .first_sample = k * s.batch + rank * local});
    if (cg) {
      cg->begin_step(0, tt::learning_rate(oo.lr, so, 0), m->gradient_data());
      m->backward([&](int slot) { cg->gradient_ready(slot); });
      cg->end_backward();
    } else {
      dp.begin_step(m->gradient_data());
      m->backward([&](int slot) { dp.gradient_ready(slot); });
      dp.finish();
      opt.step(m->parameter_data(), m->gradient_data(), tt::learning_rate(oo.lr, so, 0));
    }
    double t = seconds_since(t0);
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, mpi), "MPI_Allreduce");
    return t;
  };
  // The forward takes each chunk of the last step's update when it reaches the chunk's first op,
  // so a worker never waits for a chunk its forward has not started (docs/train.md, "Waiting per
  // chunk"); whatever engine `cg` holds at the time.
  tt::set_forward_hook(*m, [&](int op) {
    if (cg) cg->before_forward_op(op, m->parameter_data());
  });
  const bool wants_model = (engine != tt::engine_kind::allreduce || s.explain) && !on_device;
  if (on_device) make_cgdp(true, chunk_layers, m->parameter_data());
  if (wants_model) {
    // Probes change the weights, batch-norm statistics and optimizer state: saved and restored.
    const std::vector<float> p0(m->parameter_data().begin(), m->parameter_data().end());
    const std::vector<float> b0(m->buffer_data().begin(), m->buffer_data().end());
    const std::vector<float> o0(opt.state().begin(), opt.state().end());
    const auto o0_steps = opt.steps();
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
    machine = calibrate(mpi, m->parameter_count() * 4, 0, 1, oo);
    {
      MPI_Comm node = MPI_COMM_NULL;
      check_mpi(MPI_Comm_split_type(mpi, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node), "MPI_Comm_split_type");
      int local_size = 1, leaders = 0, lr = 0;
      MPI_Comm_size(node, &local_size);
      MPI_Comm_rank(node, &lr);
      leaders = lr == 0;
      MPI_Allreduce(MPI_IN_PLACE, &leaders, 1, MPI_INT, MPI_SUM, mpi);
      machine->workers = local_size;
      machine->nodes = leaders;
      // Contention: the cores the node's ranks may run on (the union of their affinity masks:
      // bound one to a core, each sees one) against the workers' compute threads plus one helper
      // each (cgdp_cost.hpp).
      cpu_set_t cpus;
      CPU_ZERO(&cpus);
      if (sched_getaffinity(0, sizeof cpus, &cpus) != 0)
        for (unsigned k = 0; k < std::thread::hardware_concurrency(); ++k) CPU_SET(k, &cpus);
      const int own = CPU_COUNT(&cpus);  // what a worker's OpenMP team defaults to
      static_assert(sizeof cpus % sizeof(unsigned long) == 0);
      check_mpi(MPI_Allreduce(MPI_IN_PLACE, &cpus, static_cast<int>(sizeof cpus / sizeof(unsigned long)),
                              MPI_UNSIGNED_LONG, MPI_BOR, node),
                "MPI_Allreduce");
      MPI_Comm_free(&node);
      machine->cores = CPU_COUNT(&cpus);
      machine->worker_threads = s.threads > 0 ? s.threads : own;
    }
    const auto best = tt::best_uniform_chunking(costs, *machine, engine != tt::engine_kind::cgdp_sum);
    const std::string cache = s.tune_cache.empty() ? default_cache_file() : s.tune_cache;
    const std::string key = cache_key(model_name, s.batch, nranks);
    if (chunk_layers == 0) chunk_layers = best.chunk_layers;
    if (s.tune && s.chunk_sizes.empty() && s.chunk_layers == 0 && engine != tt::engine_kind::allreduce) {
      int cached = root ? cached_chunk(cache, key) : 0;
      check_mpi(MPI_Bcast(&cached, 1, MPI_INT, 0, mpi), "MPI_Bcast");
      if (cached > 0 && cached <= max_chunk) {
        chunk_layers = cached;
        chunk_log = fmt::format("chunk size {} from the cache {} ({})", cached, cache, key);
      } else {
        tt::chunk_search search(max_chunk, best.chunk_layers,
                                {.window = static_cast<int>(s.tune_window), .warmup = 1, .growth = 2});
        std::int64_t k = 0;
        while (!search.done()) {
          make_cgdp(engine != tt::engine_kind::cgdp_sum, search.current(), p0);
          std::copy(p0.begin(), p0.end(), m->parameter_data().begin());
          m->parameters_changed();
          for (int w = 0; w < s.tune_window; ++w) search.record(probe(k++));
          cg->acquire_weights(m->parameter_data());
        }
        cg.reset();
        chunk_layers = search.best();
        std::string trials;
        for (const auto& t : search.log())
          trials += fmt::format("{}:{:.2f}ms ", t.chunk_layers, 1e3 * t.median_seconds);
        chunk_log =
            fmt::format("chunk search from the model's {}: {}-> {} layers", best.chunk_layers, trials, chunk_layers);
        if (root) store_chunk(cache, key, chunk_layers, trials);
        if (engine == tt::engine_kind::auto_select) {
          // Measured too: the allreduce engine over one window against the best chunking.
          std::vector<double> w;
          for (int i = 0; i < s.tune_window; ++i) w.push_back(probe(k++));
          const double ar = median(std::vector<double>(w.begin() + 1, w.end()));
          engine = ar <= search.best_seconds() ? tt::engine_kind::allreduce : tt::engine_kind::cgdp;
          chunk_log +=
              fmt::format("; measured allreduce {:.2f} ms vs cgdp {:.2f} ms", 1e3 * ar, 1e3 * search.best_seconds());
        }
      }
    }
    if (engine == tt::engine_kind::auto_select) {
      const auto ar = tt::predict_allreduce(costs, *machine, s.bucket_bytes, s.first_bucket_bytes);
      const auto sum = tt::best_uniform_chunking(costs, *machine, false);
      const double c = best.prediction.step, cs = sum.prediction.step;
      engine = ar.step <= std::min(c, cs) ? tt::engine_kind::allreduce
               : c <= cs                  ? tt::engine_kind::cgdp
                                          : tt::engine_kind::cgdp_sum;
      if (engine == tt::engine_kind::cgdp_sum && s.chunk_layers == 0) chunk_layers = sum.chunk_layers;
      chunk_log += fmt::format("{}auto: predicted allreduce {:.2f} ms, cgdp {:.2f} ms, cgdp-sum {:.2f} ms -> {}",
                               chunk_log.empty() ? "" : "; ", 1e3 * ar.step, 1e3 * c, 1e3 * cs, tt::to_string(engine));
    }
    std::copy(p0.begin(), p0.end(), m->parameter_data().begin());
    std::copy(b0.begin(), b0.end(), m->buffer_data().begin());
    std::copy(o0.begin(), o0.end(), opt.state().begin());
    opt.set_steps(o0_steps);
    m->parameters_changed();
    if (engine != tt::engine_kind::allreduce)
      make_cgdp(engine == tt::engine_kind::cgdp, chunk_layers, m->parameter_data());
  }
  // CGDP keeps the optimizer state with the host helpers: a resumed run hands it to them.
  if (cg && resumed) cg->set_optimizer_state(resumed->optimizer_state, resumed->optimizer_steps);
  if (root && !s.json && !s.quiet && cg)
    fmt::print("toru-train: engine {}, chunks {} ({} layers){}{}\n", tt::to_string(engine),
               tt::describe_chunking(cg->chunk_sizes()), layers.size(), chunk_log.empty() ? "" : "; ", chunk_log);
  if (cg && (s.verbose || s.explain)) {
    // Every rank says where its helper went (rank order, through rank 0).
    std::array<char, 256> line{};
    std::snprintf(line.data(), line.size(), "%s", cg->binding().c_str());
    std::vector<char> all(root ? line.size() * static_cast<std::size_t>(nranks) : 0);
    check_mpi(MPI_Gather(line.data(), static_cast<int>(line.size()), MPI_CHAR, all.data(),
                         static_cast<int>(line.size()), MPI_CHAR, 0, mpi),
              "MPI_Gather");
    if (root && !s.json)
      for (int r = 0; r < nranks; ++r)
        fmt::print("  rank {} helper thread: {}\n", r, all.data() + static_cast<std::size_t>(r) * line.size());
  }
  // The weights on the host (a device model's through read_tensor, slot by slot).
  auto host_parameters = [&] {
    if (!on_device) return std::vector<float>(m->parameter_data().begin(), m->parameter_data().end());
    std::vector<float> h(static_cast<std::size_t>(m->parameter_count()));
    for (const auto& slot : m->parameters()) {
      const auto t = m->read_tensor(slot.name);
      std::copy(t.begin(), t.end(), h.begin() + slot.offset);
    }
    return h;
  };
  auto sync_weights = [&] {
    if (!cg) return;
    cg->acquire_weights(m->parameter_data());
    m->parameters_changed();
  };
  std::vector<tt::chunk_stats> chunk_sums;

  const bool tty = root && !s.json && !s.quiet && ::isatty(STDOUT_FILENO);
  auto emit = [&](const json& j) {
    if (root && s.json) fmt::print("{}\n", j.dump());
  };
  if (root && !s.json && !s.quiet)
    fmt::print(
        "toru-train: {} on {} ({} samples), {} rank(s), global batch {} ({} per rank), {} steps ({} per epoch), "
        "{} lr {}, {} bucket(s){}\n",
        model_name, s.data, train_set->size(), nranks, s.batch, local, total_steps, spe, s.optimizer, s.lr,
        dp.buckets().size(), resumed ? fmt::format(", resumed from {} at step {}", resumed_from.string(), step) : "");

  fs::path last_checkpoint = resumed ? resumed_from : fs::path{};

  auto save = [&](std::int64_t steps_done) {
    // CGDP: the master weights (acquired into the model) and the helpers' optimizer state,
    // gathered into the allreduce engine's checkpoint format.
    std::vector<float> cgdp_state;
    std::int64_t cgdp_steps = 0;
    if (cg) {
      sync_weights();
      cgdp_state = cg->optimizer_state(cgdp_steps);
    }
    std::vector<float> all_buffers(root ? nb * static_cast<std::size_t>(nranks) : 0);
    check_mpi(MPI_Gather(m->buffer_data().data(), static_cast<int>(nb), MPI_FLOAT, all_buffers.data(),
                         static_cast<int>(nb), MPI_FLOAT, 0, mpi),
              "MPI_Gather");
    std::string written;
    agree(mpi, "toru-train checkpoint", [&] {
      if (!root) return;
      auto shape = m->input_shape();
      shape.erase(shape.begin());
      tt::checkpoint_state st;
      st.model_name = model_name;
      st.model_signature = tt::model_signature(m->parameters(), shape, m->classes(), static_cast<std::int64_t>(nb));
      st.nranks = nranks;
      st.seed = s.seed;
      st.global_batch = s.batch;
      st.step = steps_done;
      st.epoch = steps_done / spe;
      st.optimizer = std::string(tt::to_string(oo.kind));
      st.optimizer_steps = cg ? cgdp_steps : opt.steps();
      st.settings = json{{"lr", s.lr}, {"optimizer", s.optimizer}, {"schedule", s.schedule}, {"data", s.data}}.dump();
      const auto p = m->parameter_data();
      st.parameters.assign(p.begin(), p.end());
      st.buffers = std::move(all_buffers);
      if (cg)
        st.optimizer_state = std::move(cgdp_state);
      else
        st.optimizer_state.assign(opt.state().begin(), opt.state().end());
      tt::write_checkpoint(s.checkpoint, st);
    });
    // Every rank names the same file in its messages (only rank 0 wrote it).
    last_checkpoint = fs::path(s.checkpoint) / fmt::format("checkpoint-{}.toru", steps_done);
  };

  // Evaluation on averaged batch-norm statistics (rank order), restored afterwards so that the
  // training state, and with it a resumed run, is unaffected.
  auto evaluate = [&]() -> std::pair<double, double> {
    sync_weights();
    const auto buf = m->buffer_data();
    const std::vector<float> saved(on_device ? buf.end() : buf.begin(), buf.end());
    // On a CUDA device the statistics stay each rank's own (data_parallel averages host buffers).
    if (!on_device) dp.average(buf);
    m->parameters_changed();
    const tt::sample_order test_order(test_set->size(), s.batch, 0, false);
    double sums[2] = {0, 0};
    agree(mpi, "toru-train evaluation", [&] {
      for (std::int64_t t = 0; t < test_order.steps_per_epoch(); ++t) {
        const auto idx = test_order.shard(0, t, rank, nranks);
        test_set->read(idx, images, labels);
        const auto r =
            m->forward(images, labels, {.training = false, .step = 0, .first_sample = t * s.batch + rank * local});
        sums[0] += r.loss;
        sums[1] += static_cast<double>(r.correct);
      }
    });
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, mpi), "MPI_Allreduce");
    std::copy(saved.begin(), saved.end(), buf.begin());
    m->parameters_changed();
    const auto n = test_order.steps_per_epoch();
    return {sums[0] / static_cast<double>(n * nranks), sums[1] / static_cast<double>(n * s.batch)};
  };

  std::vector<step_times> times;
  double epoch_loss = 0, epoch_correct = 0, last_loss = 0;
  std::int64_t epoch_steps = 0;
  std::optional<std::pair<double, double>> last_eval;
  const auto run_start = clock_type::now();
  const std::int64_t first_step = step;
  while (step < total_steps) {
    const std::int64_t epoch = step / spe, in_epoch = step % spe;
    const auto idx = order->shard(epoch, in_epoch, rank, nranks);
    train_set->read(idx, images, labels);
    step_times t;
    const auto t0 = clock_type::now();
    tt::forward_result r;
    if (cg) m->parameters_changed();  // the forward hook writes each chunk as the forward reaches it
    try {
      agree(mpi, "toru-train forward", [&] {
        r = m->forward(images, labels,
                       {.training = true,
                        .step = static_cast<std::uint64_t>(step),
                        .first_sample = step * s.batch + rank * local});
      });
    } catch (const toru::error& e) {
      throw error(e.code(),
                  fmt::format("step {} (epoch {}): {}; {}", step, epoch, e.message(),
                              last_checkpoint.empty() ? std::string("no checkpoint was written")
                                                      : "the last good checkpoint is " + last_checkpoint.string()),
                  e.rank(), e.where());
    }
    if (cg) t.comm_wait = cg->last_wait_seconds();  // waited inside the forward, chunk by chunk
    t.forward = seconds_since(t0) - t.comm_wait;
    const auto t1 = clock_type::now();
    if (cg) {
      cg->begin_step(step, tt::learning_rate(oo.lr, so, step), m->gradient_data());
      m->backward([&](int slot) { cg->gradient_ready(slot); });
      cg->end_backward();
      t.backward = seconds_since(t1);
    } else {
      dp.begin_step(m->gradient_data());
      m->backward([&](int slot) { dp.gradient_ready(slot); });
      t.backward = seconds_since(t1);
      t.comm_wait = dp.finish();
      const auto t3 = clock_type::now();
      opt.step(m->parameter_data(), m->gradient_data(), tt::learning_rate(oo.lr, so, step));
      m->parameters_changed();
      t.update = seconds_since(t3);
    }
    t.total = seconds_since(t0);
    if (s.explain && static_cast<std::int64_t>(times.size()) >= s.warmup_steps_excluded) {
      timer.add(*m, layers);
      if (cg) {
        // The chunk stats of the step before (its waits happened in this step's acquire).
        const auto& st = cg->last_stats();
        chunk_sums.resize(st.size());
        for (std::size_t c = 0; c < st.size(); ++c) {
          chunk_sums[c].wait_seconds += st[c].wait_seconds;
          chunk_sums[c].post_seconds += st[c].post_seconds;
          chunk_sums[c].copy_in_seconds += st[c].copy_in_seconds;
          chunk_sums[c].host_seconds += st[c].host_seconds;
        }
      }
    }
    times.push_back(t);

    double g[2] = {r.loss, static_cast<double>(r.correct)};
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, g, 2, MPI_DOUBLE, MPI_SUM, mpi), "MPI_Allreduce");
    last_loss = g[0] / nranks;
    const double acc = g[1] / static_cast<double>(s.batch);
    epoch_loss += last_loss;
    epoch_correct += g[1];
    ++epoch_steps;
    ++step;
    emit(json{{"type", "step"},
              {"step", step},
              {"epoch", epoch},
              {"loss", last_loss},
              {"accuracy", acc},
              {"lr", tt::learning_rate(oo.lr, so, step - 1)},
              {"images_per_s", static_cast<double>(s.batch) / t.total},
              {"time",
               {{"forward", t.forward},
                {"backward", t.backward},
                {"comm_wait", t.comm_wait},
                {"update", t.update},
                {"total", t.total}}}});
    if (tty) progress_bar(epoch, epochs, in_epoch, spe, last_loss, acc, static_cast<double>(s.batch) / t.total);

    if (!s.checkpoint.empty() && s.checkpoint_every > 0 && step % s.checkpoint_every == 0 && step < total_steps)
      save(step);
    const bool epoch_end = step % spe == 0 || step == total_steps;
    if (epoch_end) {
      if (tty) fmt::print("\n");
      if (s.eval && test_set) last_eval = evaluate();
      json e{{"type", "epoch"},
             {"epoch", epoch},
             {"steps", epoch_steps},
             {"train_loss", epoch_loss / static_cast<double>(epoch_steps)},
             {"train_accuracy", epoch_correct / static_cast<double>(epoch_steps * s.batch)}};
      if (last_eval) {
        e["test_loss"] = last_eval->first;
        e["test_accuracy"] = last_eval->second;
        e["test_samples"] = test_set->size() / s.batch * s.batch;
      }
      emit(e);
      if (root && !s.json && !s.quiet)
        fmt::print("epoch {}: train loss {:.4f} accuracy {:.2f}%{}\n", epoch + 1,
                   epoch_loss / static_cast<double>(epoch_steps),
                   100 * epoch_correct / static_cast<double>(epoch_steps * s.batch),
                   last_eval
                       ? fmt::format(" | test loss {:.4f} accuracy {:.2f}%", last_eval->first, 100 * last_eval->second)
                       : "");
      epoch_loss = epoch_correct = 0;
      epoch_steps = 0;
    }
  }
  sync_weights();
  tt::set_forward_hook(*m, {});
  if (!s.checkpoint.empty() && step > first_step) save(step);
  const double wall = seconds_since(run_start);

  // Timing: the first steps of a run (primitive creation, caches) are excluded when there are more.
  const std::size_t skip = times.size() > static_cast<std::size_t>(s.warmup_steps_excluded) + 1
                               ? static_cast<std::size_t>(s.warmup_steps_excluded)
                               : 0;
  auto med = [&](double step_times::*field) {
    std::vector<double> v;
    for (std::size_t i = skip; i < times.size(); ++i) v.push_back(times[i].*field);
    return median(v);
  };
  std::vector<double> totals;
  for (std::size_t i = skip; i < times.size(); ++i) totals.push_back(times[i].total);
  const double med_total = median(totals);
  json summary{{"type", "summary"},
               {"model", model_name},
               {"data", s.data},
               {"ranks", nranks},
               {"batch", s.batch},
               {"optimizer", s.optimizer},
               {"threads", s.threads},
               {"steps", step},
               {"steps_this_run", step - first_step},
               {"timed_steps", totals.size()},
               {"final_loss", last_loss},
               {"wall_s", wall},
               {"step_s_median", med_total},
               {"step_s_min", totals.empty() ? 0 : *std::min_element(totals.begin(), totals.end())},
               {"step_s_max", totals.empty() ? 0 : *std::max_element(totals.begin(), totals.end())},
               {"images_per_s", med_total > 0 ? static_cast<double>(s.batch) / med_total : 0},
               {"time_median",
                {{"forward", med(&step_times::forward)},
                 {"backward", med(&step_times::backward)},
                 {"comm_wait", med(&step_times::comm_wait)},
                 {"update", med(&step_times::update)}}},
               {"buckets", dp.buckets().size()},
               {"reduction", std::string(tt::to_string(red))},
               {"parameters", m->parameter_count()},
               {"weights_digest", hex_digest(host_parameters())}};
  summary["engine"] = std::string(tt::to_string(engine));
  if (cg) summary["chunks"] = tt::describe_chunking(cg->chunk_sizes());
  if (s.explain && timer.steps > 0 && machine) {
    auto costs = timer.mean();
    for (auto& c : costs) {
      double fb[2] = {c.forward, c.backward};
      check_mpi(MPI_Allreduce(MPI_IN_PLACE, fb, 2, MPI_DOUBLE, MPI_MAX, mpi), "MPI_Allreduce");
      c.forward = fb[0];
      c.backward = fb[1];
    }
    // The op timers miss what runs between ops: dispatch, the step's collective error check, and
    // on an oversubscribed node the time slices lost between ops. And the sum over layers of the
    // slowest rank's time can exceed every rank's phase, when ranks are slow in different layers.
    // So the layers are scaled to the measured phase (median, slowest rank); the engine's own
    // work inside a phase is modelled apart (CGDP's copies in the forward, its posts in the
    // backward), so it is taken out first.
    double cover[2] = {1, 1};
    {
      double ops[2] = {0, 0}, engine_work[2] = {0, 0};
      for (const auto& c : costs) {
        ops[0] += c.forward;
        ops[1] += c.backward;
      }
      const double steps_timed = static_cast<double>(std::max(timer.steps, 1));
      for (const auto& cs : chunk_sums) {
        engine_work[0] += cs.copy_in_seconds / steps_timed;
        engine_work[1] += cs.post_seconds / steps_timed;
      }
      double phase[2] = {med(&step_times::forward) - engine_work[0], med(&step_times::backward) - engine_work[1]};
      check_mpi(MPI_Allreduce(MPI_IN_PLACE, phase, 2, MPI_DOUBLE, MPI_MAX, mpi), "MPI_Allreduce");
      double scale[2] = {1, 1};
      for (int k = 0; k < 2; ++k)
        if (ops[k] > 0 && phase[k] > 0) {
          scale[k] = phase[k] / ops[k];
          cover[k] = ops[k] / phase[k];
        }
      for (auto& c : costs) {
        c.forward *= scale[0];
        c.backward *= scale[1];
      }
    }
    const std::vector<int> sizes =
        cg ? cg->chunk_sizes() : tt::uniform_chunking(static_cast<int>(layers.size()), chunk_layers);
    const auto ar = tt::predict_allreduce(costs, *machine, s.bucket_bytes, s.first_bucket_bytes);
    const auto cp = tt::predict_cgdp(costs, *machine, sizes, engine != tt::engine_kind::cgdp_sum);
    const double predicted = cg ? cp.step : ar.step;
    summary["explain"] = {{"predicted_allreduce_s", ar.step},
                          {"predicted_cgdp_s", cp.step},
                          {"predicted_tail_s", cp.tail},
                          {"measured_s", med_total},
                          {"cores", machine->cores},
                          {"helpers_without_core", cp.helpers_without_core},
                          {"sync_s", machine->sync_overhead_s},
                          {"contended_sync_s", machine->contended_sync_s},
                          {"allreduce_overlap", machine->allreduce_overlap},
                          {"op_timer_cover", {{"forward", cover[0]}, {"backward", cover[1]}}},
                          {"prediction_error", med_total > 0 ? (predicted - med_total) / med_total : 0}};
    if (root && !s.json) {
      const auto& mm = *machine;
      fmt::print(
          "explain: machine: {} worker(s)/node x {} node(s); copy {:.2f} GB/s, host sum {:.2f} GB/s, update "
          "{:.3f} ns/B, reduction {:.2f} GB/s + {:.1f} us ({:.0f}% of it while computing), sync {:.0f} us (thread "
          "handoff, there and back; "
          "{:.0f} us with every core busy)\n",
          mm.workers, mm.nodes, mm.d2h_bytes_per_s / 1e9, mm.host_sum_bytes_per_s / 1e9,
          mm.host_update_s_per_byte * 1e9, mm.allreduce_bytes_per_s / 1e9, mm.allreduce_latency_s * 1e6,
          100 * mm.allreduce_overlap, mm.sync_overhead_s * 1e6, mm.contended_sync_s * 1e6);
      fmt::print(
          "explain: the layers' op times (slowest rank each) add up to {:.0f}% of the forward and {:.0f}% of the "
          "backward (median, slowest rank); the layers are scaled to the phases\n",
          100 * cover[0], 100 * cover[1]);
      fmt::print(
          "explain: contention: {} core(s) for {} worker(s) x {} compute thread(s) + {} helper(s): {:.0f}% of the "
          "helpers run on the workers' cores{}\n",
          mm.cores, mm.workers, mm.worker_threads, mm.workers, 100 * cp.helpers_without_core,
          cp.helpers_without_core > 0
              ? " (their host work stretches backward; handoffs during backward cost the busy-core sync)"
              : "");
      fmt::print(
          "explain: predicted step: allreduce {:.2f} ms (exposed communication {:.2f}, update {:.2f}); {} {:.2f} "
          "ms (tail {:.2f}) with chunks {}; measured ({}): {:.2f} ms, error {:+.1f}%\n",
          1e3 * ar.step, 1e3 * ar.exposed, 1e3 * ar.update, cp.engine, 1e3 * cp.step, 1e3 * cp.tail,
          tt::describe_chunking(sizes), tt::to_string(engine), 1e3 * med_total,
          med_total > 0 ? 100 * (predicted - med_total) / med_total : 0);
      fmt::print("explain: {:>5} {:>7} {:>10} | {:>9} {:>9} {:>9} | {:>9} {:>9} {:>9}\n", "chunk", "layers", "bytes",
                 "pred post", "pred host", "pred wait", "meas post", "meas host", "meas wait");
      const double n = static_cast<double>(std::max(timer.steps, 1));
      for (std::size_t c = 0; c < cp.chunks.size(); ++c) {
        const auto& pc = cp.chunks[c];
        const double post = pc.post;
        const auto ms = [&](double x) { return fmt::format("{:9.3f}", 1e3 * x); };
        const bool have = cg && c < chunk_sums.size();
        fmt::print("explain: {:>5} {:>7} {:>10} | {} {} {} | {} {} {}\n", c,
                   fmt::format("{}-{}", pc.first_layer, pc.last_layer), pc.bytes, ms(post),
                   ms(pc.host_end - pc.host_start), ms(pc.stall),
                   have ? ms(chunk_sums[c].post_seconds / n) : std::string(9, '-'),
                   have ? ms(chunk_sums[c].host_seconds / n) : std::string(9, '-'),
                   have ? ms(chunk_sums[c].wait_seconds / n) : std::string(9, '-'));
      }
    }
  }
  if (last_eval) {
    summary["test_loss"] = last_eval->first;
    summary["test_accuracy"] = last_eval->second;
  }
  if (!last_checkpoint.empty()) summary["checkpoint"] = last_checkpoint.string();
  if (executor) {
    summary["swap_plan"] = plan_summary(*executor);
    if (root && !s.timeline.empty()) write_timeline(s.timeline, executor->timeline_svg(model_name));
  }
  emit(summary);
  if (executor && root && !s.json && !s.quiet) print_plan(*executor);
  if (root && !s.json && !s.quiet)
    fmt::print(
        "done: {} steps, final loss {:.4f}{}, {:.1f} images/s (median step {:.2f} ms: forward {:.2f}, backward "
        "{:.2f}, communication wait {:.2f}, update {:.2f}), weights {}{}\n",
        step, last_loss, last_eval ? fmt::format(", test accuracy {:.2f}%", 100 * last_eval->second) : "",
        summary["images_per_s"].get<double>(), 1e3 * med_total, 1e3 * med(&step_times::forward),
        1e3 * med(&step_times::backward), 1e3 * med(&step_times::comm_wait), 1e3 * med(&step_times::update),
        summary["weights_digest"].get<std::string>(),
        last_checkpoint.empty() ? "" : ", checkpoint " + last_checkpoint.string());
  return 0;
}

}  // namespace toru::apps::train
