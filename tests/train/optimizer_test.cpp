// SPDX-License-Identifier: BSD-3-Clause
// Optimizers and schedules against torch.optim (PyTorch 1.13) on random tensors over several steps.
#include "toru/train/optimizer.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "engine_reference.hpp"
#include "toru/core/error.hpp"

namespace {

using namespace toru::train;

std::vector<float> floats(const nlohmann::json& j) { return j.get<std::vector<float>>(); }

// Both sides run float arithmetic in the same expression order; what remains is whether PyTorch's
// vectorised kernels fuse a multiply-add where toru does or not: a few ulps after six steps.
void expect_near_floats(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double scale = std::max(1e-3, std::abs(static_cast<double>(want[i])));
    worst = std::max(worst, std::abs(static_cast<double>(got[i]) - want[i]) / scale);
  }
  EXPECT_LT(worst, 2e-6) << what << ": worst relative difference to PyTorch";
}

TEST(Optimizer, MatchesTorchOptim) {
  const auto cases = toru::test::engine_reference("optim");
  ASSERT_FALSE(cases.empty());
  for (const auto& c : cases) {
    SCOPED_TRACE(c["name"].get<std::string>());
    optimizer_options o{.kind = parse_optimizer(c["kind"].get<std::string>()),
                        .lr = c["lr"].get<double>(),
                        .momentum = c.value("momentum", 0.9),
                        .nesterov = c.value("nesterov", false),
                        .weight_decay = c.contains("weight_decay")
                                            ? std::optional<double>(c["weight_decay"].get<double>())
                                            : std::nullopt,
                        .beta1 = c.value("beta1", 0.9),
                        .beta2 = c.value("beta2", 0.999),
                        .eps = c.value("eps", 1e-8)};
    auto p = floats(c["params0"]);
    optimizer opt(o, static_cast<std::int64_t>(p.size()));
    for (std::size_t s = 0; s < c["grads"].size(); ++s) {
      const auto g = floats(c["grads"][s]);
      opt.step(p, g, c["lrs"][s].get<double>());
    }
    EXPECT_EQ(opt.steps(), static_cast<std::int64_t>(c["grads"].size()));
    expect_near_floats(p, floats(c["params"]), "parameters");
    const auto st = opt.state();
    expect_near_floats(std::vector<float>(st.begin(), st.end()), floats(c["state"]), "state");
  }
}

TEST(Optimizer, RestoredStateContinuesIdentically) {
  const std::int64_t n = 257;
  std::vector<float> p(n), g(n);
  for (std::int64_t i = 0; i < n; ++i) p[i] = std::sin(0.1f * i), g[i] = std::cos(0.37f * i);
  for (auto kind : {optimizer_kind::sgd, optimizer_kind::momentum, optimizer_kind::adam, optimizer_kind::adamw}) {
    optimizer a({.kind = kind, .lr = 0.01}, n);
    auto pa = p;
    for (int s = 0; s < 3; ++s) a.step(pa, g, 0.01);
    optimizer b({.kind = kind, .lr = 0.01}, n);
    std::copy(a.state().begin(), a.state().end(), b.state().begin());
    b.set_steps(a.steps());
    auto pb = pa;
    a.step(pa, g, 0.02);
    b.step(pb, g, 0.02);
    EXPECT_EQ(pa, pb) << to_string(kind);
  }
}

// The update on two threads splits the parameters in blocks (65,536 floats); every element must get
// exactly the update a one-element optimizer computes for it, at the blocks' edges and in the
// remainder too (a block skipped or run twice changes those elements).
TEST(Optimizer, ThreadedUpdateEqualsEachElementAlone) {
  const std::int64_t block = 65536, n = 3 * block + 101;
  std::vector<float> p0(n);
  std::vector<std::vector<float>> grads(3, std::vector<float>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    p0[i] = std::sin(0.001f * static_cast<float>(i));
    for (std::size_t s = 0; s < grads.size(); ++s) grads[s][i] = std::cos(0.37f * static_cast<float>(i) + s);
  }
  const std::vector<std::int64_t> probe{
      0, 1, block - 1, block, block + 1, 2 * block - 1, 2 * block, 3 * block - 1, 3 * block, n - 2, n - 1};
  for (auto kind : {optimizer_kind::sgd, optimizer_kind::momentum, optimizer_kind::adam, optimizer_kind::adamw}) {
    SCOPED_TRACE(to_string(kind));
    const optimizer_options o{
        .kind = kind, .lr = 0.01, .nesterov = kind == optimizer_kind::momentum, .weight_decay = 0.05};
    optimizer big(o, n);
    big.set_threads(2);
    auto p = p0;
    for (std::size_t s = 0; s < grads.size(); ++s) {
      double norm = -1;
      big.step(p, grads[s], 0.01 * (1 + static_cast<double>(s)), &norm);
      EXPECT_EQ(norm, grad_norm(grads[s], 1)) << "the norm from the update's pass";
    }
    for (const auto i : probe) {
      optimizer one(o, 1);
      std::vector<float> q{p0[i]};
      for (std::size_t s = 0; s < grads.size(); ++s)
        one.step(q, std::vector<float>{grads[s][i]}, 0.01 * (1 + static_cast<double>(s)));
      EXPECT_EQ(p[i], q[0]) << "element " << i;
    }
  }
  EXPECT_THROW(optimizer({}, 4).set_threads(-1), toru::error);
}

TEST(Optimizer, RejectsBadOptions) {
  auto msg = [](const optimizer_options& o) {
    try {
      optimizer(o, 4);
    } catch (const toru::error& e) {
      EXPECT_EQ(e.code(), toru::errc::invalid_argument);
      return e.message();
    }
    return std::string("no error");
  };
  EXPECT_NE(msg({.lr = 0}).find("lr"), std::string::npos);
  EXPECT_NE(msg({.lr = -1}).find("lr"), std::string::npos);
  EXPECT_NE(msg({.lr = std::nan("")}).find("lr"), std::string::npos);
  EXPECT_NE(msg({.kind = optimizer_kind::momentum, .momentum = 1.0}).find("momentum"), std::string::npos);
  EXPECT_NE(msg({.weight_decay = -1}).find("weight_decay"), std::string::npos);
  EXPECT_NE(msg({.nesterov = true}).find("nesterov"), std::string::npos);
  EXPECT_NE(msg({.kind = optimizer_kind::adamw, .weight_decay = -0.1}).find("weight_decay"), std::string::npos);
  EXPECT_NE(msg({.kind = optimizer_kind::adamw, .beta2 = 1.0}).find("beta2"), std::string::npos);
  EXPECT_THROW(parse_optimizer("lamb"), toru::error);
  EXPECT_EQ(parse_optimizer("adamw"), optimizer_kind::adamw);
  EXPECT_EQ((optimizer_options{.kind = optimizer_kind::adamw}.decay()), 0.01);
  EXPECT_EQ((optimizer_options{.kind = optimizer_kind::adam}.decay()), 0.0);
}

TEST(ClipGradNorm, MatchesTorch) {
  const auto cases = toru::test::engine_reference("clip");
  ASSERT_EQ(cases.size(), 3u);
  for (const auto& c : cases) {
    SCOPED_TRACE(c["name"].get<std::string>());
    auto g = floats(c["grads"]);
    const double norm = clip_grad_norm(g, c["max_norm"].get<double>());
    EXPECT_NEAR(norm, c["norm"].get<double>(), 1e-6 * c["norm"].get<double>());
    expect_near_floats(g, floats(c["clipped"]), "clipped gradients");
    if (c["name"] == "below") {
      EXPECT_EQ(g, floats(c["grads"])) << "a norm below max_norm must leave them unchanged";
    }
  }
}

// The norm is summed per block, then over the blocks in order: equal at any thread count, and
// within rounding of a long double sum.
TEST(ClipGradNorm, ThreadedNormIsTheSameNorm) {
  const std::size_t n = 5 * 65536 + 7;
  std::vector<float> g(n);
  long double want = 0;
  for (std::size_t i = 0; i < n; ++i) {
    g[i] = std::cos(0.013f * static_cast<float>(i)) * (i % 3 == 0 ? 100.0f : 0.01f);
    want += static_cast<long double>(g[i]) * g[i];
  }
  const double serial = grad_norm(g, 1);
  EXPECT_EQ(grad_norm(g, 2), serial);
  EXPECT_NEAR(serial, std::sqrt(static_cast<double>(want)), 1e-12 * serial);
  auto a = g, b = g;
  EXPECT_EQ(clip_grad_norm(a, 1.0, "max_norm", 2), clip_grad_norm(b, 1.0, "max_norm", 1));
  EXPECT_EQ(a, b);
  EXPECT_NEAR(grad_norm(a, 2), 1.0, 1e-6);
}

TEST(ClipGradNorm, RejectsBadMaxNorm) {
  std::vector<float> g{3, 4};
  for (double bad : {0.0, -1.0, std::nan("")}) {
    try {
      clip_grad_norm(g, bad, "--clip-grad-norm");
      ADD_FAILURE() << "no error for max_norm " << bad;
    } catch (const toru::error& e) {
      EXPECT_EQ(e.code(), toru::errc::invalid_argument);
      EXPECT_NE(e.message().find("--clip-grad-norm"), std::string::npos) << e.message();
    }
  }
  EXPECT_EQ(g, (std::vector<float>{3, 4}));
  EXPECT_DOUBLE_EQ(clip_grad_norm(g, std::numeric_limits<double>::infinity()), 5.0);
}

TEST(Schedule, MatchesTorchSchedulers) {
  const auto cases = toru::test::engine_reference("schedule");
  ASSERT_EQ(cases.size(), 2u);
  for (const auto& c : cases) {
    schedule_options s;
    if (c["kind"] == "step") {
      s = {.kind = schedule_kind::step, .step_size = c["step_size"], .gamma = c["gamma"]};
    } else {
      s = {.kind = schedule_kind::cosine, .total_steps = c["T_max"], .min_lr = c["eta_min"]};
    }
    validate(s);
    for (std::size_t k = 0; k < c["lrs"].size(); ++k)
      EXPECT_NEAR(learning_rate(c["base_lr"], s, static_cast<std::int64_t>(k)), c["lrs"][k].get<double>(), 1e-12)
          << c["kind"] << " step " << k;
  }
}

TEST(Schedule, CosineWarmup) {
  const schedule_options s{.kind = schedule_kind::cosine, .total_steps = 14, .warmup_steps = 4, .min_lr = 0};
  EXPECT_DOUBLE_EQ(learning_rate(1.0, s, 0), 0.25);
  EXPECT_DOUBLE_EQ(learning_rate(1.0, s, 3), 1.0);
  EXPECT_DOUBLE_EQ(learning_rate(1.0, s, 4), 1.0);    // decay starts at the peak
  EXPECT_NEAR(learning_rate(1.0, s, 9), 0.5, 1e-15);  // half way through the decay
  EXPECT_DOUBLE_EQ(learning_rate(1.0, s, 14), 0.0);
  EXPECT_THROW(validate(schedule_options{.kind = schedule_kind::cosine, .total_steps = 4, .warmup_steps = 4}),
               toru::error);
}

}  // namespace
