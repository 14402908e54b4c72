// SPDX-License-Identifier: BSD-3-Clause
// reshape3d: every point of the out box holds the value of its global index (an analytic
// reference every rank computes alone), padding is untouched, and bad boxes fail the same way on
// every rank. Odd and prime grids, uneven splits, empty boxes, permuted memory orders.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <string>
#include <vector>

#include "fft_test_util.hpp"
#include "mpi_test.hpp"
#include "toru/core/error.hpp"
#include "toru/fft/reshape3d.hpp"

namespace {

using toru::fft::box3d;
using index3 = std::array<std::int64_t, 3>;

std::int64_t part_start(std::int64_t n, int p, int r) { return n * r / p; }
std::int64_t part_count(std::int64_t n, int p, int r) { return part_start(n, p, r + 1) - part_start(n, p, r); }

// This rank's brick of a p[0] x p[1] x p[2] grid of ranks (rank = (c0 * p1 + c1) * p2 + c2), stored
// in `order` with `pad` extra elements per row.
box3d brick(index3 n, std::array<int, 3> p, int rank, std::array<int, 3> order = {0, 1, 2}, std::int64_t pad = 0) {
  const std::array<int, 3> c{rank / (p[1] * p[2]), rank / p[2] % p[1], rank % p[2]};
  box3d b;
  for (int a = 0; a < 3; ++a) {
    b.low[a] = part_start(n[a], p[a], c[a]);
    b.size[a] = part_count(n[a], p[a], c[a]);
  }
  b.order = order;
  b.row_stride = b.size[order[2]] + pad;
  return b;
}

// A split of P ranks into two factors, the larger first (P prime: P x 1).
std::array<int, 2> two_factors(int P) {
  for (int f = static_cast<int>(std::sqrt(static_cast<double>(P))); f >= 1; --f)
    if (P % f == 0) return {P / f, f};
  return {P, 1};
}

template <class T>
T value_at(index3 n, index3 g) {
  const auto i = static_cast<std::uint64_t>(toru::test::flat(n, g));
  if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>)
    return T(static_cast<typename T::value_type>(toru::test::noise(2 * i, 7)),
             static_cast<typename T::value_type>(toru::test::noise(2 * i + 1, 7)));
  else
    return static_cast<T>(toru::test::noise(i, 7));
}

// Fills in from its box, reshapes, and checks every point of out and that its padding kept the sentinel.
template <class T>
void check_reshape(index3 n, const box3d& in_box, const box3d& out_box) {
  toru::fft::reshape3d<T> r(MPI_COMM_WORLD, n, in_box, out_box);
  std::vector<T> in(static_cast<std::size_t>(r.in_size())), out(static_cast<std::size_t>(r.out_size()), T(-99));
  toru::test::for_each(r.inbox(), [&](index3 g, std::int64_t i) { in[i] = value_at<T>(n, g); });
  r.execute(in.data(), out.data());
  std::vector<bool> touched(out.size(), false);
  int wrong = 0;
  toru::test::for_each(r.outbox(), [&](index3 g, std::int64_t i) {
    touched[i] = true;
    if (out[i] != value_at<T>(n, g) && ++wrong <= 3)
      ADD_FAILURE() << "rank " << toru::test::rank() << " point [" << g[0] << ", " << g[1] << ", " << g[2] << "]";
  });
  for (std::size_t i = 0; i < out.size(); ++i)
    if (!touched[i]) {
      EXPECT_EQ(out[i], T(-99)) << "padding element " << i << " was written";
    }
  EXPECT_EQ(wrong, 0);
}

TEST(Reshape3d, SlabToPencilAndBackOnOddGrids) {
  const int P = toru::test::nranks(), me = toru::test::rank();
  const auto [a, b] = two_factors(P);
  for (index3 n : {index3{7, 9, 11}, index3{5, 13, 3}, index3{2, 3, 17}}) {
    const box3d x_slab = brick(n, {P, 1, 1}, me);
    // z-pencils stored with axis 1 contiguous and padded rows: a change of order on every block.
    const box3d z_pencil = brick(n, {a, b, 1}, me, {2, 0, 1}, 3);
    check_reshape<double>(n, x_slab, z_pencil);
    check_reshape<double>(n, z_pencil, x_slab);
    check_reshape<std::complex<float>>(n, x_slab, z_pencil);
  }
}

TEST(Reshape3d, PencilTransposesAsTwoDecomp) {
  // x-pencils -> y-pencils -> z-pencils on a p0 x p1 grid, as 2DECOMP&FFT's transposes.
  const int P = toru::test::nranks(), me = toru::test::rank();
  const auto [p0, p1] = two_factors(P);
  const index3 n{6, 11, 5};
  const box3d x = brick(n, {1, p0, p1}, me), y = brick(n, {p0, 1, p1}, me), z = brick(n, {p0, p1, 1}, me);
  check_reshape<std::complex<double>>(n, x, y);
  check_reshape<std::complex<double>>(n, y, z);
  check_reshape<float>(n, z, x);
}

TEST(Reshape3d, EmptyBoxesAndMoreRanksThanPlanes) {
  // Axis 0 of 3 planes over up to 8 ranks: ranks 3.. own nothing on one side.
  const int P = toru::test::nranks(), me = toru::test::rank();
  const index3 n{3, 4, 5};
  check_reshape<double>(n, brick(n, {P, 1, 1}, me), brick(n, {1, 1, P}, me, {1, 2, 0}));
  // Everything on the last rank, then spread out.
  box3d all_last;
  all_last.size = me == P - 1 ? n : index3{0, 0, 0};
  check_reshape<double>(n, all_last, brick(n, {1, P, 1}, me));
}

// Runs f, returns the toru::error every rank must throw.
template <class F>
toru::error expect_error(F&& f) {
  try {
    f();
  } catch (const toru::error& e) {
    return e;
  }
  ADD_FAILURE() << "no toru::error on rank " << toru::test::rank();
  return toru::error(toru::errc::success, "none");
}

TEST(Reshape3d, BadBoxesFailTheSameWayOnEveryRank) {
  const int P = toru::test::nranks(), me = toru::test::rank();
  const index3 n{8, 6, 4};
  const box3d good = brick(n, {P, 1, 1}, me);
  // One rank's box leaves the grid: every rank names that rank.
  box3d outside = good;
  if (me == P - 1) outside.size[1] = 7;
  auto e = expect_error([&] { toru::fft::reshape3d<double>(MPI_COMM_WORLD, n, good, outside); });
  EXPECT_EQ(e.code(), toru::errc::invalid_argument);
  EXPECT_NE(std::string(e.what()).find("out box of rank " + std::to_string(P - 1)), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("exceeds n[1] = 6"), std::string::npos) << e.what();
  // A gap: the last rank's box is one plane short.
  box3d gap = good;
  if (me == P - 1) gap.size[0] -= 1;
  e = expect_error([&] { toru::fft::reshape3d<double>(MPI_COMM_WORLD, n, gap, good); });
  EXPECT_EQ(e.code(), toru::errc::invalid_argument);
  EXPECT_NE(std::string(e.what()).find("cover 168 of the 192 points"), std::string::npos) << e.what();
  // An overlap: every rank claims the whole grid (with one rank, a box order that is no permutation).
  box3d whole;
  whole.size = n;
  if (P == 1) whole.order = {0, 0, 2};
  e = expect_error([&] { toru::fft::reshape3d<double>(MPI_COMM_WORLD, n, whole, good); });
  EXPECT_EQ(e.code(), toru::errc::invalid_argument);
  EXPECT_NE(std::string(e.what()).find(P == 1 ? "not a permutation" : "ranks 0 and 1 overlap"), std::string::npos)
      << e.what();
  // n differs on one rank.
  if (P > 1) {
    const index3 other = me == 1 ? index3{8, 6, 5} : n;
    e = expect_error([&] { toru::fft::reshape3d<double>(MPI_COMM_WORLD, other, good, good); });
    EXPECT_EQ(e.code(), toru::errc::mismatch);
  }
}

TEST(Reshape3d, NullBufferOnOneRankFailsEverywhereAndWritesNothing) {
  const int P = toru::test::nranks(), me = toru::test::rank();
  const index3 n{5, 4, 3};
  toru::fft::reshape3d<double> r(MPI_COMM_WORLD, n, brick(n, {P, 1, 1}, me), brick(n, {1, 1, P}, me));
  std::vector<double> in(static_cast<std::size_t>(r.in_size()), 1.0), out(static_cast<std::size_t>(r.out_size()), 2.0);
  ASSERT_GT(part_count(n[0], P, P - 1), 0);  // the last rank owns input: null is an error there
  const bool culprit = me == P - 1;
  auto e = expect_error([&] { r.execute(culprit ? nullptr : in.data(), out.data()); });
  EXPECT_EQ(e.code(), toru::errc::invalid_argument);
  for (double v : out) ASSERT_EQ(v, 2.0);
}

}  // namespace
