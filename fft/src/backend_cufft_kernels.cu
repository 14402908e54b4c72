// SPDX-License-Identifier: BSD-3-Clause
// Device kernels of the cuFFT backend: pack / unpack around the all-to-all, six-step twiddle and
// scaling. Grid-stride loops over 64-bit indices; the balanced split (split.hpp) is recomputed
// per element (backend_cufft_index.hpp) so that no per-rank tables live on the device.
#include "backend_cufft_kernels.hpp"

#include <algorithm>

namespace toru::fft::detail::gpu {

namespace {

template <class T>
struct vec2;
template <>
struct vec2<float> {
  using type = float2;
};
template <>
struct vec2<double> {
  using type = double2;
};

// Index arithmetic: backend_cufft_index.hpp (shared with a CPU test).
template <class C>
__global__ void pack_kernel(pack_geometry g, std::int64_t B, const C* __restrict__ src, C* __restrict__ send) {
  const std::int64_t total = g.T * g.na * B;
  for (std::int64_t e = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    send[e] = src[pack_source(g, B, e)];
  }
}

template <class C>
__global__ void unpack_kernel(pack_geometry g, std::int64_t L, std::int64_t l0, std::int64_t l1,
                              const C* __restrict__ recv, C* __restrict__ dst) {
  const std::int64_t total = (l1 - l0) * g.nb;
  for (std::int64_t e = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t l = l0 + e / g.nb, b = e % g.nb;
    dst[l * g.nb + b] = recv[unpack_source(g, L, l, b)];
  }
}

template <class C>
__global__ void twiddle_kernel(C* data, const C* __restrict__ tw, std::int64_t count, bool conjugate) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const C x = data[i];
    C w = tw[i];
    if (conjugate) w.y = -w.y;
    data[i].x = x.x * w.x - x.y * w.y;
    data[i].y = x.x * w.y + x.y * w.x;
  }
}

template <class R>
__global__ void scale_kernel(R* data, std::int64_t count, R factor) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    data[i] *= factor;
}

constexpr int threads = 256;
// Enough blocks to fill a large GPU; the grid-stride loops cover the rest.
unsigned blocks_for(std::int64_t n) {
  return static_cast<unsigned>(std::clamp<std::int64_t>((n + threads - 1) / threads, 1, 65535));
}

}  // namespace

template <class T>
cudaError_t launch_pack(const pack_geometry& g, const T* src, T* send, cudaStream_t stream) {
  using C = typename vec2<T>::type;
  const std::int64_t B = balanced_count(g.nb, g.q, g.me);
  const std::int64_t total = g.T * g.na * B;
  if (total == 0) return cudaSuccess;
  pack_kernel<C>
      <<<blocks_for(total), threads, 0, stream>>>(g, B, reinterpret_cast<const C*>(src), reinterpret_cast<C*>(send));
  return cudaGetLastError();
}

template <class T>
cudaError_t launch_unpack(const pack_geometry& g, const T* recv, T* dst, std::int64_t l0, std::int64_t l1,
                          cudaStream_t stream) {
  using C = typename vec2<T>::type;
  const std::int64_t A = balanced_count(g.na, g.q, g.me);
  const std::int64_t total = (l1 - l0) * g.nb;
  if (total <= 0) return cudaSuccess;
  unpack_kernel<C><<<blocks_for(total), threads, 0, stream>>>(g, g.T * A, l0, l1, reinterpret_cast<const C*>(recv),
                                                              reinterpret_cast<C*>(dst));
  return cudaGetLastError();
}

template <class T>
cudaError_t launch_twiddle(T* data, const T* tw, std::int64_t count, bool conjugate, cudaStream_t stream) {
  using C = typename vec2<T>::type;
  if (count <= 0) return cudaSuccess;
  twiddle_kernel<C><<<blocks_for(count), threads, 0, stream>>>(reinterpret_cast<C*>(data),
                                                               reinterpret_cast<const C*>(tw), count, conjugate);
  return cudaGetLastError();
}

template <class T>
cudaError_t launch_scale(T* data, std::int64_t count, T factor, cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  scale_kernel<T><<<blocks_for(2 * count), threads, 0, stream>>>(data, 2 * count, factor);
  return cudaGetLastError();
}

template cudaError_t launch_pack<float>(const pack_geometry&, const float*, float*, cudaStream_t);
template cudaError_t launch_pack<double>(const pack_geometry&, const double*, double*, cudaStream_t);
template cudaError_t launch_unpack<float>(const pack_geometry&, const float*, float*, std::int64_t, std::int64_t,
                                          cudaStream_t);
template cudaError_t launch_unpack<double>(const pack_geometry&, const double*, double*, std::int64_t, std::int64_t,
                                           cudaStream_t);
template cudaError_t launch_twiddle<float>(float*, const float*, std::int64_t, bool, cudaStream_t);
template cudaError_t launch_twiddle<double>(double*, const double*, std::int64_t, bool, cudaStream_t);
template cudaError_t launch_scale<float>(float*, std::int64_t, float, cudaStream_t);
template cudaError_t launch_scale<double>(double*, std::int64_t, double, cudaStream_t);

}  // namespace toru::fft::detail::gpu
