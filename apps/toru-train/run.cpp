// SPDX-License-Identifier: BSD-3-Clause
// toru-train's run: the command line's settings as toru::train::trainer_options, the trainer, and
// its events and results as text (a progress bar, epoch lines, a summary) or JSON lines.
#include "run.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "swap_plan.hpp"
#include "toru/core/agreement.hpp"
#include "toru/core/error.hpp"
#include "toru/train/trainer.hpp"

namespace toru::apps::train {

namespace tt = toru::train;
using json = nlohmann::ordered_json;

namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

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

// The trainer's errors name options by this program's flags.
std::string flag(std::string_view field) {
  if (field == "chunk_sizes") return "--chunks";
  if (field == "swap_plan") return "--link-bandwidth/--link-latency";
  std::string f = "--" + std::string(field);
  std::replace(f.begin(), f.end(), '_', '-');
  return f;
}

tt::trainer_options to_options(const settings& s) {
  if (!s.export_onnx.empty() && s.onnx.empty())
    throw error(errc::invalid_argument,
                "--export-onnx: expected --onnx FILE (the trained model is written into its graph), got --model");
  if (!s.timeline.empty() && s.memory_budget.empty())
    throw error(errc::invalid_argument,
                "--timeline: expected --memory-budget (the timeline is the executed plan's), got no --memory-budget");
  return {.model = s.model,
          .onnx = s.onnx,
          .data = s.data == "synthetic" ? tt::data_source::synthetic : tt::data_source::fashion_mnist,
          .data_dir = s.data_dir,
          .normalize = s.normalize,
          .synthetic_samples = s.synthetic_samples,
          .image = s.image,
          .batch = s.batch,
          .epochs = s.epochs,
          .steps = s.steps,
          .optimizer = {.kind = tt::parse_optimizer(s.optimizer, "--optimizer"),
                        .lr = s.lr,
                        .momentum = s.momentum,
                        .nesterov = s.nesterov,
                        .weight_decay = s.weight_decay},
          .label_smoothing = s.label_smoothing,
          .clip_grad_norm = s.clip_grad_norm,
          .accumulate = s.accumulate,
          .schedule = {.kind = tt::parse_schedule(s.schedule, "--schedule"),
                       .step_size = s.step_size,
                       .gamma = s.gamma,
                       .warmup_steps = s.warmup},
          .threads = s.threads,
          .seed = s.seed,
          .checkpoint = s.checkpoint,
          .checkpoint_every = s.checkpoint_every,
          .resume = s.resume,
          .eval = s.eval,
          .engine = tt::parse_engine(s.engine, "--engine"),
          .bucket_bytes = s.bucket_bytes,
          .first_bucket_bytes = s.first_bucket_bytes,
          .reduction = s.reduction == "mpi" ? tt::reduction::mpi : tt::reduction::ordered,
          .device = s.device == "cuda" ? tt::backend_kind::cuda : tt::backend_kind::cpu,
          .chunk_layers = s.chunk_layers,
          .chunk_sizes = s.chunk_sizes,
          .explain = s.explain,
          .tune = s.tune,
          .tune_cache = s.tune_cache,
          .tune_window = s.tune_window,
          .host_memory_mib = s.host_memory_mib,
          .swap_plan = parse_swap_plan(s),
          .timing_skip = s.warmup_steps_excluded,
          .argument_name = flag};
}

void print_explain(const tt::explain_report& r, tt::engine_kind engine) {
  const auto& mm = r.machine;
  const auto& ar = r.allreduce;
  const auto& cp = r.cgdp;
  fmt::print(
      "explain: machine: {} worker(s)/node x {} node(s); copy {:.2f} GB/s, host sum {:.2f} GB/s, update "
      "{:.3f} ns/B, reduction {:.2f} GB/s + {:.1f} us ({:.0f}% of it while computing), sync {:.0f} us (thread "
      "handoff, there and back; "
      "{:.0f} us with every core busy)\n",
      mm.workers, mm.nodes, mm.d2h_bytes_per_s / 1e9, mm.host_sum_bytes_per_s / 1e9, mm.host_update_s_per_byte * 1e9,
      mm.allreduce_bytes_per_s / 1e9, mm.allreduce_latency_s * 1e6, 100 * mm.allreduce_overlap,
      mm.sync_overhead_s * 1e6, mm.contended_sync_s * 1e6);
  fmt::print(
      "explain: the layers' op times (slowest rank each) add up to {:.0f}% of the forward and {:.0f}% of the "
      "backward (median, slowest rank); the layers are scaled to the phases\n",
      100 * r.op_timer_cover[0], 100 * r.op_timer_cover[1]);
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
      tt::describe_chunking(r.chunk_sizes), tt::to_string(engine), 1e3 * r.measured_step, 100 * r.prediction_error);
  fmt::print("explain: {:>5} {:>7} {:>10} | {:>9} {:>9} {:>9} | {:>9} {:>9} {:>9}\n", "chunk", "layers", "bytes",
             "pred post", "pred host", "pred wait", "meas post", "meas host", "meas wait");
  for (std::size_t c = 0; c < cp.chunks.size(); ++c) {
    const auto& pc = cp.chunks[c];
    const auto ms = [&](double x) { return fmt::format("{:9.3f}", 1e3 * x); };
    const bool have = c < r.measured_chunks.size();
    fmt::print("explain: {:>5} {:>7} {:>10} | {} {} {} | {} {} {}\n", c,
               fmt::format("{}-{}", pc.first_layer, pc.last_layer), pc.bytes, ms(pc.post),
               ms(pc.host_end - pc.host_start), ms(pc.stall),
               have ? ms(r.measured_chunks[c].post_seconds) : std::string(9, '-'),
               have ? ms(r.measured_chunks[c].host_seconds) : std::string(9, '-'),
               have ? ms(r.measured_chunks[c].wait_seconds) : std::string(9, '-'));
  }
}

}  // namespace

int run(const settings& s, MPI_Comm world) {
  int rank = 0;
  MPI_Comm_rank(world, &rank);
  const bool root = rank == 0;
  const bool text = root && !s.json && !s.quiet;
  const bool tty = text && ::isatty(STDOUT_FILENO);
  auto emit = [&](const json& j) {
    if (root && s.json) fmt::print("{}\n", j.dump());
  };

  // A setting this program cannot turn into options is this rank's error in the trainer's
  // agreement: every rank reports the same one.
  tt::trainer_options o;
  std::optional<toru::defer_error> deferred;
  try {
    o = to_options(s);
  } catch (...) {
    deferred.emplace(std::current_exception());
  }
  std::int64_t epochs = 1, spe = 1;
  double last_loss = 0;
  o.events.step = [&](const tt::step_result& r) {
    last_loss = r.loss;
    const double ips = static_cast<double>(s.batch) / r.time.total;
    emit(json{{"type", "step"},
              {"step", r.step},
              {"epoch", r.epoch},
              {"loss", r.loss},
              {"accuracy", r.accuracy},
              {"lr", r.lr},
              {"grad_norm", r.grad_norm},  // before clipping; null with CGDP
              {"images_per_s", ips},
              {"time",
               {{"forward", r.time.forward},
                {"backward", r.time.backward},
                {"comm_wait", r.time.comm_wait},
                {"update", r.time.update},
                {"total", r.time.total}}}});
    if (tty) progress_bar(r.epoch, epochs, r.in_epoch, spe, r.loss, r.accuracy, ips);
  };
  std::optional<tt::evaluation> last_eval;
  o.events.epoch = [&](const tt::epoch_result& e) {
    if (tty) fmt::print("\n");
    if (e.test) last_eval = e.test;
    json j{{"type", "epoch"},
           {"epoch", e.epoch},
           {"steps", e.steps},
           {"train_loss", e.train_loss},
           {"train_accuracy", e.train_accuracy}};
    if (last_eval) {
      j["test_loss"] = last_eval->loss;
      j["test_accuracy"] = last_eval->accuracy;
      j["test_samples"] = last_eval->samples;
    }
    emit(j);
    if (text)
      fmt::print("epoch {}: train loss {:.4f} accuracy {:.2f}%{}\n", e.epoch + 1, e.train_loss, 100 * e.train_accuracy,
                 last_eval
                     ? fmt::format(" | test loss {:.4f} accuracy {:.2f}%", last_eval->loss, 100 * last_eval->accuracy)
                     : "");
  };

  tt::trainer t(o, world);
  deferred.reset();
  spe = t.steps_per_epoch();
  epochs = (t.total_steps() + spe - 1) / spe;
  const auto engine = t.engine();
  const bool cgdp = engine != tt::engine_kind::allreduce;
  if (text && cgdp)
    fmt::print("toru-train: engine {}, chunks {} ({} layers){}{}\n", tt::to_string(engine),
               tt::describe_chunking(t.chunk_sizes()), tt::group_layers(t.model().parameters()).size(),
               t.engine_log().empty() ? "" : "; ", t.engine_log());
  if (cgdp && (s.verbose || s.explain)) {
    // Every rank says where its helper went (rank order, through rank 0).
    const auto lines = t.helper_bindings();
    if (root && !s.json)
      for (std::size_t r = 0; r < lines.size(); ++r) fmt::print("  rank {} helper thread: {}\n", r, lines[r]);
  }
  if (text)
    fmt::print(
        "toru-train: {} on {} ({} samples), {} rank(s), global batch {} ({} per rank), {} steps ({} per epoch), "
        "{} lr {}, {} bucket(s){}\n",
        t.model_name(), s.data, t.train_data().size(), t.nranks(), s.batch, s.batch / t.nranks(), t.total_steps(), spe,
        s.optimizer, s.lr, t.buckets(),
        t.resumed_from().empty()
            ? ""
            : fmt::format(", resumed from {} at step {}", t.resumed_from().string(), t.steps_done()));

  const std::int64_t first_step = t.steps_done();
  const auto run_start = std::chrono::steady_clock::now();
  t.run();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start).count();
  const std::int64_t step = t.steps_done();
  if (!s.export_onnx.empty()) t.export_onnx(s.export_onnx);

  // Timing: the first steps of a run (primitive creation, caches) are excluded when there are more.
  const auto& times = t.timings();
  const std::size_t skip = times.size() > static_cast<std::size_t>(s.warmup_steps_excluded) + 1
                               ? static_cast<std::size_t>(s.warmup_steps_excluded)
                               : 0;
  auto med = [&](double tt::step_timing::*field) {
    std::vector<double> v;
    for (std::size_t i = skip; i < times.size(); ++i) v.push_back(times[i].*field);
    return median(v);
  };
  std::vector<double> totals;
  for (std::size_t i = skip; i < times.size(); ++i) totals.push_back(times[i].total);
  const double med_total = median(totals);
  json summary{{"type", "summary"},
               {"model", t.model_name()},
               {"data", s.data},
               {"ranks", t.nranks()},
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
                {{"forward", med(&tt::step_timing::forward)},
                 {"backward", med(&tt::step_timing::backward)},
                 {"comm_wait", med(&tt::step_timing::comm_wait)},
                 {"update", med(&tt::step_timing::update)}}},
               {"buckets", t.buckets()},
               {"reduction", std::string(tt::to_string(t.options().reduction))},
               {"parameters", t.model().parameter_count()},
               {"weights_digest", fmt::format("{:016x}", t.weights_digest())}};
  summary["engine"] = std::string(tt::to_string(engine));
  if (cgdp) summary["chunks"] = tt::describe_chunking(t.chunk_sizes());
  if (const auto r = t.explain()) {
    summary["explain"] = {{"predicted_allreduce_s", r->allreduce.step},
                          {"predicted_cgdp_s", r->cgdp.step},
                          {"predicted_tail_s", r->cgdp.tail},
                          {"measured_s", r->measured_step},
                          {"cores", r->machine.cores},
                          {"helpers_without_core", r->cgdp.helpers_without_core},
                          {"sync_s", r->machine.sync_overhead_s},
                          {"contended_sync_s", r->machine.contended_sync_s},
                          {"allreduce_overlap", r->machine.allreduce_overlap},
                          {"op_timer_cover", {{"forward", r->op_timer_cover[0]}, {"backward", r->op_timer_cover[1]}}},
                          {"prediction_error", r->prediction_error}};
    if (root && !s.json) print_explain(*r, engine);
  }
  if (last_eval) {
    summary["test_loss"] = last_eval->loss;
    summary["test_accuracy"] = last_eval->accuracy;
  }
  const auto& last_checkpoint = t.last_checkpoint();
  if (!last_checkpoint.empty()) summary["checkpoint"] = last_checkpoint.string();
  if (!s.export_onnx.empty()) summary["onnx_export"] = s.export_onnx;
  if (const auto* plan = t.swap_plan()) {
    summary["swap_plan"] = plan_summary(*plan);
    if (root && !s.timeline.empty()) write_timeline(s.timeline, plan->timeline_svg(t.model_name()));
  }
  emit(summary);
  if (t.swap_plan() && text) print_plan(*t.swap_plan());
  if (text)
    fmt::print(
        "done: {} steps, final loss {:.4f}{}, {:.1f} images/s (median step {:.2f} ms: forward {:.2f}, backward "
        "{:.2f}, communication wait {:.2f}, update {:.2f}), weights {}{}{}\n",
        step, last_loss, last_eval ? fmt::format(", test accuracy {:.2f}%", 100 * last_eval->accuracy) : "",
        summary["images_per_s"].get<double>(), 1e3 * med_total, 1e3 * med(&tt::step_timing::forward),
        1e3 * med(&tt::step_timing::backward), 1e3 * med(&tt::step_timing::comm_wait),
        1e3 * med(&tt::step_timing::update), summary["weights_digest"].get<std::string>(),
        last_checkpoint.empty() ? "" : ", checkpoint " + last_checkpoint.string(),
        s.export_onnx.empty() ? "" : ", ONNX " + s.export_onnx);
  return 0;
}

}  // namespace toru::apps::train
