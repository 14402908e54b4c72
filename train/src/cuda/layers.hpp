// SPDX-License-Identifier: BSD-3-Clause
// The CUDA backend's layers over raw device pointers: cuDNN for convolution, batch norm, pooling,
// ReLU/sigmoid and softmax; cuBLAS for linear and matmul; kernels.cu for the rest. Each layer is
// built once per shape (descriptors, chosen algorithms and workspace sizes cached) and then run with
// `const` calls queued on the context's stream. The backend (backend_cuda.cpp) adapts them to the
// trainer's kernel interface; tests drive them directly as well.
//
// Tensors are plain row-major fp32 (NCHW for images); weights as PyTorch stores them. Gradients
// are overwritten, never accumulated. Workspaces are the caller's, of workspace_bytes().
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "cuda_context.hpp"
#include "cudnn_descriptors.hpp"

namespace toru::train::detail::cuda {

using pair = std::array<int, 2>;

struct conv2d_shape {
  nchw x{};
  int out_channels = 0;
  pair kernel{1, 1}, stride{1, 1}, pad{0, 0}, dilation{1, 1};
  int groups = 1;
  bool bias = false;
};

/// Convolution (cuDNN, cross-correlation as PyTorch). Algorithms: cuDNN's heuristic ranking
/// (cudnnGet*Algorithm_v7, which runs nothing and allocates nothing, so it cannot exceed the
/// memory capacity), first choice that is not a tensor-core (TF32) entry, runs under the FMA-only
/// math the descriptor is set to, is deterministic and needs at most `max_workspace` bytes; a
/// non-deterministic one only when no deterministic one fits.
class conv2d_cudnn {
 public:
  static constexpr std::size_t max_workspace = std::size_t{256} << 20;
  conv2d_cudnn(cuda_context& ctx, const conv2d_shape& s);
  const nchw& output() const noexcept { return y_shape_; }
  std::size_t workspace_bytes() const noexcept { return workspace_; }
  /// y = conv(x, w) (+ b); w [K, C/groups, R, S], b [K].
  void forward(const float* x, const float* w, const float* b, float* y, void* ws) const;
  /// dx (nullable), dw, db (nullable; only with bias).
  void backward(const float* x, const float* w, const float* dy, float* dx, float* dw, float* db, void* ws) const;

 private:
  cuda_context* ctx_;
  conv2d_shape s_;
  nchw y_shape_{};
  tensor_descriptor x_, y_, bias_;
  filter_descriptor w_;
  convolution_descriptor conv_;
  cudnnConvolutionFwdAlgo_t fwd_{};
  cudnnConvolutionBwdDataAlgo_t bwd_data_{};
  cudnnConvolutionBwdFilterAlgo_t bwd_filter_{};
  std::size_t workspace_ = 0;
};

/// Spatial batch normalisation over N and the spatial axes of NCHW (a [N, C] input is {N, C, 1, 1}).
/// Running statistics follow PyTorch: r = (1 - momentum) r + momentum * batch statistic, the
/// variance unbiased (cuDNN's exponentialAverageFactor is PyTorch's momentum).
class batchnorm_cudnn {
 public:
  batchnorm_cudnn(cuda_context& ctx, const nchw& x, double epsilon, double momentum);
  /// Floats of saved state (batch mean and inverse standard deviation, C each).
  std::int64_t state_count() const noexcept { return 2 * static_cast<std::int64_t>(x_shape_[1]); }
  void forward_training(const float* x, const float* gamma, const float* beta, float* y, float* running_mean,
                        float* running_var, float* state) const;
  void forward_inference(const float* x, const float* gamma, const float* beta, float* y, const float* running_mean,
                         const float* running_var) const;
  /// dx, dgamma, dbeta: all required (cuDNN writes all three; callers pass scratch for unwanted ones).
  void backward(const float* x, const float* dy, const float* gamma, const float* state, float* dx, float* dgamma,
                float* dbeta) const;

 private:
  cuda_context* ctx_;
  nchw x_shape_;
  double epsilon_, momentum_;
  tensor_descriptor x_, param_;
};

enum class pool_kind { max, avg };

/// Max or average pooling (average: count_include_pad as PyTorch's flag); the global average pool
/// is the window {H, W}. Max uses CUDNN_POOLING_MAX_DETERMINISTIC.
class pool_cudnn {
 public:
  pool_cudnn(cuda_context& ctx, const nchw& x, pool_kind kind, pair window, pair stride, pair pad,
             bool count_include_pad);
  const nchw& output() const noexcept { return y_shape_; }
  void forward(const float* x, float* y) const;
  void backward(const float* x, const float* y, const float* dy, float* dx) const;

 private:
  cuda_context* ctx_;
  nchw x_shape_, y_shape_{};
  tensor_descriptor x_, y_;
  pooling_descriptor pool_;
};

enum class activation_kind { relu, sigmoid, tanh };

/// ReLU, sigmoid and tanh through cudnnActivation* over a flat tensor.
class activation_cudnn {
 public:
  activation_cudnn(cuda_context& ctx, activation_kind kind, std::int64_t count);
  void forward(const float* x, float* y) const;
  void backward(const float* x, const float* y, const float* dy, float* dx) const;

 private:
  cuda_context* ctx_;
  std::int64_t count_;
  tensor_descriptor t_;
  activation_descriptor act_;
};

/// C[M, N] = op(A) op(B) (+ beta C), all row-major, through cuBLAS (column-major): a row-major
/// matrix is the column-major matrix of its transpose, so C^T = op(B)^T op(A)^T is one cublasSgemm
/// with the operands swapped (B first), M and N swapped, the same transpose flags, and leading
/// dimensions equal to the row-major row lengths. `batch` > 1: strided batched with the given
/// element strides (0 broadcasts that operand).
struct gemm_rm {
  bool trans_a = false, trans_b = false;
  std::int64_t m = 0, n = 0, k = 0;
  std::int64_t lda = 0, ldb = 0, ldc = 0;
  std::int64_t batch = 1, stride_a = 0, stride_b = 0, stride_c = 0;
  float beta = 0;
};
void run_gemm(cuda_context& ctx, const gemm_rm& g, const float* a, const float* b, float* c);

/// Linear layer y[rows, out] = x[rows, in] W^T + b with W [out, in] (PyTorch; trans_b) or W [in, out].
class linear_cublas {
 public:
  linear_cublas(cuda_context& ctx, std::int64_t rows, std::int64_t in, std::int64_t out, bool bias, bool trans_b);
  void forward(const float* x, const float* w, const float* b, float* y) const;
  /// dx (nullable), dw, db (nullable).
  void backward(const float* x, const float* w, const float* dy, float* dx, float* dw, float* db) const;

 private:
  cuda_context* ctx_;
  std::int64_t rows_, in_, out_;
  bool bias_, trans_b_;
};

/// C[batch, M, N] = A[batch, M, K] B[batch, K, N]; B may be shared by all batches (b_batched false).
class matmul_cublas {
 public:
  matmul_cublas(cuda_context& ctx, std::int64_t batch, std::int64_t m, std::int64_t k, std::int64_t n, bool b_batched);
  void forward(const float* a, const float* b, float* c) const;
  /// da, db nullable.
  void backward(const float* a, const float* b, const float* dc, float* da, float* db) const;

 private:
  cuda_context* ctx_;
  std::int64_t batch_, m_, k_, n_;
  bool b_batched_;
};

/// Softmax over the middle axis of [outer, classes, inner] (cudnnSoftmax*, accurate mode).
class softmax_cudnn {
 public:
  softmax_cudnn(cuda_context& ctx, std::int64_t outer, std::int64_t classes, std::int64_t inner);
  void forward(const float* x, float* y) const;
  void backward(const float* y, const float* dy, float* dx) const;

 private:
  cuda_context* ctx_;
  tensor_descriptor t_;
};

/// Softmax cross-entropy over the class axis of logits [outer, classes, inner] against int32 labels
/// [outer, inner], mean over the outer * inner samples (PyTorch's CrossEntropyLoss): cuDNN's
/// log-softmax into the state, then the per-sample loss and hits (kernels.cu) summed on the host in
/// double in sample order (bit-identical from run to run).
class softmax_xent_cudnn {
 public:
  struct result {
    double mean_loss = 0;
    std::int64_t correct = 0;
    std::int64_t first_bad_label = -1;
  };
  softmax_xent_cudnn(cuda_context& ctx, std::int64_t outer, std::int64_t classes, std::int64_t inner);
  std::int64_t samples() const noexcept { return outer_ * inner_; }
  std::int64_t state_count() const noexcept { return outer_ * classes_ * inner_; }  // log-probabilities
  /// Synchronises the stream (the loss is needed on the host).
  result forward(const float* logits, const std::int32_t* labels, float* state) const;
  /// dlogits = d(mean loss)/d(logits).
  void backward(const float* state, const std::int32_t* labels, float* dlogits) const;

 private:
  cuda_context* ctx_;
  std::int64_t outer_, classes_, inner_;
  tensor_descriptor t_;
};

}  // namespace toru::train::detail::cuda
