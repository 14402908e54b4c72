// SPDX-License-Identifier: BSD-3-Clause
// The trainer: building it (agreement, data, model), the step, run() and the accessors.
#include "toru/train/trainer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <span>

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <fmt/format.h>

#include "impl.hpp"
#include "toru/core/agreement.hpp"
#include "toru/core/error.hpp"
#include "toru/core/mpi.hpp"
#include "toru/swap/models.hpp"
#include "toru/swap/onnx_import.hpp"
#include "toru/train/forward_hook.hpp"

namespace toru::train {

namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

}  // namespace

std::string_view to_string(data_source d) noexcept {
  return d == data_source::synthetic ? "synthetic" : "fashion-mnist";
}

namespace detail {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

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

}  // namespace detail

trainer::impl::impl(const trainer_options& options, MPI_Comm world)
    : o(options), comm(world, {.threads = 0}), mpi(comm.mpi()), rank(comm.rank()), nranks(comm.size()) {
  model_name = o.onnx.empty() ? o.model : o.onnx.filename().string();
}

std::string trainer::impl::name(std::string_view field) const {
  return o.argument_name ? o.argument_name(field) : "options." + std::string(field);
}

std::int64_t trainer::impl::timing_skip() const {
  // The first steps of a run (primitive creation, caches) are left out when there are more.
  return static_cast<std::int64_t>(times.size()) > o.timing_skip + 1 ? o.timing_skip : 0;
}

// Every option is agreed on and every local check (data files, the model) made before anything
// trains: one rank's bad option is every rank's clear error, never a hang.
void trainer::impl::build() {
  const auto& sp = o.swap_plan;
  // The agreement takes at most 16 arguments: the step's options in a call of their own, first.
  toru::validate_collectively(
      mpi, "toru::train::trainer",
      {{"accumulate", o.accumulate},
       same_text("label_smoothing", fmt::format("{}", o.label_smoothing)),
       same_text("clip_grad_norm", o.clip_grad_norm ? fmt::format("{}", *o.clip_grad_norm) : "unset"),
       same_text("betas/eps", fmt::format("{} {} {}", o.optimizer.beta1, o.optimizer.beta2, o.optimizer.eps))},
      [] {});
  toru::validate_collectively(
      mpi, "toru::train::trainer",
      {same_text("model", o.model),
       same_text("onnx", o.onnx.string()),
       {"data", static_cast<std::int64_t>(o.data)},
       {"batch", o.batch},
       {"epochs", o.epochs},
       {"steps", o.steps},
       {"optimizer", static_cast<std::int64_t>(o.optimizer.kind)},
       {"seed", static_cast<std::int64_t>(o.seed)},
       {"bucket_bytes", o.bucket_bytes},
       same_text("checkpoint", o.checkpoint.string()),
       {"checkpoint_every", o.checkpoint_every},
       {"resume", o.resume},
       {"schedule", static_cast<std::int64_t>(o.schedule.kind)},
       {"device", static_cast<std::int64_t>(o.device)},
       same_text("engine", fmt::format("{} {} {} {} {}", to_string(o.engine), o.chunk_layers,
                                       fmt::join(o.chunk_sizes, ","), o.tune, o.host_memory_mib)),
       same_text("numbers", fmt::format("{} {} {} {} {} {} {} {} {} {} {}", o.optimizer.lr, o.optimizer.momentum,
                                        o.optimizer.decay(), o.schedule.gamma, o.schedule.warmup_steps,
                                        o.schedule.step_size, sp.budget, static_cast<int>(sp.strategy),
                                        sp.link_bandwidth, sp.link_latency, sp.device_flops))},
      [&] {
        expect(o.model.empty() != o.onnx.empty(), name("model") + "/" + name("onnx"), "exactly one of them",
               o.model.empty() ? "neither" : "both");
        expect(o.batch >= 1 && o.batch % nranks == 0, name("batch"),
               fmt::format("a global batch divisible by the {} ranks", nranks), std::to_string(o.batch));
        validate(o.optimizer);
        expect(o.label_smoothing >= 0 && o.label_smoothing < 1, name("label_smoothing"), "a value in [0, 1)",
               fmt::format("{}", o.label_smoothing));
        if (o.clip_grad_norm) {
          expect(*o.clip_grad_norm > 0 && !std::isnan(*o.clip_grad_norm), name("clip_grad_norm"), "a max_norm > 0",
                 fmt::format("{}", *o.clip_grad_norm));
          expect(o.engine == engine_kind::allreduce && o.device == backend_kind::cpu, name("clip_grad_norm"),
                 fmt::format("{} allreduce on the cpu (CGDP's host sums the gradient chunk by chunk)", name("engine")),
                 fmt::format("{} {}", name("engine"), to_string(o.engine)));
        }
        expect(o.accumulate >= 1, name("accumulate"), "micro-batches per step >= 1", std::to_string(o.accumulate));
        if (o.accumulate > 1) {
          expect(
              o.batch % (nranks * o.accumulate) == 0, name("batch"),
              fmt::format("a global batch divisible by the {} ranks x {} {}", nranks, o.accumulate, name("accumulate")),
              std::to_string(o.batch));
          expect(o.engine == engine_kind::allreduce && o.device == backend_kind::cpu && sp.budget == 0 && !o.explain,
                 name("accumulate"),
                 fmt::format("{} allreduce on the cpu, without a swap plan or {}", name("engine"), name("explain")),
                 fmt::format("{} {}{}{}", name("engine"), to_string(o.engine), sp.budget ? ", a swap plan" : "",
                             o.explain ? ", " + name("explain") : ""));
        }
        expect(!o.resume || !o.checkpoint.empty(), name("resume"),
               fmt::format("{} DIR to resume from", name("checkpoint")), "no " + name("checkpoint"));

        local = o.batch / nranks;
        micro = local / o.accumulate;
        if (o.data == data_source::fashion_mnist) {
          const normalization norm = o.normalize ? fashion_mnist_normalization : normalization{};
          train_set = open_fashion_mnist(o.data_dir, split::train, norm);
          if (o.eval) test_set = open_fashion_mnist(o.data_dir, split::test, norm);
        }
        const std::int64_t side = o.data == data_source::fashion_mnist ? 28 : o.image;
        swap::graph g = o.onnx.empty() ? swap::build_model(o.model, {.batch = micro, .height = side, .width = side})
                                       : swap::import_onnx(o.onnx, {.batch = micro});
        const std::string device = name("device") + " cuda";
        if (sp.budget == 0) {
          if (o.device == backend_kind::cuda && o.engine != engine_kind::cgdp)
            throw error(errc::unsupported,
                        fmt::format("{}: only {} cgdp has a device path (gradients to pinned host buffers, host "
                                    "update); got {} {}",
                                    device, name("engine"), name("engine"), to_string(o.engine)));
          if (o.device == backend_kind::cuda) {
            // The device path is the engine's alone: the probes, the chunk search and checkpoints
            // read the weights on the host.
            expect(o.chunk_layers > 0 || !o.chunk_sizes.empty(), device,
                   fmt::format("an explicit {} or {} (the cost model is calibrated on CPU workers only)",
                               name("chunk_layers"), name("chunk_sizes")),
                   "neither");
            expect(!o.explain && !o.tune && o.checkpoint.empty(), device,
                   fmt::format("no {}, {} or {} (they read the weights on the host)", name("explain"), name("tune"),
                               name("checkpoint")),
                   "one of them");
            try {
              m.emplace(g, model_options{
                               .backend = backend_kind::cuda, .seed = o.seed, .label_smoothing = o.label_smoothing});
            } catch (const toru::error& e) {
              throw error(e.code(),
                          fmt::format("{} {} {}: {}", device, name("engine"), to_string(o.engine), e.message()));
            }
          } else {
            m.emplace(g, model_options{.threads = o.threads,
                                       .seed = o.seed,
                                       .label_smoothing = o.label_smoothing,
                                       .in_place_relu = true,
                                       .share_activations = true});
          }
        } else {
          executor_options eo;
          eo.strategy = sp.strategy;
          eo.budget = sp.budget;
          expect(sp.link_bandwidth > 0 && sp.link_latency >= 0, name("swap_plan"),
                 "a positive link bandwidth and a latency >= 0",
                 fmt::format("{} B/s, {} s", sp.link_bandwidth, sp.link_latency));
          expect(sp.device_flops > 0, name("device_flops"), "a positive rate in FLOP/s such as 20e9",
                 fmt::format("{}", sp.device_flops));
          eo.link = {.d2h = {.bandwidth = sp.link_bandwidth, .latency = sp.link_latency},
                     .h2d = {.bandwidth = sp.link_bandwidth, .latency = sp.link_latency}};
          eo.device.flops_fp32 = sp.device_flops;
          eo.device.flops_16 = sp.device_flops;
          eo.device.memory_bandwidth = 10e9;
          eo.device.op_overhead = 20e-6;
          // Every rank steps in lock-step (the engines' collectives), so all reach the calibration together.
          eo.agree_times = [c = mpi](std::span<double> t) {
            check_mpi(MPI_Allreduce(MPI_IN_PLACE, t.data(), static_cast<int>(t.size()), MPI_DOUBLE, MPI_MAX, c),
                      "MPI_Allreduce");
          };
          // A CUDA device: the plan runs on the GPU; without one the model refuses on every rank.
          try {
            m.emplace(g, model_options{.backend = o.device,
                                       .threads = o.threads,
                                       .seed = o.seed,
                                       .memory_capacity = eo.budget,
                                       .defer_activations = true,
                                       .label_smoothing = o.label_smoothing});
          } catch (const toru::error& e) {
            if (e.code() != errc::out_of_memory) throw;
            throw error(errc::out_of_memory,
                        fmt::format("{} {} bytes: too small for model '{}': its parameters, gradients and state "
                                    "alone do not fit ({})",
                                    name("memory_budget"), sp.budget, g.name, e.message()));
          }
          executor = plan_executor::install(*m, eo);
        }
        auto shape = m->input_shape();
        shape.erase(shape.begin());
        if (o.data == data_source::synthetic) {
          train_set = make_synthetic(shape, m->classes(), std::max(o.synthetic_samples, o.batch), o.seed);
          if (o.eval) test_set = make_synthetic(shape, m->classes(), std::max<std::int64_t>(o.batch, 1024), o.seed + 1);
        }
        expect(train_set->sample_shape() == shape, name("model"),
               fmt::format("a model taking {} samples of {}", to_string(o.data),
                           fmt::join(train_set->sample_shape(), "x")),
               fmt::format("input {}", fmt::join(shape, "x")));
        expect(m->classes() >= train_set->classes(), name("model"),
               fmt::format("at least the data's {} classes", train_set->classes()), std::to_string(m->classes()));
        if (m->space() != memory_space::host && o.engine != engine_kind::cgdp)
          throw error(errc::unsupported,
                      "toru::train::trainer: the optimizer runs on host buffers; device models are not wired in");
        if (o.engine != engine_kind::allreduce || o.explain) {
          const auto ls = group_layers(m->parameters());
          if (o.chunk_layers > 0) uniform_chunking(static_cast<int>(ls.size()), o.chunk_layers);
          if (!o.chunk_sizes.empty()) make_chunks(ls, o.chunk_sizes);
        }
        order.emplace(train_set->size(), o.batch, o.seed);
        total_steps = o.steps > 0 ? o.steps : o.epochs * order->steps_per_epoch();
        so = o.schedule;
        if (so.step_size == 0) so.step_size = order->steps_per_epoch();
        if (so.total_steps == 0) so.total_steps = total_steps;
        validate(so);
      });
  images.resize(static_cast<std::size_t>(local * train_set->sample_elements()));
  labels.resize(static_cast<std::size_t>(local));
  if (o.accumulate > 1) accumulated.resize(static_cast<std::size_t>(m->parameter_count()));
#ifdef __GLIBC__
  // Building freed the imported graph's weights (an ONNX ViT-B/16's 343 MB, parsed, then copied
  // into the model's graph and its parameters); glibc keeps freed heap pages resident until
  // trimmed, and they would count in the run's peak for good.
  malloc_trim(0);
#endif
}

forward_result trainer::impl::forward_micro(std::int64_t j, bool training, std::int64_t s, std::int64_t first_sample) {
  const auto per = static_cast<std::size_t>(micro * train_set->sample_elements());
  const auto k = static_cast<std::size_t>(j);
  return m->forward(
      std::span<const float>(images).subspan(k * per, per),
      std::span<const std::int32_t>(labels).subspan(k * static_cast<std::size_t>(micro),
                                                    static_cast<std::size_t>(micro)),
      {.training = training, .step = static_cast<std::uint64_t>(s), .first_sample = first_sample + j * micro});
}

trainer::trainer(const trainer_options& options, MPI_Comm comm) : impl_(std::make_unique<impl>(options, comm)) {
  auto& s = *impl_;
  s.build();
  // Host buffers only: a device model trains with CGDP, whose engine moves its buffers itself.
  s.dp.emplace(s.comm, s.m->parameters(), memory_space::host,
               data_parallel_options{.bucket_bytes = s.o.bucket_bytes,
                                     .first_bucket_bytes = std::min(s.o.first_bucket_bytes, s.o.bucket_bytes),
                                     .algorithm = s.o.reduction});
  s.layers = group_layers(s.m->parameters());
  s.chunk_layers = s.o.chunk_layers;
  // The forward takes each chunk of the last update when it reaches the chunk's first op, so a
  // worker never waits for a chunk its forward has not started; whatever engine is in place.
  set_forward_hook(*s.m, [this](int op) {
    if (impl_->eng) impl_->eng->before_forward_op(op, *impl_->m);
  });
  s.choose_engine();
  if (s.o.resume) resume(s.o.checkpoint);
}

trainer::~trainer() {
  if (impl_ && impl_->m) set_forward_hook(*impl_->m, {});
}

step_result trainer::step() {
  auto& s = *impl_;
  const auto spe = s.order->steps_per_epoch();
  const std::int64_t epoch = s.step / spe, in_epoch = s.step % spe;
  s.train_set->read(s.order->shard(epoch, in_epoch, s.rank, s.nranks), s.images, s.labels);
  step_timing t;
  const auto t0 = clock_type::now();
  forward_result r;
  s.eng->before_forward(*s.m);
  const std::int64_t k = s.o.accumulate;
  try {
    // Gradient accumulation: micro-batches 0..k-2 forward and backward here, their gradients
    // summed in order; the last one's backward runs in the engine, which adds the sum.
    for (std::int64_t j = 0; j < k; ++j) {
      forward_result rj;
      detail::agree(s.mpi, "toru::train::trainer forward",
                    [&] { rj = s.forward_micro(j, true, s.step, s.step * s.o.batch + s.rank * s.local); });
      r.loss += rj.loss / static_cast<double>(k);
      r.correct += rj.correct;
      if (j + 1 == k) break;
      const auto tb = clock_type::now();
      s.m->backward();
      const auto g = s.m->gradient_data();
      if (j == 0)
        std::copy(g.begin(), g.end(), s.accumulated.begin());
      else
        for (std::size_t i = 0; i < g.size(); ++i) s.accumulated[i] += g[i];
      t.backward += seconds_since(tb);
    }
  } catch (const toru::error& e) {
    throw error(e.code(),
                fmt::format("step {} (epoch {}): {}; {}", s.step, epoch, e.message(),
                            s.last_checkpoint.empty() ? std::string("no checkpoint was written")
                                                      : "the last good checkpoint is " + s.last_checkpoint.string()),
                e.rank(), e.where());
  }
  t.comm_wait = s.eng->forward_wait();  // CGDP waited inside the forward, chunk by chunk
  const double earlier_backward = t.backward;
  t.forward = seconds_since(t0) - t.comm_wait - earlier_backward;
  const double lr = s.lr(s.step);
  s.eng->backward_and_update(
      *s.m, s.step, lr, t,
      {.sum = k > 1 ? std::span<const float>(s.accumulated) : std::span<const float>{}, .count = k});
  t.backward += earlier_backward;
  t.total = seconds_since(t0);
  if (s.o.explain && static_cast<std::int64_t>(s.times.size()) >= s.o.timing_skip) {
    s.timer.add(*s.m, s.layers);
    if (const auto* st = s.eng->last_chunk_stats()) {
      // The chunk stats of the step before (its waits happened in this step's forward).
      s.chunk_sums.resize(st->size());
      for (std::size_t c = 0; c < st->size(); ++c) {
        s.chunk_sums[c].wait_seconds += (*st)[c].wait_seconds;
        s.chunk_sums[c].post_seconds += (*st)[c].post_seconds;
        s.chunk_sums[c].copy_in_seconds += (*st)[c].copy_in_seconds;
        s.chunk_sums[c].host_seconds += (*st)[c].host_seconds;
      }
    }
  }
  s.times.push_back(t);

  double g[2] = {r.loss, static_cast<double>(r.correct)};
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, g, 2, MPI_DOUBLE, MPI_SUM, s.mpi), "MPI_Allreduce");
  ++s.step;
  const step_result res{.step = s.step,
                        .epoch = epoch,
                        .in_epoch = in_epoch,
                        .loss = g[0] / s.nranks,
                        .accuracy = g[1] / static_cast<double>(s.o.batch),
                        .correct = static_cast<std::int64_t>(g[1]),
                        .lr = lr,
                        .grad_norm = s.eng->last_grad_norm(),
                        .time = t};
  if (s.o.events.step) s.o.events.step(res);
  return res;
}

void trainer::run() {
  auto& s = *impl_;
  const auto spe = s.order->steps_per_epoch();
  const std::int64_t first_step = s.step;
  epoch_result e;
  double loss = 0, correct = 0;
  while (s.step < s.total_steps) {
    const auto r = step();
    e.epoch = r.epoch;
    ++e.steps;
    loss += r.loss;
    correct += static_cast<double>(r.correct);
    if (!s.o.checkpoint.empty() && s.o.checkpoint_every > 0 && s.step % s.o.checkpoint_every == 0 &&
        s.step < s.total_steps)
      save(s.o.checkpoint);
    if (s.step % spe == 0 || s.step == s.total_steps) {
      if (s.o.eval && s.test_set) e.test = evaluate();
      e.train_loss = loss / static_cast<double>(e.steps);
      e.train_accuracy = correct / static_cast<double>(e.steps * s.o.batch);
      if (s.o.events.epoch) s.o.events.epoch(e);
      e = {};
      loss = correct = 0;
    }
  }
  if (s.eng) s.eng->sync_weights(*s.m);
  if (!s.o.checkpoint.empty() && s.step > first_step) save(s.o.checkpoint);
}

std::vector<float> trainer::weights() {
  auto& s = *impl_;
  s.eng->sync_weights(*s.m);
  if (!s.on_device()) return {s.m->parameter_data().begin(), s.m->parameter_data().end()};
  // A device model's through read_tensor, slot by slot.
  std::vector<float> h(static_cast<std::size_t>(s.m->parameter_count()));
  for (const auto& slot : s.m->parameters()) {
    const auto t = s.m->read_tensor(slot.name);
    std::copy(t.begin(), t.end(), h.begin() + slot.offset);
  }
  return h;
}

std::uint64_t trainer::weights_digest() {
  auto& s = *impl_;
  const auto of = [](std::span<const float> w) {
    return static_cast<std::uint64_t>(
        toru::digest(std::string_view(reinterpret_cast<const char*>(w.data()), w.size_bytes())));
  };
  if (s.on_device()) return of(weights());
  s.eng->sync_weights(*s.m);
  return of(s.m->parameter_data());
}

const trainer_options& trainer::options() const noexcept { return impl_->o; }
std::int64_t trainer::steps_done() const noexcept { return impl_->step; }
std::int64_t trainer::total_steps() const noexcept { return impl_->total_steps; }
std::int64_t trainer::steps_per_epoch() const noexcept { return impl_->order->steps_per_epoch(); }
int trainer::rank() const noexcept { return impl_->rank; }
int trainer::nranks() const noexcept { return impl_->nranks; }
const std::string& trainer::model_name() const noexcept { return impl_->model_name; }
model& trainer::model() noexcept { return *impl_->m; }
const dataset& trainer::train_data() const noexcept { return *impl_->train_set; }
const dataset* trainer::test_data() const noexcept { return impl_->test_set.get(); }
engine_kind trainer::engine() const noexcept { return impl_->eng->kind(); }
std::vector<int> trainer::chunk_sizes() const { return impl_->eng->chunk_sizes(); }
const std::string& trainer::engine_log() const noexcept { return impl_->chunk_log; }
std::size_t trainer::buckets() const noexcept { return impl_->dp->buckets().size(); }
const std::vector<step_timing>& trainer::timings() const noexcept { return impl_->times; }
const std::filesystem::path& trainer::last_checkpoint() const noexcept { return impl_->last_checkpoint; }
const std::filesystem::path& trainer::resumed_from() const noexcept { return impl_->resumed_from; }
const plan_executor* trainer::swap_plan() const noexcept { return impl_->executor.get(); }

}  // namespace toru::train
