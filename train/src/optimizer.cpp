// SPDX-License-Identifier: BSD-3-Clause
#include "toru/train/optimizer.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>

#include <fmt/format.h>

#include "simd_clones.hpp"
#include "toru/core/error.hpp"

namespace toru::train {

std::string_view to_string(optimizer_kind kind) noexcept {
  switch (kind) {
    case optimizer_kind::sgd:
      return "sgd";
    case optimizer_kind::momentum:
      return "momentum";
    case optimizer_kind::adam:
      return "adam";
    case optimizer_kind::adamw:
      return "adamw";
  }
  return "?";
}

optimizer_kind parse_optimizer(std::string_view name, std::string_view argument) {
  for (auto k : {optimizer_kind::sgd, optimizer_kind::momentum, optimizer_kind::adam, optimizer_kind::adamw})
    if (name == to_string(k)) return k;
  throw error(errc::invalid_argument,
              fmt::format("{}: expected sgd, momentum, adam or adamw, got '{}'", argument, name));
}

std::string_view to_string(schedule_kind kind) noexcept {
  switch (kind) {
    case schedule_kind::none:
      return "none";
    case schedule_kind::step:
      return "step";
    case schedule_kind::cosine:
      return "cosine";
  }
  return "?";
}

schedule_kind parse_schedule(std::string_view name, std::string_view argument) {
  for (auto k : {schedule_kind::none, schedule_kind::step, schedule_kind::cosine})
    if (name == to_string(k)) return k;
  throw error(errc::invalid_argument, fmt::format("{}: expected none, step or cosine, got '{}'", argument, name));
}

namespace {
bool in_unit(double x) { return std::isfinite(x) && x >= 0 && x < 1; }
}  // namespace

void validate(const optimizer_options& o) {
  expect(std::isfinite(o.lr) && o.lr > 0, "lr", "a finite learning rate > 0", fmt::format("{}", o.lr));
  expect(std::isfinite(o.decay()) && o.decay() >= 0, "weight_decay", "a finite value >= 0",
         fmt::format("{}", o.decay()));
  if (o.kind == optimizer_kind::momentum) {
    expect(in_unit(o.momentum) && o.momentum > 0, "momentum", "a value in (0, 1)", fmt::format("{}", o.momentum));
  } else {
    expect(!o.nesterov, "nesterov", "only with the momentum optimizer", std::string(to_string(o.kind)));
  }
  if (o.kind == optimizer_kind::adam || o.kind == optimizer_kind::adamw) {
    expect(in_unit(o.beta1), "beta1", "a value in [0, 1)", fmt::format("{}", o.beta1));
    expect(in_unit(o.beta2), "beta2", "a value in [0, 1)", fmt::format("{}", o.beta2));
    expect(std::isfinite(o.eps) && o.eps > 0, "eps", "a finite value > 0", fmt::format("{}", o.eps));
  }
}

void validate(const schedule_options& s) {
  if (s.kind == schedule_kind::step) {
    expect(s.step_size > 0, "schedule step_size", "> 0", std::to_string(s.step_size));
    expect(std::isfinite(s.gamma) && s.gamma > 0, "schedule gamma", "a finite value > 0", fmt::format("{}", s.gamma));
  }
  if (s.kind == schedule_kind::cosine) {
    expect(s.warmup_steps >= 0, "warmup steps", ">= 0", std::to_string(s.warmup_steps));
    expect(s.total_steps > s.warmup_steps, "schedule total steps", "more than the warm-up steps",
           fmt::format("{} (warm-up {})", s.total_steps, s.warmup_steps));
    expect(std::isfinite(s.min_lr) && s.min_lr >= 0, "min lr", "a finite value >= 0", fmt::format("{}", s.min_lr));
  }
}

double learning_rate(double base_lr, const schedule_options& s, std::int64_t step) {
  switch (s.kind) {
    case schedule_kind::none:
      return base_lr;
    case schedule_kind::step:
      return base_lr * std::pow(s.gamma, static_cast<double>(step / s.step_size));
    case schedule_kind::cosine: {
      if (step < s.warmup_steps) return base_lr * static_cast<double>(step + 1) / static_cast<double>(s.warmup_steps);
      const auto t = static_cast<double>(step - s.warmup_steps);
      const auto T = static_cast<double>(s.total_steps - s.warmup_steps);
      if (t >= T) return s.min_lr;
      return s.min_lr + (base_lr - s.min_lr) * (1 + std::cos(std::numbers::pi * t / T)) / 2;
    }
  }
  return base_lr;
}

optimizer::optimizer(const optimizer_options& options, std::int64_t count) : options_(options), count_(count) {
  validate(options);
  expect(count >= 0, "count", ">= 0", std::to_string(count));
  const std::int64_t words = options.kind == optimizer_kind::sgd        ? 0
                             : options.kind == optimizer_kind::momentum ? count
                                                                        : 2 * count;  // adam, adamw
  state_.assign(static_cast<std::size_t>(words), 0.0f);
}

void optimizer::set_threads(int threads) {
  expect(threads >= 0, "threads", ">= 0 (0: OpenMP's default)", std::to_string(threads));
  threads_ = threads;
}

void optimizer::set_steps(std::int64_t steps) {
  expect(steps >= 0, "steps", ">= 0", std::to_string(steps));
  steps_ = steps;
}

namespace {

// The update loops, cloned (simd_clones.hpp; in the baseline clone std::fma is a libm call per
// element). Each element's arithmetic is the same in both, and -ffp-contract=off
// (train/CMakeLists.txt) keeps the compiler from fusing what PyTorch does not: the clones agree
// bitwise.

TORU_SIMD_CLONES
void sgd_step(float* __restrict p, const float* __restrict g, std::size_t n, float wd, float neg_lr) {
#pragma omp simd
  for (std::size_t i = 0; i < n; ++i) {
    const float d = wd != 0 ? std::fma(p[i], wd, g[i]) : g[i];
    p[i] = std::fma(d, neg_lr, p[i]);
  }
}

TORU_SIMD_CLONES
void momentum_step(float* __restrict p, const float* __restrict g, float* __restrict buf, std::size_t n, float wd,
                   float neg_lr, float mu, bool first, bool nesterov) {
#pragma omp simd
  for (std::size_t i = 0; i < n; ++i) {
    float d = wd != 0 ? std::fma(p[i], wd, g[i]) : g[i];
    buf[i] = first ? d : std::fma(d, 1.0f, buf[i] * mu);  // dampening 0: alpha = 1 - 0
    d = nesterov ? std::fma(buf[i], mu, d) : buf[i];
    p[i] = std::fma(d, neg_lr, p[i]);
  }
}

TORU_SIMD_CLONES
void scale(float* __restrict p, std::size_t n, float factor) {
#pragma omp simd
  for (std::size_t i = 0; i < n; ++i) p[i] *= factor;
}

struct adam_scalars {
  float wd, neg_step_size, bc2_sqrt, b1, one_b1, b2, one_b2, eps;
};

TORU_SIMD_CLONES
void adam_step(float* __restrict p, const float* __restrict g, float* __restrict m, float* __restrict v, std::size_t n,
               adam_scalars k) {
#pragma omp simd
  for (std::size_t i = 0; i < n; ++i) {
    const float d = k.wd != 0 ? std::fma(p[i], k.wd, g[i]) : g[i];
    m[i] = std::fma(d, k.one_b1, m[i] * k.b1);
    v[i] = v[i] * k.b2 + k.one_b2 * d * d;
    const float denom = std::sqrt(v[i]) / k.bc2_sqrt + k.eps;
    p[i] = p[i] + k.neg_step_size * m[i] / denom;
  }
}

double sum_squares(const float* __restrict g, std::size_t n) {
  double sum = 0;
#pragma omp simd reduction(+ : sum)
  for (std::size_t i = 0; i < n; ++i) sum += static_cast<double>(g[i]) * g[i];
  return sum;
}

// The passes over every parameter are memory-bound: fixed blocks spread over OpenMP's threads, as
// PyTorch's elementwise kernels (at::parallel_for). Blocks do not depend on the thread count, so
// neither do the results.
constexpr std::size_t update_block = std::size_t{1} << 16;

std::size_t blocks_of(std::size_t n) { return (n + update_block - 1) / update_block; }

// The 2-norm from per-block sums of squares, added in block order.
double norm_of(const std::vector<double>& part) {
  double sum = 0;
  for (const double p : part) sum += p;
  return std::sqrt(sum);
}

template <class F>
void for_blocks(std::size_t n, int threads, F&& f) {
  const std::size_t blocks = blocks_of(n);
  const int t = threads > 0 ? threads : omp_get_max_threads();
  if (t <= 1 || blocks <= 1) {
    for (std::size_t b = 0; b < blocks; ++b) f(b * update_block, std::min(n, (b + 1) * update_block));
    return;
  }
#pragma omp parallel for schedule(static) num_threads(t)
  for (std::size_t b = 0; b < blocks; ++b) f(b * update_block, std::min(n, (b + 1) * update_block));
}

}  // namespace

double grad_norm(std::span<const float> grads, int threads) {
  // Per block, then the blocks in order: the same sum at any thread count.
  std::vector<double> part(blocks_of(grads.size()));
  for_blocks(grads.size(), threads, [&](std::size_t lo, std::size_t hi) {
    part[lo / update_block] = sum_squares(grads.data() + lo, hi - lo);
  });
  return norm_of(part);
}

double clip_grad_norm(std::span<float> grads, double max_norm, std::string_view argument, int threads) {
  expect(max_norm > 0 && !std::isnan(max_norm), argument, "a max_norm > 0", fmt::format("{}", max_norm));
  const double norm = grad_norm(grads, threads);
  // PyTorch 1.13: clip_coef = max_norm / (total_norm + 1e-6), clamped to at most 1 and multiplied
  // in float; a factor of exactly 1 changes nothing, so it is skipped.
  const double coef = max_norm / (norm + 1e-6);
  if (coef < 1)
    for_blocks(grads.size(), threads,
               [&](std::size_t lo, std::size_t hi) { scale(grads.data() + lo, hi - lo, static_cast<float>(coef)); });
  return norm;
}

// PyTorch's `add(x, alpha=a)` runs a vectorised fused multiply-add on x86 (Vectorized::fmadd), hence
// std::fma where it does; the other operations follow its expression order.
void optimizer::step(std::span<float> params, std::span<const float> grads, double lr, double* norm) {
  const auto n = static_cast<std::size_t>(count_);
  expect(params.size() == n, "params", fmt::format("{} floats", n), std::to_string(params.size()));
  expect(grads.size() == n, "grads", fmt::format("{} floats", n), std::to_string(grads.size()));
  expect(std::isfinite(lr) && lr > 0, "lr", "a finite learning rate > 0", fmt::format("{}", lr));
  const auto wd = static_cast<float>(options_.decay());
  const auto neg_lr = static_cast<float>(-lr);
  // The norm from the same pass: each block's gradient is in cache when its update reads it. Same
  // blocks and order as grad_norm(), so the same value.
  std::vector<double> part(norm ? blocks_of(n) : 0);
  const auto each_block = [&](auto&& update) {
    for_blocks(n, threads_, [&](std::size_t lo, std::size_t hi) {
      if (norm) part[lo / update_block] = sum_squares(grads.data() + lo, hi - lo);
      update(lo, hi);
    });
  };
  switch (options_.kind) {
    case optimizer_kind::sgd:
      each_block([&](std::size_t lo, std::size_t hi) {
        sgd_step(params.data() + lo, grads.data() + lo, hi - lo, wd, neg_lr);
      });
      break;
    case optimizer_kind::momentum:
      each_block([&](std::size_t lo, std::size_t hi) {
        momentum_step(params.data() + lo, grads.data() + lo, state_.data() + lo, hi - lo, wd, neg_lr,
                      static_cast<float>(options_.momentum), steps_ == 0, options_.nesterov);
      });
      break;
    case optimizer_kind::adam:
    case optimizer_kind::adamw: {
      const bool decoupled = options_.kind == optimizer_kind::adamw;
      // AdamW (torch.optim.AdamW, 1.13): param.mul_(1 - lr * weight_decay), the factor in double
      // and rounded once, then Adam without the L2 term.
      const auto factor = static_cast<float>(1 - lr * options_.decay());
      const double step = static_cast<double>(steps_ + 1);
      const double bc1 = 1 - std::pow(options_.beta1, step);
      const double bc2 = 1 - std::pow(options_.beta2, step);
      const adam_scalars k{.wd = decoupled ? 0.0f : wd,
                           .neg_step_size = static_cast<float>(-(lr / bc1)),
                           .bc2_sqrt = static_cast<float>(std::sqrt(bc2)),
                           .b1 = static_cast<float>(options_.beta1),
                           .one_b1 = static_cast<float>(1 - options_.beta1),
                           .b2 = static_cast<float>(options_.beta2),
                           .one_b2 = static_cast<float>(1 - options_.beta2),
                           .eps = static_cast<float>(options_.eps)};
      each_block([&](std::size_t lo, std::size_t hi) {
        if (decoupled) scale(params.data() + lo, hi - lo, factor);
        adam_step(params.data() + lo, grads.data() + lo, state_.data() + lo, state_.data() + n + lo, hi - lo, k);
      });
      break;
    }
  }
  if (norm) *norm = norm_of(part);
  ++steps_;
}

}  // namespace toru::train
