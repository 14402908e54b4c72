// SPDX-License-Identifier: BSD-3-Clause
// Optimizers and learning-rate schedules over a model's flat parameter and gradient buffers
// (host memory). The update rules are PyTorch 1.13's (torch.optim.SGD with dampening 0, Adam and
// AdamW without amsgrad), element for element in float with the scalars in double, so a toru run and a
// PyTorch run of the same network follow each other to rounding.
//
//   toru::train::optimizer opt({.kind = toru::train::optimizer_kind::adam, .lr = 1e-3}, m.parameter_count());
//   opt.step(m.parameter_data(), m.gradient_data(), toru::train::learning_rate(opt.options(), sched, step));
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace toru::train {

enum class optimizer_kind { sgd, momentum, adam, adamw };

/// "sgd", "momentum", "adam", "adamw"; parse_optimizer throws errc::invalid_argument naming `argument` otherwise.
std::string_view to_string(optimizer_kind kind) noexcept;
optimizer_kind parse_optimizer(std::string_view name, std::string_view argument = "optimizer");

struct optimizer_options {
  optimizer_kind kind = optimizer_kind::sgd;
  double lr = 0.01;       // base learning rate (> 0); the schedule scales it
  double momentum = 0.9;  // momentum: the coefficient (PyTorch's `momentum`, dampening 0)
  bool nesterov = false;  // momentum: Nesterov's variant
  // sgd, momentum, adam: L2 penalty added to the gradient; adamw: decoupled decay, the parameters
  // are multiplied by 1 - lr * weight_decay before the Adam step (PyTorch's `weight_decay`).
  // Unset: PyTorch's default, 0.01 for adamw and 0 otherwise (decay()).
  std::optional<double> weight_decay{};
  double beta1 = 0.9;    // adam, adamw
  double beta2 = 0.999;  // adam, adamw
  double eps = 1e-8;     // adam, adamw

  /// weight_decay, or PyTorch's default for `kind` where it is unset.
  double decay() const noexcept { return weight_decay.value_or(kind == optimizer_kind::adamw ? 0.01 : 0.0); }
};

/// Throws errc::invalid_argument naming the field: lr <= 0 or not finite, momentum outside [0, 1),
/// weight_decay < 0, betas outside [0, 1), eps <= 0, nesterov without momentum.
void validate(const optimizer_options& options);

/// Scales `grads` in place so that their global 2-norm is at most `max_norm` and returns the norm
/// before clipping (torch.nn.utils.clip_grad_norm_ with norm_type 2: the factor
/// max_norm / (norm + 1e-6), applied where it is below 1). The norm is accumulated in double.
/// Throws errc::invalid_argument naming `argument` for max_norm <= 0 or not finite. max_norm
/// infinite: no clipping, the norm only. `threads` as optimizer::set_threads.
double clip_grad_norm(std::span<float> grads, double max_norm, std::string_view argument = "max_norm", int threads = 1);
/// The 2-norm of `grads`, accumulated in double (in fixed blocks, so equal at any `threads`).
double grad_norm(std::span<const float> grads, int threads = 1);

enum class schedule_kind { none, step, cosine };
std::string_view to_string(schedule_kind kind) noexcept;
schedule_kind parse_schedule(std::string_view name, std::string_view argument = "schedule");

/// Learning-rate schedule as a pure function of the global step (0-based), so a resumed run needs
/// no schedule state. step: lr * gamma^floor(step / step_size) (torch StepLR per step).
/// cosine: linear warm-up lr * (step + 1) / warmup for step < warmup, then
/// min_lr + (lr - min_lr) * (1 + cos(pi * t / T)) / 2 with t = step - warmup, T = total - warmup
/// (torch CosineAnnealingLR's closed form), min_lr from t >= T on.
struct schedule_options {
  schedule_kind kind = schedule_kind::none;
  std::int64_t step_size = 1000;  // step
  double gamma = 0.1;             // step
  std::int64_t total_steps = 0;   // cosine: length of warm-up plus decay (> warmup_steps)
  std::int64_t warmup_steps = 0;  // cosine
  double min_lr = 0;              // cosine
};
void validate(const schedule_options& options);
double learning_rate(double base_lr, const schedule_options& schedule, std::int64_t step);

/// One optimizer over `count` parameters. Not thread-safe; one per model replica (data parallel:
/// every rank applies the same update to the same averaged gradient, so replicas stay equal).
class optimizer {
 public:
  optimizer(const optimizer_options& options, std::int64_t count);

  const optimizer_options& options() const noexcept { return options_; }
  std::int64_t count() const noexcept { return count_; }

  /// params -= update(grads) with learning rate `lr` (the scheduled one). Both spans hold count()
  /// floats. Increments steps(). Where `norm` is given, also stores grad_norm(grads) there (the
  /// same value, from the same pass over the gradient).
  void step(std::span<float> params, std::span<const float> grads, double lr, double* norm = nullptr);
  /// OpenMP threads for step()'s passes over the parameters (memory-bound; split in fixed blocks,
  /// each element's arithmetic unchanged, so the result is the same at any count). 1, the default,
  /// keeps them on the calling thread, as the CGDP host threads need (they share the cores with the
  /// workers' compute); 0: OpenMP's default. Throws errc::invalid_argument for a negative count.
  void set_threads(int threads);
  int threads() const noexcept { return threads_; }

  /// Steps taken (Adam's bias correction; momentum's first step copies the gradient).
  std::int64_t steps() const noexcept { return steps_; }
  /// The state for checkpoints: sgd none, momentum the buffer (count), adam and adamw exp_avg then
  /// exp_avg_sq (2 * count). Restore by writing into state() and calling set_steps().
  std::span<float> state() noexcept { return state_; }
  std::span<const float> state() const noexcept { return state_; }
  void set_steps(std::int64_t steps);

 private:
  optimizer_options options_;
  std::int64_t count_;
  std::int64_t steps_ = 0;
  int threads_ = 1;
  std::vector<float> state_;
};

}  // namespace toru::train
