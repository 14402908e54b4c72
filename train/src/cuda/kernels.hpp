// SPDX-License-Identifier: BSD-3-Clause
// Elementwise and small reduction kernels of the CUDA backend (kernels.cu), for what cuDNN and cuBLAS
// do not offer: GELU, counter-based dropout, add, row bias and column sums (linear), the
// cross-entropy loss and its gradient from cuDNN's log-softmax, and layer normalisation.
//
// Plain C++17 declarations: the kernels compile as CUDA 17 (this CMake cannot ask nvcc for CUDA20),
// the callers as C++20. Every launcher enqueues on `stream` and returns cudaGetLastError().
// Tensors are dense row-major float arrays; counts are elements.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace toru::train::detail::cuda {

cudaError_t gelu_forward(const float* x, float* y, std::int64_t n, cudaStream_t stream);
cudaError_t gelu_backward(const float* x, const float* dy, float* dx, std::int64_t n, cudaStream_t stream);

/// Dropout: y = keep ? x * scale : 0, keep decided by the CPU backend's counter hash of (seed, step,
/// op, global sample, element within the sample) (train/src/random.hpp): the same mask on either
/// backend and on any rank count.
struct dropout_key {
  std::uint64_t seed = 0;
  std::uint64_t step = 0;
  std::uint64_t op = 0;           // graph op id
  std::int64_t first_sample = 0;  // global index of the first sample of this batch
  std::int64_t sample_size = 1;   // elements per sample
  float p = 0;                    // drop probability in [0, 1)
  float scale = 1;                // 1 / (1 - p), rounded from double as the CPU backend does
};
cudaError_t dropout_forward(const float* x, float* y, std::int64_t n, const dropout_key& key, cudaStream_t stream);
/// dx = mask(key) * scale * dy: the mask is recomputed, never stored.
cudaError_t dropout_backward(const float* dy, float* dx, std::int64_t n, const dropout_key& key, cudaStream_t stream);

/// y = a + b.
cudaError_t add_forward(const float* a, const float* b, float* y, std::int64_t n, cudaStream_t stream);
/// y += x (gradient accumulation).
cudaError_t accumulate(float* y, const float* x, std::int64_t n, cudaStream_t stream);
/// y[r, c] += bias[c] for a rows x cols matrix.
cudaError_t add_row_bias(float* y, const float* bias, std::int64_t rows, std::int64_t cols, cudaStream_t stream);
/// out[c] = sum_r m[r, c] (fixed order over r: deterministic).
cudaError_t column_sums(const float* m, float* out, std::int64_t rows, std::int64_t cols, cudaStream_t stream);

/// Cross-entropy over the class axis of log-probabilities logp [outer, classes, inner] against labels
/// [outer, inner] (sample k = o * inner + i): loss[k] = -logp[o, label[k], i]; correct[k] = 1 when the
/// first arg-max over the classes is label[k], else 0; a label out of range gives a NaN loss and
/// correct[k] = -1.
cudaError_t cross_entropy_loss(const float* logp, const std::int32_t* labels, float* loss, std::int32_t* correct,
                               std::int64_t outer, std::int64_t classes, std::int64_t inner, cudaStream_t stream);
/// dlogits = (exp(logp) - onehot(label)) * scale (scale 1/(outer * inner) for the mean loss).
cudaError_t cross_entropy_backward(const float* logp, const std::int32_t* labels, float* dlogits, std::int64_t outer,
                                   std::int64_t classes, std::int64_t inner, float scale, cudaStream_t stream);

/// Layer norm over the last `cols` elements of each of `rows` rows: y = (x - mean) * rstd * gamma + beta;
/// saves mean and rstd = 1 / sqrt(var + eps) (biased variance) per row for the backward.
cudaError_t layer_norm_forward(const float* x, const float* gamma, const float* beta, float* y, float* mean,
                               float* rstd, std::int64_t rows, std::int64_t cols, float eps, cudaStream_t stream);
/// dx (may be null), dgamma and dbeta (may be null: no affine parameters) from the saved statistics.
cudaError_t layer_norm_backward(const float* x, const float* dy, const float* gamma, const float* mean,
                                const float* rstd, float* dx, float* dgamma, float* dbeta, std::int64_t rows,
                                std::int64_t cols, cudaStream_t stream);

/// Copies planes x [planes, h, w] into the interior of xp [planes, hp, wp] at (top, left); the
/// border of xp is left as it is (explicit padding for pooling cuDNN cannot pad itself).
cudaError_t pad_planes(const float* x, float* xp, std::int64_t planes, std::int64_t h, std::int64_t w, std::int64_t hp,
                       std::int64_t wp, std::int64_t top, std::int64_t left, cudaStream_t stream);
/// The reverse: the interior of xp at (top, left) into x.
cudaError_t crop_planes(const float* xp, float* x, std::int64_t planes, std::int64_t h, std::int64_t w, std::int64_t hp,
                        std::int64_t wp, std::int64_t top, std::int64_t left, cudaStream_t stream);

/// y = value, n elements.
cudaError_t fill(float* y, float value, std::int64_t n, cudaStream_t stream);

}  // namespace toru::train::detail::cuda
