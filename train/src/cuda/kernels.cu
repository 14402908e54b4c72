// SPDX-License-Identifier: BSD-3-Clause
// Kernels of the CUDA backend (see kernels.hpp). Grid-stride loops over 64-bit indices; reductions
// run in a fixed order (one block per row, a fixed tree in shared memory), so results do not depend
// on scheduling and two runs are bit-identical.
#include "kernels.hpp"

#include "random.hpp"

#include <algorithm>
#include <cmath>

namespace toru::train::detail::cuda {

namespace {

constexpr int threads = 256;

unsigned blocks_for(std::int64_t n) {
  return static_cast<unsigned>(std::clamp<std::int64_t>((n + threads - 1) / threads, 1, 65535));
}

__device__ inline std::int64_t first_index() {
  return blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
}
__device__ inline std::int64_t grid_stride() { return static_cast<std::int64_t>(gridDim.x) * blockDim.x; }

// Exact (erf) GELU, as PyTorch's default.
__global__ void gelu_forward_kernel(const float* __restrict__ x, float* __restrict__ y, std::int64_t n) {
  for (std::int64_t i = first_index(); i < n; i += grid_stride()) {
    const float v = x[i];
    y[i] = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
  }
}

__global__ void gelu_backward_kernel(const float* __restrict__ x, const float* __restrict__ dy, float* __restrict__ dx,
                                     std::int64_t n) {
  for (std::int64_t i = first_index(); i < n; i += grid_stride()) {
    const float v = x[i];
    const float cdf = 0.5f * (1.0f + erff(v * 0.70710678118654752f));
    const float pdf = 0.39894228040143268f * expf(-0.5f * v * v);
    dx[i] = dy[i] * (cdf + v * pdf);
  }
}

// The dropout mask is the CPU backend's (train/src/random.hpp): u = uniform01(hash(seed, step, op,
// global sample, element)), kept when u >= p. random.hpp's functions are constexpr, which nvcc
// compiles for the device with --expt-relaxed-constexpr (train/cuda.cmake), so both backends run
// the very same code.
__device__ inline bool dropout_keep(const dropout_key& k, std::int64_t i) {
  const auto sample = static_cast<std::uint64_t>(k.first_sample + i / k.sample_size);
  const auto element = static_cast<std::uint64_t>(i % k.sample_size);
  return uniform01(hash(k.seed, k.step, k.op, sample, element)) >= k.p;
}

__global__ void dropout_kernel(const float* __restrict__ x, float* __restrict__ y, std::int64_t n, dropout_key k) {
  // x * 0, not 0: the CPU backend multiplies by the mask (NaN and -0 propagate the same way).
  for (std::int64_t i = first_index(); i < n; i += grid_stride()) y[i] = x[i] * (dropout_keep(k, i) ? k.scale : 0.0f);
}

__global__ void add_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ y,
                           std::int64_t n) {
  for (std::int64_t i = first_index(); i < n; i += grid_stride()) y[i] = a[i] + b[i];
}

__global__ void accumulate_kernel(float* __restrict__ y, const float* __restrict__ x, std::int64_t n) {
  for (std::int64_t i = first_index(); i < n; i += grid_stride()) y[i] += x[i];
}

__global__ void row_bias_kernel(float* __restrict__ y, const float* __restrict__ bias, std::int64_t rows,
                                std::int64_t cols) {
  const std::int64_t n = rows * cols;
  for (std::int64_t i = first_index(); i < n; i += grid_stride()) y[i] += bias[i % cols];
}

// One thread per column (adjacent threads read adjacent addresses), rows summed in order.
__global__ void column_sums_kernel(const float* __restrict__ m, float* __restrict__ out, std::int64_t rows,
                                   std::int64_t cols) {
  for (std::int64_t c = first_index(); c < cols; c += grid_stride()) {
    float s = 0;
    for (std::int64_t r = 0; r < rows; ++r) s += m[r * cols + c];
    out[c] = s;
  }
}

// Sample k = (o, i): its logits sit at o * classes * inner + c * inner + i.
__global__ void cross_entropy_loss_kernel(const float* __restrict__ logp, const std::int32_t* __restrict__ labels,
                                          float* __restrict__ loss, std::int32_t* __restrict__ correct,
                                          std::int64_t outer, std::int64_t classes, std::int64_t inner) {
  const std::int64_t n = outer * inner;
  for (std::int64_t k = first_index(); k < n; k += grid_stride()) {
    const float* row = logp + (k / inner) * classes * inner + k % inner;
    const std::int32_t label = labels[k];
    std::int64_t best = 0;
    for (std::int64_t c = 1; c < classes; ++c)
      if (row[c * inner] > row[best * inner]) best = c;
    const bool valid = label >= 0 && label < classes;
    loss[k] = valid ? -row[label * inner] : nanf("");
    correct[k] = !valid ? -1 : best == label ? 1 : 0;
  }
}

__global__ void cross_entropy_backward_kernel(const float* __restrict__ logp, const std::int32_t* __restrict__ labels,
                                              float* __restrict__ dlogits, std::int64_t outer, std::int64_t classes,
                                              std::int64_t inner, float scale) {
  const std::int64_t total = outer * classes * inner;
  for (std::int64_t e = first_index(); e < total; e += grid_stride()) {
    const std::int64_t o = e / (classes * inner), c = e / inner % classes, i = e % inner;
    dlogits[e] = (expf(logp[e]) - (labels[o * inner + i] == c ? 1.0f : 0.0f)) * scale;
  }
}

// Sum over the block (blockDim.x == threads) in a fixed tree; every thread gets the total.
__device__ float block_sum(float v, float* shared) {
  shared[threadIdx.x] = v;
  __syncthreads();
  for (int s = threads / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) shared[threadIdx.x] += shared[threadIdx.x + s];
    __syncthreads();
  }
  const float total = shared[0];
  __syncthreads();
  return total;
}

// One block per row; two passes (mean, then squared deviations) for accuracy on large offsets.
__global__ void layer_norm_forward_kernel(const float* __restrict__ x, const float* __restrict__ gamma,
                                          const float* __restrict__ beta, float* __restrict__ y,
                                          float* __restrict__ mean, float* __restrict__ rstd, std::int64_t rows,
                                          std::int64_t cols, float eps) {
  __shared__ float shared[threads];
  for (std::int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* xr = x + r * cols;
    float s = 0;
    for (std::int64_t c = threadIdx.x; c < cols; c += threads) s += xr[c];
    const float mu = block_sum(s, shared) / static_cast<float>(cols);
    float q = 0;
    for (std::int64_t c = threadIdx.x; c < cols; c += threads) q += (xr[c] - mu) * (xr[c] - mu);
    const float inv = rsqrtf(block_sum(q, shared) / static_cast<float>(cols) + eps);
    for (std::int64_t c = threadIdx.x; c < cols; c += threads) {
      const float xhat = (xr[c] - mu) * inv;
      y[r * cols + c] = gamma ? xhat * gamma[c] + beta[c] : xhat;
    }
    if (threadIdx.x == 0) mean[r] = mu, rstd[r] = inv;
  }
}

// dx = rstd * (g - mean(g) - xhat * mean(g * xhat)) with g = dy * gamma.
__global__ void layer_norm_dx_kernel(const float* __restrict__ x, const float* __restrict__ dy,
                                     const float* __restrict__ gamma, const float* __restrict__ mean,
                                     const float* __restrict__ rstd, float* __restrict__ dx, std::int64_t rows,
                                     std::int64_t cols) {
  __shared__ float shared[threads];
  for (std::int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* xr = x + r * cols;
    const float* dyr = dy + r * cols;
    const float mu = mean[r], inv = rstd[r];
    float sg = 0, sgx = 0;
    for (std::int64_t c = threadIdx.x; c < cols; c += threads) {
      const float g = gamma ? dyr[c] * gamma[c] : dyr[c];
      sg += g;
      sgx += g * (xr[c] - mu) * inv;
    }
    const float mg = block_sum(sg, shared) / static_cast<float>(cols);
    const float mgx = block_sum(sgx, shared) / static_cast<float>(cols);
    for (std::int64_t c = threadIdx.x; c < cols; c += threads) {
      const float g = gamma ? dyr[c] * gamma[c] : dyr[c];
      dx[r * cols + c] = inv * (g - mg - (xr[c] - mu) * inv * mgx);
    }
  }
}

__global__ void layer_norm_params_kernel(const float* __restrict__ x, const float* __restrict__ dy,
                                         const float* __restrict__ mean, const float* __restrict__ rstd,
                                         float* __restrict__ dgamma, float* __restrict__ dbeta, std::int64_t rows,
                                         std::int64_t cols) {
  for (std::int64_t c = first_index(); c < cols; c += grid_stride()) {
    float sg = 0, sb = 0;
    for (std::int64_t r = 0; r < rows; ++r) {
      const float d = dy[r * cols + c];
      sg += d * (x[r * cols + c] - mean[r]) * rstd[r];
      sb += d;
    }
    dgamma[c] = sg;
    dbeta[c] = sb;
  }
}

// One thread per element of the small tensor; `to_padded` picks the direction.
__global__ void pad_crop_kernel(const float* __restrict__ src, float* __restrict__ dst, std::int64_t planes,
                                std::int64_t h, std::int64_t w, std::int64_t hp, std::int64_t wp, std::int64_t top,
                                std::int64_t left, bool to_padded) {
  const std::int64_t n = planes * h * w;
  for (std::int64_t i = first_index(); i < n; i += grid_stride()) {
    const std::int64_t p = i / (h * w), r = i / w % h, c = i % w;
    const std::int64_t j = (p * hp + top + r) * wp + left + c;
    if (to_padded)
      dst[j] = src[i];
    else
      dst[i] = src[j];
  }
}

__global__ void fill_kernel(float* y, float value, std::int64_t n) {
  for (std::int64_t i = first_index(); i < n; i += grid_stride()) y[i] = value;
}

unsigned row_blocks(std::int64_t rows) { return static_cast<unsigned>(std::clamp<std::int64_t>(rows, 1, 65535)); }

}  // namespace

cudaError_t gelu_forward(const float* x, float* y, std::int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  gelu_forward_kernel<<<blocks_for(n), threads, 0, stream>>>(x, y, n);
  return cudaGetLastError();
}

cudaError_t gelu_backward(const float* x, const float* dy, float* dx, std::int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  gelu_backward_kernel<<<blocks_for(n), threads, 0, stream>>>(x, dy, dx, n);
  return cudaGetLastError();
}

cudaError_t dropout_forward(const float* x, float* y, std::int64_t n, const dropout_key& key, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  dropout_kernel<<<blocks_for(n), threads, 0, stream>>>(x, y, n, key);
  return cudaGetLastError();
}

// The backward is the same masked scaling applied to the gradient.
cudaError_t dropout_backward(const float* dy, float* dx, std::int64_t n, const dropout_key& key, cudaStream_t stream) {
  return dropout_forward(dy, dx, n, key, stream);
}

cudaError_t add_forward(const float* a, const float* b, float* y, std::int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  add_kernel<<<blocks_for(n), threads, 0, stream>>>(a, b, y, n);
  return cudaGetLastError();
}

cudaError_t accumulate(float* y, const float* x, std::int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  accumulate_kernel<<<blocks_for(n), threads, 0, stream>>>(y, x, n);
  return cudaGetLastError();
}

cudaError_t add_row_bias(float* y, const float* bias, std::int64_t rows, std::int64_t cols, cudaStream_t stream) {
  if (rows * cols == 0) return cudaSuccess;
  row_bias_kernel<<<blocks_for(rows * cols), threads, 0, stream>>>(y, bias, rows, cols);
  return cudaGetLastError();
}

cudaError_t column_sums(const float* m, float* out, std::int64_t rows, std::int64_t cols, cudaStream_t stream) {
  if (cols == 0) return cudaSuccess;
  column_sums_kernel<<<blocks_for(cols), threads, 0, stream>>>(m, out, rows, cols);
  return cudaGetLastError();
}

cudaError_t cross_entropy_loss(const float* logp, const std::int32_t* labels, float* loss, std::int32_t* correct,
                               std::int64_t outer, std::int64_t classes, std::int64_t inner, cudaStream_t stream) {
  if (outer * inner == 0) return cudaSuccess;
  cross_entropy_loss_kernel<<<blocks_for(outer * inner), threads, 0, stream>>>(logp, labels, loss, correct, outer,
                                                                               classes, inner);
  return cudaGetLastError();
}

cudaError_t cross_entropy_backward(const float* logp, const std::int32_t* labels, float* dlogits, std::int64_t outer,
                                   std::int64_t classes, std::int64_t inner, float scale, cudaStream_t stream) {
  const std::int64_t total = outer * classes * inner;
  if (total == 0) return cudaSuccess;
  cross_entropy_backward_kernel<<<blocks_for(total), threads, 0, stream>>>(logp, labels, dlogits, outer, classes, inner,
                                                                           scale);
  return cudaGetLastError();
}

cudaError_t layer_norm_forward(const float* x, const float* gamma, const float* beta, float* y, float* mean,
                               float* rstd, std::int64_t rows, std::int64_t cols, float eps, cudaStream_t stream) {
  if (rows == 0) return cudaSuccess;
  layer_norm_forward_kernel<<<row_blocks(rows), threads, 0, stream>>>(x, gamma, beta, y, mean, rstd, rows, cols, eps);
  return cudaGetLastError();
}

cudaError_t layer_norm_backward(const float* x, const float* dy, const float* gamma, const float* mean,
                                const float* rstd, float* dx, float* dgamma, float* dbeta, std::int64_t rows,
                                std::int64_t cols, cudaStream_t stream) {
  if (rows == 0) return cudaSuccess;
  if (dx) layer_norm_dx_kernel<<<row_blocks(rows), threads, 0, stream>>>(x, dy, gamma, mean, rstd, dx, rows, cols);
  if (dgamma)
    layer_norm_params_kernel<<<blocks_for(cols), threads, 0, stream>>>(x, dy, mean, rstd, dgamma, dbeta, rows, cols);
  return cudaGetLastError();
}

cudaError_t pad_planes(const float* x, float* xp, std::int64_t planes, std::int64_t h, std::int64_t w, std::int64_t hp,
                       std::int64_t wp, std::int64_t top, std::int64_t left, cudaStream_t stream) {
  const std::int64_t n = planes * h * w;
  if (n == 0) return cudaSuccess;
  pad_crop_kernel<<<blocks_for(n), threads, 0, stream>>>(x, xp, planes, h, w, hp, wp, top, left, true);
  return cudaGetLastError();
}

cudaError_t crop_planes(const float* xp, float* x, std::int64_t planes, std::int64_t h, std::int64_t w, std::int64_t hp,
                        std::int64_t wp, std::int64_t top, std::int64_t left, cudaStream_t stream) {
  const std::int64_t n = planes * h * w;
  if (n == 0) return cudaSuccess;
  pad_crop_kernel<<<blocks_for(n), threads, 0, stream>>>(xp, x, planes, h, w, hp, wp, top, left, false);
  return cudaGetLastError();
}

cudaError_t fill(float* y, float value, std::int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  fill_kernel<<<blocks_for(n), threads, 0, stream>>>(y, value, n);
  return cudaGetLastError();
}

}  // namespace toru::train::detail::cuda
