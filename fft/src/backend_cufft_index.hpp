// SPDX-License-Identifier: BSD-3-Clause
// Index arithmetic of the cuFFT backend's pack and unpack kernels, callable from host and device,
// so that a CPU test (tests/fft/gpu_index_test.cpp) checks the very formulas the kernels run.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define TORU_FFT_HD __host__ __device__
#else
#define TORU_FFT_HD
#endif

namespace toru::fft::detail::gpu {

/// Geometry of a transpose (see transpose_geometry), with axes split by balanced blocks.
struct pack_geometry {
  std::int64_t T, na, nb;
  int q, me;
  bool src_t_outer, dst_t_outer;
};

TORU_FFT_HD inline std::int64_t balanced_start(std::int64_t n, int p, int r) {
  const std::int64_t base = n / p, rem = n % p;
  return r * base + (r < rem ? r : rem);
}
TORU_FFT_HD inline std::int64_t balanced_count(std::int64_t n, int p, int r) { return n / p + (r < n % p ? 1 : 0); }
/// The part holding index i of n split over p.
TORU_FFT_HD inline int balanced_owner(std::int64_t n, int p, std::int64_t i) {
  const std::int64_t base = n / p, rem = n % p, big = rem * (base + 1);
  if (i < big) return static_cast<int>(i / (base + 1));
  return static_cast<int>(rem + (i - big) / base);
}

/// Source index (in the stage) of element e of the send buffer (B = this rank's part of axis b).
/// Block d starts at T*B*a_start(d); element e lies in the block of the owner of axis-a index
/// e / (T*B): within block d, r = e - T*B*a0 = line*B + j with j < B, so r / (T*B) = line / T < A_d.
TORU_FFT_HD inline std::int64_t pack_source(const pack_geometry& g, std::int64_t B, std::int64_t e) {
  const std::int64_t tb = g.T * B;
  const int d = balanced_owner(g.na, g.q, e / tb);
  const std::int64_t a0 = balanced_start(g.na, g.q, d), A = balanced_count(g.na, g.q, d);
  const std::int64_t r = e - tb * a0, line = r / B, j = r % B;
  const std::int64_t t = g.dst_t_outer ? line / A : line % g.T;
  const std::int64_t a = g.dst_t_outer ? line % A : line / g.T;
  const std::int64_t row = g.src_t_outer ? t * B + j : j * g.T + t;
  return row * g.na + a0 + a;
}

/// Receive-buffer index of destination element (l, b) (L = T*A destination rows): source s owning
/// b sent a block starting at L*b_start(s) of rows of B_s elements.
TORU_FFT_HD inline std::int64_t unpack_source(const pack_geometry& g, std::int64_t L, std::int64_t l, std::int64_t b) {
  const int s = balanced_owner(g.nb, g.q, b);
  const std::int64_t b0 = balanced_start(g.nb, g.q, s), Bs = balanced_count(g.nb, g.q, s);
  return L * b0 + l * Bs + (b - b0);
}

}  // namespace toru::fft::detail::gpu
