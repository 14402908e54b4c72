// SPDX-License-Identifier: BSD-3-Clause
// fft3d_mixed (the DFT on periodic axes, an r2r kind on the others, complex data) against serial
// FFTW on the whole array, axis by axis with guru plans (the DFT on complex lines, the r2r kind on
// the real and imaginary lines); odd and prime sizes, natural and transposed output, in place,
// double and float; backward with scale::full restores the input; bad axes fail the same way on
// every rank. fft3d_mixed_r2c (real data, r2c along axis 2) against the same reference on the real
// array taken as complex, its Hermitian half compared.
#include <gtest/gtest.h>

#include <complex>
#include <string>
#include <vector>

#include "fft_test_util.hpp"
#include "mpi_test.hpp"
#include "toru/core/error.hpp"
#include "toru/fft/fft3d_mixed.hpp"

namespace {

using toru::fft::axis_transform;
using toru::fft::periodic;
using toru::fft::r2r_kind;
using index3 = std::array<std::int64_t, 3>;
using cpx = std::complex<double>;

fftw_r2r_kind fftw_of(r2r_kind k) {
  const fftw_r2r_kind table[] = {FFTW_REDFT00, FFTW_REDFT10, FFTW_REDFT01, FFTW_REDFT11,
                                 FFTW_RODFT00, FFTW_RODFT10, FFTW_RODFT01, FFTW_RODFT11};
  return table[static_cast<int>(k)];
}

// The whole array (row-major, n[2] fastest) transformed along each axis in turn, in place.
std::vector<cpx> serial_mixed(index3 n, std::vector<cpx> a, std::array<axis_transform, 3> axes) {
  const std::int64_t stride[3] = {n[1] * n[2], n[2], 1};
  for (int ax = 0; ax < 3; ++ax) {
    const int o1 = ax == 0 ? 1 : 0, o2 = ax == 2 ? 1 : 2;  // the other two axes
    fftw_plan p = nullptr;
    if (!axes[ax]) {
      const fftw_iodim64 dim{n[ax], stride[ax], stride[ax]};
      const fftw_iodim64 many[2] = {{n[o1], stride[o1], stride[o1]}, {n[o2], stride[o2], stride[o2]}};
      auto* d = reinterpret_cast<fftw_complex*>(a.data());
      p = fftw_plan_guru64_dft(1, &dim, 2, many, d, d, FFTW_FORWARD, FFTW_ESTIMATE);
    } else {
      const fftw_iodim64 dim{n[ax], 2 * stride[ax], 2 * stride[ax]};
      const fftw_iodim64 many[3] = {
          {n[o1], 2 * stride[o1], 2 * stride[o1]}, {n[o2], 2 * stride[o2], 2 * stride[o2]}, {2, 1, 1}};
      const fftw_r2r_kind k = fftw_of(*axes[ax]);
      auto* d = reinterpret_cast<double*>(a.data());
      p = fftw_plan_guru64_r2r(1, &dim, 3, many, d, d, &k, FFTW_ESTIMATE);
    }
    fftw_execute(p);
    fftw_destroy_plan(p);
  }
  return a;
}

std::string name(const std::array<axis_transform, 3>& axes) {
  std::string s;
  for (const auto& t : axes) s += (s.empty() ? "" : " ") + std::string(t ? to_string(*t) : "periodic");
  return s;
}

template <class T>
void check(index3 n, std::array<axis_transform, 3> axes, toru::fft::order output, bool in_place = false) {
  toru::fft::fft3d_mixed<T> plan(MPI_COMM_WORLD, n, axes, {.output = output});
  std::vector<cpx> all(static_cast<std::size_t>(n[0] * n[1] * n[2]));
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = {toru::test::noise(i, 5), toru::test::noise(i, 17)};
  const auto want = serial_mixed(n, all, axes);
  using C = std::complex<T>;
  std::vector<C> a(plan.alloc_size()), b(plan.alloc_size()), c(plan.alloc_size());
  toru::test::for_each(plan.inbox(), [&](index3 g, std::int64_t i) { a[i] = C(all[toru::test::flat(n, g)]); });
  const std::vector<C> a0 = a;
  C* out = in_place ? a.data() : b.data();
  plan.forward(a.data(), out);
  if (!in_place) {
    EXPECT_EQ(a, a0) << "out of place must preserve the input";
  }
  toru::test::error_norm e;
  toru::test::for_each(plan.outbox(), [&](index3 g, std::int64_t i) { e.add(out[i], want[toru::test::flat(n, g)]); });
  const double tol = toru::test::tolerance<T>(static_cast<double>(all.size()));
  EXPECT_LT(e.rel(), tol) << name(axes);
  plan.backward(out, c.data(), toru::fft::scale::full);
  toru::test::error_norm r;
  toru::test::for_each(plan.inbox(), [&](index3 g, std::int64_t i) { r.add(c[i], all[toru::test::flat(n, g)]); });
  EXPECT_LT(r.rel(), tol) << name(axes) << " round trip";
}

TEST(FftMixed, MatchesSerialFftwAxisByAxis) {
  for (auto output : {toru::fft::order::natural, toru::fft::order::transposed}) {
    check<double>({7, 5, 6}, {periodic, periodic, r2r_kind::dct2}, output);  // channel, Neumann walls
    check<double>({3, 11, 4}, {r2r_kind::dst1, periodic, r2r_kind::dct4}, output);
    check<double>({5, 2, 13}, {periodic, r2r_kind::dst2, periodic}, output);
    check<double>({4, 6, 5}, {r2r_kind::dct1, r2r_kind::dst3, r2r_kind::dct3}, output);  // no periodic axis
  }
  check<float>({6, 7, 5}, {periodic, r2r_kind::dct2, periodic}, toru::fft::order::natural);
  check<double>({5, 6, 7}, {periodic, periodic, r2r_kind::dst2}, toru::fft::order::natural, true);
}

template <class T>
void check_r2c(index3 n, std::array<axis_transform, 3> axes, toru::fft::order output, bool in_place = false) {
  toru::fft::fft3d_mixed_r2c<T> plan(MPI_COMM_WORLD, n, axes, {.output = output});
  EXPECT_EQ(plan.inbox().row_stride, 2 * (n[2] / 2 + 1));
  std::vector<cpx> all(static_cast<std::size_t>(n[0] * n[1] * n[2]));
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = toru::test::noise(i, 7);
  const auto want = serial_mixed(n, all, axes);
  const index3 half{n[0], n[1], n[2] / 2 + 1};
  using C = std::complex<T>;
  const auto alloc = static_cast<std::size_t>(plan.alloc_size());
  std::vector<T> a(2 * alloc), c(2 * alloc);
  std::vector<C> b(alloc);
  toru::test::for_each(plan.inbox(),
                       [&](index3 g, std::int64_t i) { a[i] = static_cast<T>(all[toru::test::flat(n, g)].real()); });
  const std::vector<T> a0 = a;
  C* out = in_place ? reinterpret_cast<C*>(a.data()) : b.data();
  plan.forward(a.data(), out);
  if (!in_place) {
    EXPECT_EQ(a, a0) << "out of place must preserve the input";
  }
  toru::test::error_norm e;
  std::int64_t points = 0;
  toru::test::for_each(plan.outbox(), [&](index3 g, std::int64_t i) {
    EXPECT_LT(g[2], half[2]);
    e.add(out[i], want[toru::test::flat(n, g)]);
    ++points;
  });
  std::int64_t total = 0;
  MPI_Allreduce(&points, &total, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(total, half[0] * half[1] * half[2]) << "the output boxes cover the Hermitian half once";
  const double tol = toru::test::tolerance<T>(static_cast<double>(all.size()));
  EXPECT_LT(e.rel(), tol) << name(axes);
  std::vector<C> spectrum(out, out + alloc);
  plan.backward(spectrum.data(), c.data(), toru::fft::scale::full);
  toru::test::error_norm r;
  toru::test::for_each(plan.inbox(),
                       [&](index3 g, std::int64_t i) { r.add(c[i], all[toru::test::flat(n, g)].real()); });
  EXPECT_LT(r.rel(), tol) << name(axes) << " round trip";
}

TEST(FftMixedR2c, MatchesTheComplexTransformOfTheRealData) {
  for (auto output : {toru::fft::order::natural, toru::fft::order::transposed}) {
    check_r2c<double>({7, 5, 6}, {periodic, r2r_kind::dct2, periodic}, output);  // walls in y
    check_r2c<double>({3, 11, 5}, {r2r_kind::dst1, periodic, periodic}, output);
    check_r2c<double>({5, 4, 13}, {r2r_kind::dct1, r2r_kind::dst4, periodic}, output);  // prime r2c axis
    check_r2c<double>({6, 5, 7}, {periodic, periodic, periodic}, output);               // plain r2c
  }
  check_r2c<float>({6, 7, 5}, {periodic, r2r_kind::dct3, periodic}, toru::fft::order::natural);
  check_r2c<double>({5, 6, 8}, {r2r_kind::dst2, periodic, periodic}, toru::fft::order::natural, true);
  check_r2c<double>({4, 7, 1}, {periodic, r2r_kind::dct2, periodic}, toru::fft::order::transposed, true);
}

TEST(FftMixedR2c, AWallOnTheR2cAxisFailsOnEveryRank) {
  try {
    toru::fft::fft3d_mixed_r2c<double>(MPI_COMM_WORLD, {4, 4, 4}, {periodic, periodic, r2r_kind::dct2});
    ADD_FAILURE() << "an r2r kind on axis 2 accepted";
  } catch (const toru::error& e) {
    EXPECT_EQ(e.code(), toru::errc::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("axes[2]"), std::string::npos) << e.what();
  }
  // A rank building a complex mixed plan while the others build a real one: the same error on
  // every rank, not an exchange of different element sizes.
  if (toru::test::nranks() > 1) {
    const std::array<axis_transform, 3> axes{periodic, r2r_kind::dct2, periodic};
    try {
      if (toru::test::rank() == 0)
        toru::fft::fft3d_mixed<double>(MPI_COMM_WORLD, {4, 6, 6}, axes);
      else
        toru::fft::fft3d_mixed_r2c<double>(MPI_COMM_WORLD, {4, 6, 6}, axes);
      ADD_FAILURE() << "different plans across ranks accepted";
    } catch (const toru::error& e) {
      EXPECT_EQ(e.code(), toru::errc::mismatch) << e.what();
    }
  }
}

// Every axis periodic is the 3D DFT: against fftw_plan_dft_3d, a reference that shares nothing
// with the axis-by-axis one above.
TEST(FftMixed, AllPeriodicIsTheDft) {
  const index3 n{6, 5, 7};
  toru::fft::fft3d_mixed<double> plan(MPI_COMM_WORLD, n, {periodic, periodic, periodic});
  std::vector<cpx> all(static_cast<std::size_t>(n[0] * n[1] * n[2])), want(all.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = {toru::test::noise(i, 3), toru::test::noise(i, 8)};
  fftw_plan p = fftw_plan_dft_3d(6, 5, 7, reinterpret_cast<fftw_complex*>(all.data()),
                                 reinterpret_cast<fftw_complex*>(want.data()), FFTW_FORWARD, FFTW_ESTIMATE);
  fftw_execute(p);
  fftw_destroy_plan(p);
  std::vector<cpx> a(plan.alloc_size()), b(plan.alloc_size());
  toru::test::for_each(plan.inbox(), [&](index3 g, std::int64_t i) { a[i] = all[toru::test::flat(n, g)]; });
  plan.forward(a.data(), b.data());
  toru::test::error_norm e;
  toru::test::for_each(plan.outbox(), [&](index3 g, std::int64_t i) { e.add(b[i], want[toru::test::flat(n, g)]); });
  EXPECT_LT(e.rel(), toru::test::tolerance<double>(static_cast<double>(all.size())));
}

TEST(FftMixed, BadAxesFailOnEveryRank) {
  const int me = toru::test::rank(), P = toru::test::nranks();
  try {
    toru::fft::fft3d_mixed<double>(MPI_COMM_WORLD, {4, 4, 4}, {static_cast<r2r_kind>(9), periodic, periodic});
    ADD_FAILURE() << "an out-of-range kind accepted";
  } catch (const toru::error& e) {
    EXPECT_EQ(e.code(), toru::errc::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("axes[0]"), std::string::npos) << e.what();
  }
  if (P > 1) {
    const axis_transform t = me == P - 1 ? axis_transform{r2r_kind::dct2} : periodic;
    try {
      toru::fft::fft3d_mixed<double>(MPI_COMM_WORLD, {4, 4, 4}, {periodic, periodic, t});
      ADD_FAILURE() << "axes differing across ranks accepted";
    } catch (const toru::error& e) {
      EXPECT_EQ(e.code(), toru::errc::mismatch);
      EXPECT_NE(std::string(e.what()).find("axes[2]"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
