// SPDX-License-Identifier: BSD-3-Clause
// Linear and matmul on cuBLAS (layers.hpp), all through one row-major GEMM mapping (run_gemm).
#include <limits>

#include <fmt/format.h>

#include "kernels.hpp"
#include "layers.hpp"
#include "toru/core/error.hpp"

namespace toru::train::detail::cuda {

namespace {

int as_int(std::int64_t v, const char* what) {
  if (v < 0 || v > std::numeric_limits<int>::max())
    throw error(errc::unsupported, fmt::format("gemm: {} = {} exceeds cuBLAS's 32-bit sizes", what, v));
  return static_cast<int>(v);
}

}  // namespace

void run_gemm(cuda_context& ctx, const gemm_rm& g, const float* a, const float* b, float* c) {
  if (g.m == 0 || g.n == 0) return;
  const float one = 1;
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: swap the operands and M/N.
  const cublasOperation_t ta = g.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t tb = g.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int m = as_int(g.n, "n"), n = as_int(g.m, "m"), k = as_int(g.k, "k");
  if (g.batch == 1) {
    check_cublas(cublasSgemm(ctx.blas(), tb, ta, m, n, k, &one, b, as_int(g.ldb, "ldb"), a, as_int(g.lda, "lda"),
                             &g.beta, c, as_int(g.ldc, "ldc")),
                 "cublasSgemm");
  } else {
    check_cublas(cublasSgemmStridedBatched(ctx.blas(), tb, ta, m, n, k, &one, b, as_int(g.ldb, "ldb"), g.stride_b, a,
                                           as_int(g.lda, "lda"), g.stride_a, &g.beta, c, as_int(g.ldc, "ldc"),
                                           g.stride_c, as_int(g.batch, "batch")),
                 "cublasSgemmStridedBatched");
  }
}

linear_cublas::linear_cublas(cuda_context& ctx, std::int64_t rows, std::int64_t in, std::int64_t out, bool bias,
                             bool trans_b)
    : ctx_(&ctx), rows_(rows), in_(in), out_(out), bias_(bias), trans_b_(trans_b) {}

void linear_cublas::forward(const float* x, const float* w, const float* b, float* y) const {
  // y[rows, out] = x[rows, in] W^T (W [out, in]) or x W (W [in, out]).
  run_gemm(
      *ctx_,
      {.trans_b = trans_b_, .m = rows_, .n = out_, .k = in_, .lda = in_, .ldb = trans_b_ ? in_ : out_, .ldc = out_}, x,
      w, y);
  if (bias_ && b) check_cuda(add_row_bias(y, b, rows_, out_, ctx_->stream()), "add_row_bias");
}

void linear_cublas::backward(const float* x, const float* w, const float* dy, float* dx, float* dw, float* db) const {
  if (dx)  // dx[rows, in] = dy[rows, out] W (W [out, in]) or dy W^T (W [in, out])
    run_gemm(
        *ctx_,
        {.trans_b = !trans_b_, .m = rows_, .n = in_, .k = out_, .lda = out_, .ldb = trans_b_ ? in_ : out_, .ldc = in_},
        dy, w, dx);
  if (dw) {
    if (trans_b_)  // dW[out, in] = dy^T x
      run_gemm(*ctx_, {.trans_a = true, .m = out_, .n = in_, .k = rows_, .lda = out_, .ldb = in_, .ldc = in_}, dy, x,
               dw);
    else  // dW[in, out] = x^T dy
      run_gemm(*ctx_, {.trans_a = true, .m = in_, .n = out_, .k = rows_, .lda = in_, .ldb = out_, .ldc = out_}, x, dy,
               dw);
  }
  if (bias_ && db) check_cuda(column_sums(dy, db, rows_, out_, ctx_->stream()), "column_sums");
}

matmul_cublas::matmul_cublas(cuda_context& ctx, std::int64_t batch, std::int64_t m, std::int64_t k, std::int64_t n,
                             bool b_batched)
    : ctx_(&ctx), batch_(batch), m_(m), k_(k), n_(n), b_batched_(b_batched) {}

void matmul_cublas::forward(const float* a, const float* b, float* c) const {
  if (!b_batched_) {  // one GEMM over all batch rows of A
    run_gemm(*ctx_, {.m = batch_ * m_, .n = n_, .k = k_, .lda = k_, .ldb = n_, .ldc = n_}, a, b, c);
    return;
  }
  run_gemm(*ctx_,
           {.m = m_,
            .n = n_,
            .k = k_,
            .lda = k_,
            .ldb = n_,
            .ldc = n_,
            .batch = batch_,
            .stride_a = m_ * k_,
            .stride_b = k_ * n_,
            .stride_c = m_ * n_},
           a, b, c);
}

void matmul_cublas::backward(const float* a, const float* b, const float* dc, float* da, float* db) const {
  if (!b_batched_) {
    if (da)  // dA[bm, k] = dC[bm, n] B^T
      run_gemm(*ctx_, {.trans_b = true, .m = batch_ * m_, .n = k_, .k = n_, .lda = n_, .ldb = n_, .ldc = k_}, dc, b,
               da);
    if (db)  // dB[k, n] = A^T dC, summed over the batch rows by the GEMM itself
      run_gemm(*ctx_, {.trans_a = true, .m = k_, .n = n_, .k = batch_ * m_, .lda = k_, .ldb = n_, .ldc = n_}, a, dc,
               db);
    return;
  }
  if (da)
    run_gemm(*ctx_,
             {.trans_b = true,
              .m = m_,
              .n = k_,
              .k = n_,
              .lda = n_,
              .ldb = n_,
              .ldc = k_,
              .batch = batch_,
              .stride_a = m_ * n_,
              .stride_b = k_ * n_,
              .stride_c = m_ * k_},
             dc, b, da);
  if (db)
    run_gemm(*ctx_,
             {.trans_a = true,
              .m = k_,
              .n = n_,
              .k = m_,
              .lda = k_,
              .ldb = n_,
              .ldc = n_,
              .batch = batch_,
              .stride_a = m_ * k_,
              .stride_b = m_ * n_,
              .stride_c = k_ * n_},
             a, dc, db);
}

}  // namespace toru::train::detail::cuda
