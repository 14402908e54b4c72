// SPDX-License-Identifier: BSD-3-Clause
// The axis-0 FFTs of the slab's middle layout (fft/src/column_fft.hpp) against FFTW's own strided
// plan, on random data: tiled and strided, in and out of place, both signs and precisions, both
// planner flags, and sizes where the tile does not divide the row (primes, odd widths). And the
// planes' 2D FFTs of local_fft, which under ESTIMATE run as rows + tiled columns, against FFTW's
// 2D plan: c2c both ways, r2c and c2r, in and out of place.
#include <gtest/gtest.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "column_fft.hpp"

namespace toru::fft::detail {
namespace {

struct shape {
  std::int64_t n0, w, blocks;
};

template <class T>
std::vector<std::complex<T>> random_points(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<T> u(-1, 1);
  std::vector<std::complex<T>> v(n);
  for (auto& x : v) x = {u(gen), u(gen)};
  return v;
}

// FFTW's strided plan straight over the data: the reference.
template <class T>
std::vector<std::complex<T>> reference(const std::vector<std::complex<T>>& in, shape s, int sign) {
  using api = fftw_api<T>;
  std::vector<std::complex<T>> x(in), y(in.size());
  const typename api::iodim dims[1] = {{s.n0, s.w, s.w}};
  const typename api::iodim how[2] = {{s.blocks, s.n0 * s.w, s.n0 * s.w}, {s.w, 1, 1}};
  auto p = api::guru_dft(1, dims, 2, how, x.data(), y.data(), sign, FFTW_ESTIMATE | FFTW_UNALIGNED);
  EXPECT_NE(p, nullptr);
  api::execute_dft(p, x.data(), y.data());
  api::destroy(p);
  return y;
}

template <class T>
void check(shape s, int sign, bool in_place, unsigned flags, bool expect_tiled = false, std::int64_t tile_bytes = 0) {
  using cpx = std::complex<T>;
  const auto n = static_cast<std::size_t>(s.n0 * s.w * s.blocks);
  auto* a = static_cast<cpx*>(fftw_api<T>::malloc(n * sizeof(cpx) + 64));
  auto* b = static_cast<cpx*>(fftw_api<T>::malloc(n * sizeof(cpx) + 64));
  column_fft<T> f(s.n0, s.w, s.blocks, sign, in_place, flags, a, in_place ? a : b, tile_bytes);
  if (flags & FFTW_ESTIMATE) {
    EXPECT_EQ(f.tile_columns() > 0, expect_tiled) << "n0 " << s.n0 << " w " << s.w;
  }
  const auto input = random_points<T>(n, static_cast<unsigned>(s.n0 * 131 + s.w * 7 + s.blocks));
  const auto want = reference(input, s, sign);
  // Off the planned alignment too (a caller's buffer one point in).
  for (std::size_t shift : {std::size_t{0}, std::size_t{1}}) {
    std::copy(input.begin(), input.end(), a + shift);
    cpx* out = in_place ? a + shift : b + shift;
    f.execute(a + shift, out);
    const T tol = (sizeof(T) == 4 ? 2e-5f : 1e-12) * static_cast<T>(std::max<std::int64_t>(s.n0, 8));
    double worst = 0;
    for (std::size_t i = 0; i < n; ++i) worst = std::max(worst, static_cast<double>(std::abs(out[i] - want[i])));
    EXPECT_LE(worst, tol) << "n0 " << s.n0 << " w " << s.w << " blocks " << s.blocks << " sign " << sign
                          << (in_place ? " in place" : " out of place") << " shift " << shift << " tile "
                          << f.tile_columns();
  }
  fftw_api<T>::free(a);
  fftw_api<T>::free(b);
}

// Double: 128 x 128 blocks (tiles of 8 divide the row); 127 x 65 (prime length, odd width: tiles
// of 8 and a remainder of 1); 256 x 10 (tiles of 4, remainder 2); 64 x 100 (tiles of 16, remainder
// 4). 16 x 16 fits L1 and 1 x 40 has one point per column: the strided plan.
struct tiled_shape {
  shape s;
  bool tiled_double, tiled_float;
};
const tiled_shape shapes[] = {{{128, 128, 3}, true, true}, {{127, 65, 2}, true, true},  {{256, 10, 5}, true, false},
                              {{64, 100, 1}, true, true},  {{16, 16, 4}, false, false}, {{1, 40, 2}, false, false}};

TEST(ColumnFft, MatchesFftwStridedPlanEstimate) {
  for (const tiled_shape& t : shapes)
    for (int sign : {FFTW_FORWARD, FFTW_BACKWARD})
      for (bool in_place : {true, false}) {
        check<double>(t.s, sign, in_place, FFTW_ESTIMATE, t.tiled_double);
        check<float>(t.s, sign, in_place, FFTW_ESTIMATE, t.tiled_float);
      }
}

TEST(ColumnFft, WideTilesMatchFftwStridedPlan) {
  // The 64 KiB tiles of blocks past the caches: 32 columns at n0 = 128 with a remainder of 4, 16
  // at n0 = 256 (dividing the row), 2 (the SIMD pair) at a prime n0 whose narrow tile is 2 as well.
  for (const shape& s : {shape{128, 100, 2}, shape{256, 48, 1}, shape{2039, 6, 1}})
    for (bool in_place : {true, false}) {
      check<double>(s, FFTW_FORWARD, in_place, FFTW_ESTIMATE, true, 64 * 1024);
      check<float>(s, FFTW_BACKWARD, in_place, FFTW_ESTIMATE, true, 64 * 1024);
    }
  std::vector<std::complex<double>> x(128 * 100);
  EXPECT_EQ((column_fft<double>(128, 100, 1, FFTW_FORWARD, true, FFTW_ESTIMATE, x.data(), x.data(), 64 * 1024)
                 .tile_columns()),
            32);
}

TEST(ColumnFft, EstimateWidensTilesFromBlocksOf32MiB) {
  // 256 x 256 doubles are 1 MiB a block: 31 blocks keep the 16 KiB tile (4 columns), 32 take the
  // 64 KiB one (16 columns).
  std::vector<std::complex<double>> x(std::size_t{256} * 256 * 32);
  for (const auto& [blocks, columns] : {std::pair{31, 4}, std::pair{32, 16}})
    EXPECT_EQ(
        (column_fft<double>(256, 256, blocks, FFTW_FORWARD, true, FFTW_ESTIMATE, x.data(), x.data()).tile_columns()),
        columns)
        << blocks << " blocks";
}

TEST(ColumnFft, MatchesFftwStridedPlanMeasure) {
  // Whichever way plan-time timing keeps, the result is the transform.
  for (const shape& s : {shape{128, 128, 2}, shape{127, 65, 1}})
    for (bool in_place : {true, false}) check<double>(s, FFTW_FORWARD, in_place, FFTW_MEASURE);
}

TEST(ColumnFft, StridedPlanOfOneBlockRunsOnEveryBlock) {
  // MEASURE's strided candidate is planned on one block (FFTW_MEASURE's plan time grows with the
  // problem it is given) and run once per block: every block must come out transformed, also in
  // float where an odd block (127 x 65 x 8 bytes) leaves every other block off FFTW's alignment.
  for (bool in_place : {true, false}) {
    check<double>(shape{128, 128, 3}, FFTW_FORWARD, in_place, FFTW_MEASURE, false, -1);
    check<float>(shape{127, 65, 3}, FFTW_BACKWARD, in_place, FFTW_ESTIMATE, false, -1);
  }
  std::vector<std::complex<double>> x(128 * 128 * 2);
  EXPECT_EQ((column_fft<double>(128, 128, 2, FFTW_FORWARD, true, FFTW_ESTIMATE, x.data(), x.data(), -1).tile_columns()),
            0);
}

TEST(ColumnFft, MeasureTimesTheFirstBlocksAndRunsEveryBlock) {
  // MEASURE times its tilings on the blocks of the first 64 MiB only: 127 x 65 double blocks are
  // 132080 bytes, so 508 are timed and the last 12 of these 520 (68.7 MB) never were; the plan
  // kept must transform them all, odd width and prime length included.
  check<double>(shape{127, 65, 520}, FFTW_BACKWARD, false, FFTW_MEASURE);
}

TEST(ColumnFft, MeasureTimesTheSameColumnsOnceEitherSign) {
  // The backward of columns MEASURE tiled forward takes the forward's choice untimed, and is the
  // backward transform; other columns (another width, out of place) are timed afresh.
  const shape s{131, 48, 3};
  const long before = column_fft<double>::tilings_timed();
  check<double>(s, FFTW_FORWARD, true, FFTW_MEASURE);
  EXPECT_EQ(column_fft<double>::tilings_timed(), before + 1);
  check<double>(s, FFTW_BACKWARD, true, FFTW_MEASURE);
  EXPECT_EQ(column_fft<double>::tilings_timed(), before + 1);
  check<double>(s, FFTW_BACKWARD, false, FFTW_MEASURE);
  EXPECT_EQ(column_fft<double>::tilings_timed(), before + 2);
  check<double>(shape{131, 50, 3}, FFTW_BACKWARD, true, FFTW_MEASURE);
  EXPECT_EQ(column_fft<double>::tilings_timed(), before + 3);
  std::vector<std::complex<double>> x(131 * 48 * 3);
  const column_fft<double> f(131, 48, 3, FFTW_FORWARD, true, FFTW_MEASURE, x.data(), x.data());
  const column_fft<double> g(131, 48, 3, FFTW_BACKWARD, true, FFTW_MEASURE, x.data(), x.data());
  EXPECT_EQ(f.tile_columns(), g.tile_columns());
}

TEST(ColumnFft, ZeroBlocksDoNothing) {
  std::vector<std::complex<double>> x(4, {1.0, 2.0});
  column_fft<double> f(128, 128, 0, FFTW_FORWARD, true, FFTW_ESTIMATE, x.data(), x.data());
  f.execute(x.data(), x.data());
  for (const auto& v : x) EXPECT_EQ(v, std::complex<double>(1.0, 2.0));
}

}  // namespace
}  // namespace toru::fft::detail
