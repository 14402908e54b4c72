// SPDX-License-Identifier: BSD-3-Clause
// Batched product of two activations (attention's q k^T and p v) on oneDNN matmul.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cpu.hpp"
#include "toru/core/error.hpp"

namespace toru::train::detail::cpu {

namespace {

// C[B, M, N] = A[B, M, K] B[B, K, N], the leading axes (equal in both operands) collapsed into B.
// Gradients are two more matmuls on transposed strided views: dA = dC B^T, dB = A^T dC.
class matmul final : public cpu_kernel {
 public:
  matmul(cpu_backend& be, const swap::graph& g, int op) : cpu_kernel(be, g, op) {
    const auto& o = this->op();
    if (o.inputs.size() != 2) bad(o, "expected two inputs");
    const auto& as = in_shape(0);
    const auto& bs = in_shape(1);
    if (as.size() < 2 || as.size() != bs.size() || !std::equal(as.begin(), as.end() - 2, bs.begin()) ||
        as.back() != bs[bs.size() - 2])
      throw error(errc::unsupported,
                  fmt::format("op '{}' (matmul): operands [{}] and [{}]: expected [..., M, K] and [..., K, N] with "
                              "equal leading axes (broadcasting batch axes is not supported)",
                              o.name, fmt::join(as, ","), fmt::join(bs, ",")));
    M_ = as[as.size() - 2];
    K_ = as.back();
    N_ = bs.back();
    B_ = numel(as) / (M_ * K_);
    if (numel(out_shape(0)) != B_ * M_ * N_) bad(o, "output shape does not match the operands");
    for (int i = 0; i < 2; ++i) {
      to_plain_[i] = relayout(be, in_md(i), plain_md(in_shape(i)), what(i == 0 ? "a" : "b"));
      from_plain_[i] = relayout(be, plain_md(in_shape(i)), in_md(i), what(i == 0 ? "da" : "db"));
    }
    set_out_md(0, plain_md(out_shape(0)));
    const md a = a_md(), b = b_md(), c = c_md();
    fwd_ = dnnl::matmul(dnnl::matmul::primitive_desc(dnnl::matmul::desc(a, b, c), be.eng));
    bwd_a_ = dnnl::matmul(dnnl::matmul::primitive_desc(dnnl::matmul::desc(c, bt_md(), a), be.eng));
    bwd_b_ = dnnl::matmul(dnnl::matmul::primitive_desc(dnnl::matmul::desc(at_md(), c, b), be.eng));
  }

  void forward(const forward_args& a) override {
    be_.set_threads();
    exec(fwd_, {{DNNL_ARG_SRC, mem(a_md(), to_plain_[0].in(a.in[0]))},
                {DNNL_ARG_WEIGHTS, mem(b_md(), to_plain_[1].in(a.in[1]))},
                {DNNL_ARG_DST, mem(c_md(), a.out[0])}});
    wait();
  }

  void backward(const backward_args& a) override {
    be_.set_threads();
    if (a.d_in[0]) {
      void* da = from_plain_[0].out(a.d_in[0]);
      exec(bwd_a_, {{DNNL_ARG_SRC, mem(c_md(), a.d_out[0])},
                    {DNNL_ARG_WEIGHTS, mem(bt_md(), to_plain_[1].in(a.in[1]))},
                    {DNNL_ARG_DST, mem(a_md(), da)}});
      wait();
      from_plain_[0].finish(a.d_in[0]);
    }
    if (a.d_in[1]) {
      void* db = from_plain_[1].out(a.d_in[1]);
      exec(bwd_b_, {{DNNL_ARG_SRC, mem(at_md(), to_plain_[0].in(a.in[0]))},
                    {DNNL_ARG_WEIGHTS, mem(c_md(), a.d_out[0])},
                    {DNNL_ARG_DST, mem(b_md(), db)}});
      wait();
      from_plain_[1].finish(a.d_in[1]);
    }
  }
  bool backward_reads_output(int) const override { return false; }

 private:
  md a_md() const { return plain_md({B_, M_, K_}); }
  md b_md() const { return plain_md({B_, K_, N_}); }
  md c_md() const { return plain_md({B_, M_, N_}); }
  md at_md() const { return strided_md({B_, K_, M_}, {M_ * K_, 1, K_}); }  // A^T, a view of A
  md bt_md() const { return strided_md({B_, N_, K_}, {K_ * N_, 1, N_}); }  // B^T, a view of B

  std::int64_t B_ = 1, M_ = 0, K_ = 0, N_ = 0;
  relayout to_plain_[2], from_plain_[2];
  dnnl::matmul fwd_, bwd_a_, bwd_b_;
};

}  // namespace

std::unique_ptr<kernel> make_matmul(cpu_backend& be, const swap::graph& g, int op) {
  return std::make_unique<matmul>(be, g, op);
}

}  // namespace toru::train::detail::cpu
