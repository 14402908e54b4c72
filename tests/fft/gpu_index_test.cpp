// SPDX-License-Identifier: BSD-3-Clause
// The index arithmetic of the cuFFT backend's pack and unpack kernels (backend_cufft_index.hpp,
// the same functions the kernels call), checked on the CPU: q ranks are emulated, each packs its
// source stage, the blocks move as the device transpose's counts and displacements say, each
// unpacks, and every destination element must be the source element of the same (t, a, b).
// Runs without a GPU.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "backend_cufft_index.hpp"

namespace {

using namespace toru::fft::detail::gpu;

std::int64_t value(std::int64_t t, std::int64_t a, std::int64_t b, std::int64_t na, std::int64_t nb) {
  return (t * na + a) * nb + b;
}

void check_transpose(std::int64_t T, std::int64_t na, std::int64_t nb, int q, bool src_t_outer, bool dst_t_outer) {
  SCOPED_TRACE(::testing::Message() << "T=" << T << " na=" << na << " nb=" << nb << " q=" << q
                                    << " src_t_outer=" << src_t_outer << " dst_t_outer=" << dst_t_outer);
  std::vector<std::vector<std::int64_t>> send(q), recv(q);
  for (int r = 0; r < q; ++r) {
    const pack_geometry g{T, na, nb, q, r, src_t_outer, dst_t_outer};
    const std::int64_t B = balanced_count(nb, q, r), b0 = balanced_start(nb, q, r);
    // Source stage of rank r: rows (t, j) of na elements, j over this rank's part of axis b.
    std::vector<std::int64_t> src(static_cast<std::size_t>(T * B * na));
    for (std::int64_t t = 0; t < T; ++t)
      for (std::int64_t j = 0; j < B; ++j)
        for (std::int64_t a = 0; a < na; ++a) {
          const std::int64_t row = src_t_outer ? t * B + j : j * T + t;
          src[static_cast<std::size_t>(row * na + a)] = value(t, a, b0 + j, na, nb);
        }
    send[r].resize(static_cast<std::size_t>(T * na * B));
    for (std::int64_t e = 0; e < T * na * B; ++e) {
      const std::int64_t i = pack_source(g, B, e);
      ASSERT_GE(i, 0);
      ASSERT_LT(i, static_cast<std::int64_t>(src.size()));
      send[r][static_cast<std::size_t>(e)] = src[static_cast<std::size_t>(i)];
    }
  }
  // The exchange of device_transpose_step: block for d at T*B_r*a_start(d) (T*A_d*B_r elements),
  // landing in d's receive buffer at T*A_d*b_start(r).
  for (int d = 0; d < q; ++d) {
    const std::int64_t A = balanced_count(na, q, d);
    recv[d].assign(static_cast<std::size_t>(T * A * nb), -1);
    for (int r = 0; r < q; ++r) {
      const std::int64_t B = balanced_count(nb, q, r);
      const std::int64_t so = T * B * balanced_start(na, q, d), ro = T * A * balanced_start(nb, q, r);
      for (std::int64_t k = 0; k < T * A * B; ++k)
        recv[d][static_cast<std::size_t>(ro + k)] = send[r][static_cast<std::size_t>(so + k)];
    }
  }
  for (int d = 0; d < q; ++d) {
    const pack_geometry g{T, na, nb, q, d, src_t_outer, dst_t_outer};
    const std::int64_t A = balanced_count(na, q, d), a0 = balanced_start(na, q, d), L = T * A;
    for (std::int64_t l = 0; l < L; ++l) {
      const std::int64_t t = dst_t_outer ? l / A : l % T, a = a0 + (dst_t_outer ? l % A : l / T);
      for (std::int64_t b = 0; b < nb; ++b) {
        const std::int64_t i = unpack_source(g, L, l, b);
        ASSERT_GE(i, 0);
        ASSERT_LT(i, static_cast<std::int64_t>(recv[d].size()));
        ASSERT_EQ(recv[d][static_cast<std::size_t>(i)], value(t, a, b, na, nb))
            << "rank " << d << " row " << l << " column " << b;
      }
    }
  }
}

TEST(FftGpuIndex, BalancedOwnerInvertsTheSplit) {
  for (std::int64_t n : {1, 2, 5, 7, 16, 17, 30, 64})
    for (int p = 1; p <= 9; ++p)
      for (int r = 0; r < p; ++r)
        for (std::int64_t i = balanced_start(n, p, r); i < balanced_start(n, p, r) + balanced_count(n, p, r); ++i)
          ASSERT_EQ(balanced_owner(n, p, i), r) << "n=" << n << " p=" << p << " i=" << i;
}

TEST(FftGpuIndex, PackExchangeUnpackIsTheTranspose) {
  // Awkward sizes: primes, fewer points than ranks on one axis, T = 1 (1D plans).
  for (int q : {1, 2, 3, 5, 8})
    for (std::int64_t T : {1, 3})
      for (auto [na, nb] : {std::pair<std::int64_t, std::int64_t>{7, 11}, {17, 30}, {8, 8}, {q + 1, q}, {13, 2}})
        for (bool so : {true, false})
          for (bool dto : {true, false}) {
            if (na < q || nb < q) continue;  // every rank holds points (the plans guarantee it)
            check_transpose(T, na, nb, q, so, dto);
          }
  std::mt19937 rng(7);
  for (int k = 0; k < 40; ++k) {
    const int q = 1 + static_cast<int>(rng() % 7);
    check_transpose(1 + rng() % 4, q + rng() % 20, q + rng() % 20, q, rng() % 2, rng() % 2);
  }
}

}  // namespace
