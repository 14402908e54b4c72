// SPDX-License-Identifier: BSD-3-Clause
// FFT plans between the caller's own boxes: bricks of a 3D rank grid in permuted memory orders in,
// slabs or pencils out, against serial FFTW on the whole array (c2c and r2c, odd and prime sizes,
// uneven splits); backward restores the input; bad boxes fail the same way on every rank. The
// plan's own boxes with packed real rows run in the caller's buffers on the direct window.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "fft_test_util.hpp"
#include "mpi_test.hpp"
#include "toru/core/error.hpp"
#include "toru/fft/fft3d.hpp"

namespace {

using toru::fft::box3d;
using index3 = std::array<std::int64_t, 3>;

// This rank's brick of a p[0] x p[1] x p[2] rank grid, stored in `order`, `pad` extra per row.
box3d brick(index3 n, std::array<int, 3> p, int rank, std::array<int, 3> order, std::int64_t pad = 0) {
  const std::array<int, 3> c{rank / (p[1] * p[2]), rank / p[2] % p[1], rank % p[2]};
  box3d b;
  for (int a = 0; a < 3; ++a) {
    b.low[a] = n[a] * c[a] / p[a];
    b.size[a] = n[a] * (c[a] + 1) / p[a] - b.low[a];
  }
  b.order = order;
  b.row_stride = b.size[order[2]] + pad;
  return b;
}

// P as p0 x p1 x p2, as even as the factors allow (7 -> 7 x 1 x 1).
std::array<int, 3> three_factors(int P) {
  std::array<int, 3> p{1, 1, 1};
  for (int f = 2; P > 1;) {
    if (P % f == 0) {
      *std::min_element(p.begin(), p.end()) *= f;
      P /= f;
    } else {
      ++f;
    }
  }
  return p;
}

TEST(FftBoxes, C2cBetweenBricksAndSlabsMatchesSerialFftw) {
  const int P = toru::test::nranks(), me = toru::test::rank();
  for (index3 n : {index3{6, 7, 5}, index3{9, 4, 11}}) {
    const box3d in = brick(n, three_factors(P), me, {1, 2, 0}, 2);  // axis 0 contiguous, padded
    const box3d out = brick(n, {1, 1, P}, me, {2, 1, 0});           // slabs along axis 2
    toru::fft::fft3d<double> plan(MPI_COMM_WORLD, n, in, out);
    EXPECT_EQ(plan.inbox().low, in.low);
    EXPECT_EQ(plan.outbox().size, out.size);
    std::vector<std::complex<double>> all(static_cast<std::size_t>(n[0] * n[1] * n[2]));
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = toru::test::cnoise(i, 3);
    const auto want = toru::test::serial_dft3(n, all, -1);
    std::vector<std::complex<double>> a(plan.alloc_size()), b(plan.alloc_size()), c(plan.alloc_size());
    toru::test::for_each(plan.inbox(), [&](index3 g, std::int64_t i) { a[i] = all[toru::test::flat(n, g)]; });
    plan.forward(a.data(), b.data());
    toru::test::error_norm e;
    toru::test::for_each(plan.outbox(), [&](index3 g, std::int64_t i) { e.add(b[i], want[toru::test::flat(n, g)]); });
    EXPECT_LT(e.rel(), toru::test::tolerance<double>(static_cast<double>(all.size())));
    plan.backward(b.data(), c.data(), toru::fft::scale::full);
    toru::test::error_norm r;
    toru::test::for_each(plan.inbox(), [&](index3 g, std::int64_t i) { r.add(c[i], all[toru::test::flat(n, g)]); });
    EXPECT_LT(r.rel(), toru::test::tolerance<double>(static_cast<double>(all.size())));
  }
}

TEST(FftBoxes, R2cFromPencilsIntoBricksMatchesSerialFftw) {
  const int P = toru::test::nranks(), me = toru::test::rank();
  const index3 n{5, 6, 7}, nc{5, 6, 4};
  const auto p = three_factors(P);
  const box3d in = brick(n, {p[0] * p[2], p[1], 1}, me, {0, 1, 2});  // z-pencils of reals, unpadded
  const box3d out = brick(nc, p, me, {2, 0, 1});
  toru::fft::fft3d_r2c<double> plan(MPI_COMM_WORLD, n, in, out);
  std::vector<double> all(static_cast<std::size_t>(n[0] * n[1] * n[2]));
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = toru::test::noise(i, 5);
  const auto want = toru::test::serial_r2c3(n, all);
  std::vector<double> a(2 * plan.alloc_size()), c(2 * plan.alloc_size());
  std::vector<std::complex<double>> b(plan.alloc_size());
  toru::test::for_each(plan.inbox(), [&](index3 g, std::int64_t i) { a[i] = all[toru::test::flat(n, g)]; });
  plan.forward(a.data(), b.data());
  toru::test::error_norm e;
  toru::test::for_each(plan.outbox(), [&](index3 g, std::int64_t i) { e.add(b[i], want[toru::test::flat(nc, g)]); });
  EXPECT_LT(e.rel(), toru::test::tolerance<double>(static_cast<double>(all.size())));
  plan.backward(b.data(), c.data(), toru::fft::scale::full);
  toru::test::error_norm r;
  toru::test::for_each(plan.inbox(), [&](index3 g, std::int64_t i) { r.add(c[i], all[toru::test::flat(n, g)]); });
  EXPECT_LT(r.rel(), toru::test::tolerance<double>(static_cast<double>(all.size())));
}

// TORU_FFT_STRATEGY set on every rank for one scope.
struct forced_strategy {
  explicit forced_strategy(const char* name) {
    if (name) ::setenv("TORU_FFT_STRATEGY", name, 1);
  }
  ~forced_strategy() { ::unsetenv("TORU_FFT_STRATEGY"); }
};

constexpr const char* direct_name = "middle layout M, direct window";

// The plan's own boxes, real rows packed (as a NumPy array) or padded (as the plan's), through
// the direct window: the transform runs straight in the caller's buffers, which need hold only
// those boxes (alloc_size() is the larger box; guards after each buffer stay untouched); other
// strategies reshape as for any boxes. Against serial FFTW, float and double, both orders.
template <class T>
void check_own_boxes(index3 n, toru::fft::order o, const char* force, bool packed) {
  using cpx = std::complex<T>;
  const int P = toru::test::nranks(), me = toru::test::rank();
  const toru::fft::options3d opts{.decomp = toru::fft::decomposition::slab, .output = o};
  const toru::fft::local_layout lay = toru::fft::local_size_3d(P, me, n, opts, true);
  box3d in = lay.in;
  if (packed) in.row_stride = 0;
  const forced_strategy f(force);
  toru::fft::fft3d_r2c<T> plan(MPI_COMM_WORLD, n, in, lay.out, opts);
  const bool direct = plan.strategy() == direct_name;
  if (force) {
    EXPECT_TRUE(direct) << plan.strategy();
  }
  const std::int64_t reals = plan.inbox().extent(), coefs = plan.outbox().extent();
  EXPECT_EQ(plan.inbox().row_stride, packed ? n[2] : 2 * (n[2] / 2 + 1));
  EXPECT_EQ(plan.alloc_size(), std::max({(reals + 1) / 2, coefs, std::int64_t{1}}));
  std::vector<double> all(static_cast<std::size_t>(n[0] * n[1] * n[2]));
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = toru::test::noise(i, 9);
  const index3 nc{n[0], n[1], n[2] / 2 + 1};
  const auto want = toru::test::serial_r2c3(n, all);
  constexpr std::int64_t guard = 64;
  const T sentinel = T(-7.25);
  // Buffers of exactly the boxes (direct) or of alloc_size() (the reshapes' rule), then guards.
  const std::int64_t nreal = direct ? reals : 2 * plan.alloc_size(), ncpx = direct ? coefs : plan.alloc_size();
  std::vector<T> a(static_cast<std::size_t>(nreal + guard), sentinel), c(a.size(), sentinel);
  std::vector<cpx> b(static_cast<std::size_t>(ncpx + guard), cpx(sentinel, sentinel));
  toru::test::for_each(plan.inbox(), [&](index3 g, std::int64_t i) { a[i] = T(all[toru::test::flat(n, g)]); });
  const std::vector<T> a0 = a;
  plan.forward(a.data(), b.data());
  toru::test::error_norm e;
  toru::test::for_each(plan.outbox(), [&](index3 g, std::int64_t i) {
    e.add(std::complex<double>(b[i]), want[toru::test::flat(nc, g)]);
  });
  EXPECT_LT(e.rel(), toru::test::tolerance<T>(static_cast<double>(all.size()))) << plan.strategy();
  if (direct) {
    EXPECT_EQ(a, a0) << "forward changed its input";
  }
  for (std::int64_t i = 0; i < guard; ++i) ASSERT_EQ(b[ncpx + i], cpx(sentinel, sentinel)) << "forward overran out";
  plan.backward(b.data(), c.data(), toru::fft::scale::full);
  toru::test::error_norm r;
  toru::test::for_each(
      plan.inbox(), [&](index3 g, std::int64_t i) { r.add(std::complex<double>(c[i]), all[toru::test::flat(n, g)]); });
  EXPECT_LT(r.rel(), toru::test::tolerance<T>(static_cast<double>(all.size()))) << plan.strategy();
  for (std::int64_t i = 0; i < guard; ++i) ASSERT_EQ(c[nreal + i], sentinel) << "backward overran out";
}

TEST(FftBoxes, R2cBetweenThePlansOwnBoxesRunsInTheCallersBuffers) {
  int direct_ran = 0;
  for (const char* force : {direct_name, static_cast<const char*>(nullptr)})
    for (index3 n : {index3{16, 12, 10}, index3{9, 8, 7}, index3{6, 10, 13}})
      for (auto o : {toru::fft::order::natural, toru::fft::order::transposed})
        for (bool packed : {true, false}) {
          try {
            check_own_boxes<double>(n, o, force, packed);
            check_own_boxes<float>(n, o, force, packed);
            if (force) ++direct_ran;
          } catch (const toru::error& err) {
            // A slab (forced: the direct window's decomposition) needs a plane per rank, and the
            // window one node: refused on every rank otherwise, never wrong.
            EXPECT_EQ(err.code(), toru::errc::invalid_argument) << err.what();
          }
        }
  // One node, up to 4 ranks: the window applies to these slabs (as fft_window_test expects).
  if (toru::test::nranks() <= 4 && std::getenv("TORU_FFT_WINDOW") == nullptr) {
    EXPECT_GT(direct_ran, 0);
  }
}

TEST(FftBoxes, C2cBetweenThePlansOwnBoxesRunsInTheCallersBuffers) {
  // The same for c2c: the direct window on the plan's own boxes, buffers of exactly the boxes.
  const int P = toru::test::nranks(), me = toru::test::rank();
  for (index3 n : {index3{16, 12, 10}, index3{9, 8, 7}})
    for (auto o : {toru::fft::order::natural, toru::fft::order::transposed}) {
      const toru::fft::options3d opts{.decomp = toru::fft::decomposition::slab, .output = o};
      try {
        const toru::fft::local_layout lay = toru::fft::local_size_3d(P, me, n, opts);
        const forced_strategy f(direct_name);
        toru::fft::fft3d<double> plan(MPI_COMM_WORLD, n, lay.in, lay.out, opts);
        EXPECT_EQ(plan.strategy(), direct_name);
        const std::int64_t nin = plan.inbox().extent(), nout = plan.outbox().extent();
        constexpr std::int64_t guard = 16;
        const std::complex<double> sentinel(-7.25, 3.5);
        std::vector<std::complex<double>> all(static_cast<std::size_t>(n[0] * n[1] * n[2]));
        for (std::size_t i = 0; i < all.size(); ++i) all[i] = toru::test::cnoise(i, 4);
        const auto want = toru::test::serial_dft3(n, all, -1);
        std::vector<std::complex<double>> a(static_cast<std::size_t>(nin + guard), sentinel),
            b(static_cast<std::size_t>(nout + guard), sentinel), c(a.size(), sentinel);
        toru::test::for_each(plan.inbox(), [&](index3 g, std::int64_t i) { a[i] = all[toru::test::flat(n, g)]; });
        plan.forward(a.data(), b.data());
        toru::test::error_norm e;
        toru::test::for_each(plan.outbox(),
                             [&](index3 g, std::int64_t i) { e.add(b[i], want[toru::test::flat(n, g)]); });
        EXPECT_LT(e.rel(), toru::test::tolerance<double>(static_cast<double>(all.size())));
        for (std::int64_t i = 0; i < guard; ++i) ASSERT_EQ(b[nout + i], sentinel) << "forward overran out";
        plan.backward(b.data(), c.data(), toru::fft::scale::full);
        toru::test::error_norm r;
        toru::test::for_each(plan.inbox(), [&](index3 g, std::int64_t i) { r.add(c[i], all[toru::test::flat(n, g)]); });
        EXPECT_LT(r.rel(), toru::test::tolerance<double>(static_cast<double>(all.size())));
        for (std::int64_t i = 0; i < guard; ++i) ASSERT_EQ(c[nin + i], sentinel) << "backward overran out";
      } catch (const toru::error& err) {
        EXPECT_EQ(err.code(), toru::errc::invalid_argument) << err.what();  // no slab at 5-8 ranks
      }
    }
}

TEST(FftBoxes, OverlappingBoxesFailOnEveryRank) {
  const int P = toru::test::nranks(), me = toru::test::rank();
  const index3 n{8, 5, 6};
  box3d whole;
  whole.size = n;
  const box3d slab = brick(n, {P, 1, 1}, me, {0, 1, 2});
  try {
    // Every rank claims the whole output (with one rank: a box one point too long).
    box3d out = whole;
    if (P == 1) out.size[2] = 7;
    toru::fft::fft3d<double>(MPI_COMM_WORLD, n, slab, out);
    ADD_FAILURE() << "no error on rank " << me;
  } catch (const toru::error& e) {
    EXPECT_EQ(e.code(), toru::errc::invalid_argument);
    EXPECT_NE(std::string(e.what()).find(P == 1 ? "exceeds n[2] = 6" : "ranks 0 and 1 overlap"), std::string::npos)
        << e.what();
  }
}

}  // namespace
