// SPDX-License-Identifier: BSD-3-Clause
// local_fft's planes (fft/src/local_fft.hpp) against FFTW's own 2D plan, on random data: under
// FFTW_ESTIMATE planes beyond L1 run as rows + tiled columns, the rest as one FFTW plan; c2c both
// ways, r2c and c2r (from a Hermitian input: the r2c of random reals), in and out of place, two
// planes per call, sizes with odd and prime extents; r2c and c2r with packed (unpadded) real rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "local_fft.hpp"

namespace toru::fft::detail {
namespace {

using cpx = std::complex<double>;
using api = fftw_api<double>;

constexpr int planes = 2;

// FFTW's 2D plan over `planes` units in the padded layout local_fft uses: complex rows of
// n2/2+1 (real transforms) or n2 points, real rows padded to 2 (n2/2+1).
std::vector<double> reference(fft_kind kind, int n1, int n2, std::vector<double> in) {
  const int dims[2] = {n1, n2};
  const int nc = n2 / 2 + 1;
  const int cemb[2] = {n1, nc}, remb[2] = {n1, 2 * nc};
  std::vector<double> out(in.size());
  auto* ci = reinterpret_cast<api::cpx*>(in.data());
  auto* co = reinterpret_cast<api::cpx*>(out.data());
  api::plan p = nullptr;
  if (kind == fft_kind::r2c)
    p = api::many_r2c(2, dims, planes, in.data(), remb, 1, n1 * 2 * nc, co, cemb, 1, n1 * nc, FFTW_ESTIMATE);
  else if (kind == fft_kind::c2r)
    p = api::many_c2r(2, dims, planes, ci, cemb, 1, n1 * nc, out.data(), remb, 1, n1 * 2 * nc, FFTW_ESTIMATE);
  else
    p = api::many_dft(2, dims, planes, ci, nullptr, 1, n1 * n2, co, nullptr, 1, n1 * n2,
                      kind == fft_kind::c2c_forward ? FFTW_FORWARD : FFTW_BACKWARD, FFTW_ESTIMATE);
  EXPECT_NE(p, nullptr);
  if (kind == fft_kind::r2c)
    api::execute_r2c(p, in.data(), co);
  else if (kind == fft_kind::c2r)
    api::execute_c2r(p, ci, out.data());
  else
    api::execute_dft(p, ci, co);
  api::destroy(p);
  return out;
}

void check(fft_kind kind, int n1, int n2, bool in_place, unsigned flags, bool expect_split) {
  const bool real = kind == fft_kind::r2c || kind == fft_kind::c2r;
  const int nc = real ? n2 / 2 + 1 : n2;
  const std::size_t doubles = static_cast<std::size_t>(planes) * n1 * nc * 2;  // complex, or padded reals
  std::vector<double> input(doubles);
  std::mt19937 gen(static_cast<unsigned>(n1 * 1000 + n2));
  std::uniform_real_distribution<double> u(-1, 1);
  for (auto& x : input) x = u(gen);
  if (real) {  // padded reals for r2c; for c2r a Hermitian input: the r2c of them
    for (int r = 0; r < planes * n1; ++r)
      for (int i = n2; i < 2 * nc; ++i) input[static_cast<std::size_t>(r) * 2 * nc + i] = 0;
    if (kind == fft_kind::c2r) input = reference(fft_kind::r2c, n1, n2, input);
  }
  const auto want = reference(kind, n1, n2, input);
  auto* a = static_cast<double*>(api::malloc(doubles * sizeof(double)));
  auto* b = static_cast<double*>(api::malloc(doubles * sizeof(double)));
  local_fft<double> f(kind, {n1, n2}, {planes}, in_place, flags, a, in_place ? a : b);
  if (flags & FFTW_ESTIMATE) {
    EXPECT_EQ(f.split_planes(), expect_split) << n1 << "x" << n2;
  }
  std::copy(input.begin(), input.end(), a);
  double* out = in_place ? a : b;
  f.execute(planes, a, out);
  double worst = 0, scale = 0;
  for (std::size_t i = 0; i < doubles; ++i) {
    if (kind == fft_kind::c2r && static_cast<int>(i % (2 * nc)) >= n2) continue;  // padding
    worst = std::max(worst, std::abs(out[i] - want[i]));
    scale = std::max(scale, std::abs(want[i]));
  }
  EXPECT_LE(worst, 1e-13 * std::max(scale, 1.0))
      << n1 << "x" << n2 << " kind " << static_cast<int>(kind) << (in_place ? " in place" : " out of place");
  if (kind == fft_kind::c2r && !in_place && f.split_planes()) {  // the split c2r keeps its input (FFTW's may not)
    EXPECT_TRUE(std::equal(input.begin(), input.end(), a)) << n1 << "x" << n2 << " c2r overwrote its input";
  }
  api::free(a);
  api::free(b);
}

TEST(LocalFftPlanes, MatchFftw2dPlan) {
  // {n1, n2, split under ESTIMATE for c2c, for r2c/c2r}: 128 x 128 and 61 x 130 (a prime number of
  // rows) outgrow L1; 16 x 16 does not; 8 x 300 does as c2c (37.5 KiB) but not with its real
  // transforms' 151 complex points per row (18.9 KiB).
  struct size {
    int n1, n2;
    bool split_c2c, split_real;
  };
  for (const size& z :
       {size{128, 128, true, true}, size{61, 130, true, true}, size{16, 16, false, false}, size{8, 300, true, false}})
    for (fft_kind kind : {fft_kind::c2c_forward, fft_kind::c2c_backward, fft_kind::r2c, fft_kind::c2r})
      for (bool in_place : {false, true}) {
        const bool real = kind == fft_kind::r2c || kind == fft_kind::c2r;
        check(kind, z.n1, z.n2, in_place, FFTW_ESTIMATE, real ? z.split_real : z.split_c2c);
      }
}

// Packed real rows (n2 reals each, as a caller's own array; the direct window's planes on the
// caller's boxes): r2c from them, c2r into them, against FFTW's plan in the padded layout, with a
// guard after the packed buffer that must stay untouched.
void check_packed(fft_kind kind, int n1, int n2, unsigned flags) {
  const int nc = n2 / 2 + 1;
  const std::size_t padded = static_cast<std::size_t>(planes) * n1 * 2 * nc, packed = std::size_t{1} * planes * n1 * n2;
  std::vector<double> reals(padded, 0.0);
  std::mt19937 gen(static_cast<unsigned>(n1 * 7 + n2));
  std::uniform_real_distribution<double> u(-1, 1);
  for (int r = 0; r < planes * n1; ++r)
    for (int i = 0; i < n2; ++i) reals[static_cast<std::size_t>(r) * 2 * nc + i] = u(gen);
  const auto coefs = reference(fft_kind::r2c, n1, n2, reals);
  const auto want = kind == fft_kind::r2c ? coefs : reference(fft_kind::c2r, n1, n2, coefs);
  constexpr std::size_t guard = 8;
  auto* c = static_cast<double*>(api::malloc(padded * sizeof(double)));            // complex side
  auto* r = static_cast<double*>(api::malloc((packed + guard) * sizeof(double)));  // packed reals
  const bool r2c = kind == fft_kind::r2c;
  local_fft<double> f(kind, {n1, n2}, {planes}, false, flags, r2c ? static_cast<void*>(r) : c,
                      r2c ? static_cast<void*>(c) : r, true);
  for (std::size_t i = 0; i < guard; ++i) r[packed + i] = -7.25;
  for (int row = 0; row < planes * n1; ++row)
    for (int i = 0; i < n2; ++i)
      r[static_cast<std::size_t>(row) * n2 + i] = r2c ? reals[static_cast<std::size_t>(row) * 2 * nc + i] : 0.0;
  if (!r2c) std::copy(coefs.begin(), coefs.end(), c);
  if (r2c)
    f.execute(planes, r, c);
  else
    f.execute(planes, c, r);
  double worst = 0, scale = 0;
  for (int row = 0; row < planes * n1; ++row)
    for (int i = 0; i < (r2c ? 2 * nc : n2); ++i) {
      const std::size_t w = static_cast<std::size_t>(row) * 2 * nc + i;
      const double got = r2c ? c[w] : r[static_cast<std::size_t>(row) * n2 + i];
      worst = std::max(worst, std::abs(got - want[w]));
      scale = std::max(scale, std::abs(want[w]));
    }
  EXPECT_LE(worst, 1e-13 * std::max(scale, 1.0)) << n1 << "x" << n2 << (r2c ? " r2c" : " c2r") << " packed";
  for (std::size_t i = 0; i < guard; ++i) EXPECT_EQ(r[packed + i], -7.25) << n1 << "x" << n2 << " overran";
  api::free(c);
  api::free(r);
}

TEST(LocalFftPlanes, PackedRealRowsMatchFftw2dPlan) {
  // Split (128 x 128, 61 x 130) and whole (16 x 16, 8 x 300, 9 x 7) planes; odd n2 leaves the
  // packed rows unaligned.
  for (auto [n1, n2] : {std::pair{128, 128}, std::pair{61, 130}, std::pair{16, 16}, std::pair{8, 300}, std::pair{9, 7},
                        std::pair{64, 63}})
    for (fft_kind kind : {fft_kind::r2c, fft_kind::c2r}) check_packed(kind, n1, n2, FFTW_ESTIMATE);
  for (fft_kind kind : {fft_kind::r2c, fft_kind::c2r}) check_packed(kind, 16, 15, FFTW_MEASURE);
}

TEST(LocalFftPlanes, MeasureKeepsFftw2dPlan) {
  for (fft_kind kind : {fft_kind::c2c_forward, fft_kind::c2r}) {
    std::vector<double> in(64 * 66 * 2), out(in.size());
    local_fft<double> f(kind, {64, 64}, {1}, false, FFTW_MEASURE, in.data(), out.data());
    EXPECT_FALSE(f.split_planes());
  }
  check(fft_kind::r2c, 64, 64, false, FFTW_MEASURE, false);
}

TEST(LocalFftLines, BatchesPastTheCapRunAsPieces) {
  // Lines of 2^16 complex points are 1 MiB, 4 to the 4 MiB cap: a batch of 6 is planned as two
  // pieces of 3 (one FFTW problem, not 4 + 2), a prime batch of 7 as 4 + 3, each with the single
  // line every list ends with; each runs the batch it names and others (5, 13) as pieces, against
  // FFTW's plan of all the lines at once.
  constexpr int n = 1 << 16;
  for (const auto& [planned, pieces] : {std::pair{std::int64_t{6}, std::vector<std::int64_t>{3, 1}},
                                        std::pair{std::int64_t{7}, std::vector<std::int64_t>{4, 3, 1}}})
    for (const std::int64_t units : {planned, std::int64_t{5}, std::int64_t{13}}) {
      const auto points = static_cast<std::size_t>(units) * n;
      auto* a = static_cast<cpx*>(api::malloc(points * sizeof(cpx)));
      auto* b = static_cast<cpx*>(api::malloc(points * sizeof(cpx)));
      auto* want = static_cast<cpx*>(api::malloc(points * sizeof(cpx)));
      local_fft<double> f(fft_kind::c2c_forward, {n}, {planned}, false, FFTW_ESTIMATE, a, b);
      EXPECT_EQ(f.planned_batches(), pieces) << "planned " << planned;
      std::mt19937 gen(static_cast<unsigned>(units));
      std::uniform_real_distribution<double> u(-1, 1);
      for (std::size_t i = 0; i < points; ++i) a[i] = {u(gen), u(gen)};
      auto* ca = reinterpret_cast<api::cpx*>(a);
      auto* cw = reinterpret_cast<api::cpx*>(want);
      auto p = api::many_dft(1, &n, static_cast<int>(units), ca, nullptr, 1, n, cw, nullptr, 1, n, FFTW_FORWARD,
                             FFTW_ESTIMATE);
      ASSERT_NE(p, nullptr);
      api::execute_dft(p, ca, cw);
      api::destroy(p);
      f.execute(units, a, b);
      double worst = 0;
      for (std::size_t i = 0; i < points; ++i) worst = std::max(worst, std::abs(b[i] - want[i]));
      EXPECT_LE(worst, 1e-9) << "planned " << planned << " ran " << units;
      api::free(a);
      api::free(b);
      api::free(want);
    }
}

}  // namespace
}  // namespace toru::fft::detail
