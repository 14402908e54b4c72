// SPDX-License-Identifier: BSD-3-Clause
// Softmax cross-entropy over the class axis against int32 labels, mean over every labelled position
// (PyTorch's CrossEntropyLoss with reduction 'mean'), optionally label-smoothed: the target is
// (1 - eps) one-hot + eps / C, so the loss is (1 - eps) nll + eps / C * sum_c -log p_c and its
// gradient p - (1 - eps) one-hot - eps / C (CrossEntropyLoss(label_smoothing=eps), PyTorch 1.13).
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "cpu.hpp"
#include "toru/core/error.hpp"

namespace toru::train::detail::cpu {

namespace {

class loss final : public loss_kernel {
 public:
  loss(cpu_backend& be, const swap::graph& g, int op) : be_(be) {
    const auto& o = g.ops[static_cast<std::size_t>(op)];
    const auto& s = g.tensors[o.inputs[0]].shape;
    if (s.size() < 2)
      throw error(
          errc::invalid_argument,
          fmt::format("op '{}': expected logits of rank >= 2 ([N, classes, ...]), got rank {}", o.name, s.size()));
    std::int64_t axis = o.attr.axis < 0 ? static_cast<std::int64_t>(s.size()) + o.attr.axis : o.attr.axis;
    if (axis < 1 || axis >= static_cast<std::int64_t>(s.size()))
      throw error(errc::invalid_argument,
                  fmt::format("op '{}' axis: expected a class axis in [1, {}), got {}", o.name, s.size(), o.attr.axis));
    outer_ = inner_ = 1;
    for (std::int64_t i = 0; i < axis; ++i) outer_ *= s[i];
    classes_ = s[axis];
    for (std::size_t i = axis + 1; i < s.size(); ++i) inner_ *= s[i];
    const auto labels = g.tensors[o.inputs[1]].bytes / 4;
    if (labels != outer_ * inner_)
      throw error(errc::invalid_argument,
                  fmt::format("op '{}' labels '{}': expected {} int32 labels, got a tensor of {}", o.name,
                              g.tensors[o.inputs[1]].name, outer_ * inner_, labels));
    to_plain_ = relayout(be, be.layout(o.inputs[0]), plain_md(s), o.name + "/logits");
    from_plain_ = relayout(be, plain_md(s), be.layout(o.inputs[0]), o.name + "/dlogits");
    be.set_layout(o.outputs[0], plain_md(g.tensors[o.outputs[0]].shape));
  }

  std::int64_t output_bytes(int) const override { return 4; }
  // Softmax probabilities, plain.
  std::int64_t state_bytes() const override { return outer_ * classes_ * inner_ * 4; }

  void forward(const forward_args& a) override {
    be_.set_threads();
    const auto* x = static_cast<const float*>(to_plain_.in(a.in[0]));
    const auto* y = static_cast<const std::int32_t*>(a.in[1]);
    auto* p = static_cast<float*>(a.state);
    std::int64_t hits = 0;
    const std::int64_t n = outer_ * inner_, C = classes_, inner = inner_;
    const double eps = eps_;
    // Per-row losses summed in row order below: an OpenMP reduction adds the threads' partial sums
    // in the order they finish, so with 3 or more threads the same seed gave a different loss.
    row_loss_.resize(static_cast<std::size_t>(n));
    double* rows = row_loss_.data();
#pragma omp parallel for reduction(+ : hits)
    for (std::int64_t k = 0; k < n; ++k) {
      const std::int64_t o = k / inner, i = k % inner;
      const float* xr = x + o * C * inner + i;
      float* pr = p + o * C * inner + i;
      float mx = xr[0];
      std::int64_t arg = 0;
      for (std::int64_t c = 1; c < C; ++c)
        if (xr[c * inner] > mx) {
          mx = xr[c * inner];
          arg = c;
        }
      double sum = 0;
      for (std::int64_t c = 0; c < C; ++c) sum += std::exp(static_cast<double>(xr[c * inner]) - mx);
      const double lse = std::log(sum) + mx;
      double xsum = 0;
      for (std::int64_t c = 0; c < C; ++c) {
        pr[c * inner] = static_cast<float>(std::exp(xr[c * inner] - lse));
        xsum += xr[c * inner];
      }
      const std::int32_t lab = y[k];
      const double nll = lse - xr[lab * inner];
      rows[k] = eps == 0 ? nll : (1 - eps) * nll + eps * (lse - xsum / static_cast<double>(C));
      hits += arg == lab ? 1 : 0;
    }
    double total = 0;
    for (const double r : row_loss_) total += r;
    result_.loss = total / static_cast<double>(n);
    result_.correct = hits;
    *static_cast<float*>(a.out[0]) = static_cast<float>(result_.loss);
  }

  void backward(const backward_args& a) override {
    if (!a.d_in[0]) return;
    be_.set_threads();
    const auto* y = static_cast<const std::int32_t*>(a.in[1]);
    const auto* p = static_cast<const float*>(a.state);
    auto* d = static_cast<float*>(from_plain_.identity() ? a.d_in[0] : scratch_for(a));
    const std::int64_t n = outer_ * inner_, C = classes_, inner = inner_;
    const float scale = 1.0f / static_cast<float>(n);
    // The smoothed target's two values; eps 0 leaves (1, 0), the plain one-hot.
    const auto hit = static_cast<float>(1 - eps_ + eps_ / static_cast<double>(C));
    const auto miss = static_cast<float>(eps_ / static_cast<double>(C));
#pragma omp parallel for
    for (std::int64_t k = 0; k < n; ++k) {
      const std::int64_t o = k / inner, i = k % inner;
      for (std::int64_t c = 0; c < C; ++c) {
        const std::int64_t e = o * C * inner + c * inner + i;
        d[e] = (p[e] - (c == y[k] ? hit : miss)) * scale;
      }
    }
    if (!from_plain_.identity()) from_plain_.finish(a.d_in[0]);
  }

  forward_result result() const override { return result_; }
  void set_label_smoothing(double eps) override { eps_ = eps; }

 private:
  void* scratch_for(const backward_args& a) { return from_plain_.out(a.d_in[0]); }

  cpu_backend& be_;
  std::int64_t outer_ = 1, classes_ = 1, inner_ = 1;
  relayout to_plain_, from_plain_;
  forward_result result_;
  std::vector<double> row_loss_;  // forward's per-row losses, summed in order
  double eps_ = 0;
};

}  // namespace

std::unique_ptr<kernel> make_loss(cpu_backend& be, const swap::graph& g, int op) {
  return std::make_unique<loss>(be, g, op);
}

}  // namespace toru::train::detail::cpu
