#include "run.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <numeric>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "swap_plan.hpp"
#include "toru/comm/communicator.hpp"
#include "toru/core/agreement.hpp"
#include "toru/core/error.hpp"
#include "toru/core/mpi.hpp"
#include "toru/swap/models.hpp"
#include "toru/swap/onnx_import.hpp"
#include "toru/train/checkpoint.hpp"
#include "toru/train/data.hpp"
#include "toru/train/data_parallel.hpp"
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
          m.emplace(g, tt::model_options{.threads = s.threads, .seed = s.seed});
        } else {
          executor = install_plan(s, g, m);
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
        if (m->space() != tt::memory_space::host)
          throw error(errc::unsupported,
                      "toru-train: the optimizer runs on host buffers; device models are not wired in");
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
  tt::data_parallel dp(comm, m->parameters(), m->space(),
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

  std::vector<float> images(static_cast<std::size_t>(local * train_set->sample_elements()));
  std::vector<std::int32_t> labels(static_cast<std::size_t>(local));
  fs::path last_checkpoint = resumed ? resumed_from : fs::path{};

  auto save = [&](std::int64_t steps_done) {
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
      st.optimizer_steps = opt.steps();
      st.settings = json{{"lr", s.lr}, {"optimizer", s.optimizer}, {"schedule", s.schedule}, {"data", s.data}}.dump();
      const auto p = m->parameter_data();
      st.parameters.assign(p.begin(), p.end());
      st.buffers = std::move(all_buffers);
      st.optimizer_state.assign(opt.state().begin(), opt.state().end());
      tt::write_checkpoint(s.checkpoint, st);
    });
    // Every rank names the same file in its messages (only rank 0 wrote it).
    last_checkpoint = fs::path(s.checkpoint) / fmt::format("checkpoint-{}.toru", steps_done);
  };

  // Evaluation on averaged batch-norm statistics (rank order), restored afterwards so that the
  // training state, and with it a resumed run, is unaffected.
  auto evaluate = [&]() -> std::pair<double, double> {
    const auto buf = m->buffer_data();
    const std::vector<float> saved(buf.begin(), buf.end());
    dp.average(buf);
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
    t.forward = seconds_since(t0);
    const auto t1 = clock_type::now();
    dp.begin_step(m->gradient_data());
    m->backward([&](int slot) { dp.gradient_ready(slot); });
    t.backward = seconds_since(t1);
    t.comm_wait = dp.finish();
    const auto t3 = clock_type::now();
    opt.step(m->parameter_data(), m->gradient_data(), tt::learning_rate(oo.lr, so, step));
    m->parameters_changed();
    t.update = seconds_since(t3);
    t.total = seconds_since(t0);
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
               {"weights_digest", hex_digest(m->parameter_data())}};
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
