// SPDX-License-Identifier: BSD-3-Clause
// 3D FFTs against a serial FFTW transform of the whole array, on random input, for every
// decomposition, output order, in/out-of-place, precision and awkward size.
#include <gtest/gtest.h>

#include <map>
#include <numbers>

#include "fft_test_util.hpp"
#include "mpi_test.hpp"
#include "toru/core/error.hpp"
#include "toru/fft/fft3d.hpp"

namespace {

using toru::fft::decomposition;
using toru::fft::order;
using toru::test::cnoise;
using toru::test::flat;
using toru::test::for_each;
using N3 = std::array<std::int64_t, 3>;

const std::vector<N3> sizes = {{30, 17, 64}, {7, 9, 11}, {1, 12, 10}, {8, 8, 8}, {5, 1, 7}, {16, 6, 2}};

std::vector<std::complex<double>> global_input(N3 n, std::uint64_t seed) {
  std::vector<std::complex<double>> a(static_cast<std::size_t>(n[0] * n[1] * n[2]));
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = cnoise(i, seed);
  return a;
}

// Serial references, computed once per size.
const std::vector<std::complex<double>>& reference(N3 n) {
  static std::map<N3, std::vector<std::complex<double>>> cache;
  auto it = cache.find(n);
  if (it == cache.end()) it = cache.emplace(n, toru::test::serial_dft3(n, global_input(n, 1), FFTW_FORWARD)).first;
  return it->second;
}

// Builds a plan, or checks that every rank refused a forced decomposition that cannot work;
// returns false in that case.
template <class Plan>
bool make_plan(std::unique_ptr<Plan>& plan, N3 n, toru::fft::options3d o) {
  try {
    plan = std::make_unique<Plan>(MPI_COMM_WORLD, n, o);
    return true;
  } catch (const toru::error& e) {
    EXPECT_NE(o.decomp, decomposition::automatic) << e.what();
    EXPECT_EQ(e.code(), toru::errc::invalid_argument) << e.what();
    // Independent of toru's own rule: with every extent >= the rank count, slab and pencil both fit.
    const std::int64_t P = toru::test::nranks();
    EXPECT_FALSE(n[0] >= P && n[1] >= P && n[2] >= P) << "refused a decomposition that fits: " << e.what();
    return false;
  }
}

template <class T>
void check_c2c(N3 n, decomposition d, order out_order, bool in_place) {
  SCOPED_TRACE(::testing::Message() << n[0] << "x" << n[1] << "x" << n[2] << " " << toru::fft::to_string(d) << " "
                                    << toru::fft::to_string(out_order) << (in_place ? " in-place" : " out-of-place")
                                    << " " << (sizeof(T) == 8 ? "double" : "float"));
  using cpx = std::complex<T>;
  std::unique_ptr<toru::fft::fft3d<T>> plan;
  if (!make_plan(plan, n, {.decomp = d, .output = out_order})) return;
  const double N = static_cast<double>(n[0] * n[1] * n[2]);
  const auto input = global_input(n, 1);
  const auto& ref = reference(n);

  std::vector<cpx> a(plan->alloc_size()), b(plan->alloc_size());
  for_each(plan->inbox(), [&](N3 g, std::int64_t i) { a[i] = cpx(input[flat(n, g)]); });
  const std::vector<cpx> saved = a;
  cpx* out = in_place ? a.data() : b.data();
  plan->forward(a.data(), out);
  toru::test::error_norm fwd;
  for_each(plan->outbox(), [&](N3 g, std::int64_t i) { fwd.add(out[i], ref[flat(n, g)]); });
  EXPECT_LT(fwd.rel(), toru::test::tolerance<T>(N));
  if (!in_place) {
    bool preserved = true;
    for_each(plan->inbox(), [&](N3, std::int64_t i) { preserved = preserved && a[i] == saved[i]; });
    EXPECT_TRUE(preserved) << "out-of-place forward modified its input";
  }

  // Round trip: unscaled backward gives N times the input.
  std::vector<cpx> c(plan->alloc_size());
  cpx* back = in_place ? out : c.data();
  plan->backward(out, back);
  toru::test::error_norm rt;
  for_each(plan->inbox(), [&](N3 g, std::int64_t i) { rt.add(back[i], N * input[flat(n, g)]); });
  EXPECT_LT(rt.rel(), toru::test::tolerance<T>(N));
}

TEST(Fft3d, C2cDoubleMatchesSerialFftw) {
  for (const N3& n : sizes)
    for (auto d : {decomposition::automatic, decomposition::slab, decomposition::pencil})
      for (auto o : {order::natural, order::transposed})
        for (bool ip : {false, true}) check_c2c<double>(n, d, o, ip);
}

TEST(Fft3d, C2cFloatMatchesSerialFftw) {
  for (const N3& n : sizes)
    for (auto d : {decomposition::slab, decomposition::pencil})
      for (auto o : {order::natural, order::transposed}) check_c2c<float>(n, d, o, false);
}

TEST(Fft3d, NormalizedRoundTripAndCallerWorkspace) {
  const N3 n{12, 10, 9};
  toru::fft::fft3d<double> plan(MPI_COMM_WORLD, n, {.output = order::transposed, .chunks = 3});
  std::vector<std::complex<double>> a(plan.alloc_size()), b(plan.alloc_size()), c(plan.alloc_size());
  std::vector<std::byte> ws(plan.workspace_size());
  for_each(plan.inbox(), [&](N3 g, std::int64_t i) { a[i] = cnoise(flat(n, g), 7); });
  plan.forward(a.data(), b.data(), ws.data(), toru::fft::scale::symmetric);
  plan.backward(b.data(), c.data(), ws.data(), toru::fft::scale::symmetric);
  toru::test::error_norm e;
  for_each(plan.inbox(), [&](N3, std::int64_t i) { e.add(c[i], std::complex<double>(a[i])); });
  EXPECT_LT(e.rel(), toru::test::tolerance<double>(1080));
  plan.backward(b.data(), c.data(), toru::fft::scale::full);  // 1/sqrt(N) * 1/N
  toru::test::error_norm f;
  for_each(plan.inbox(), [&](N3, std::int64_t i) { f.add(c[i] * std::sqrt(1080.0), std::complex<double>(a[i])); });
  EXPECT_LT(f.rel(), toru::test::tolerance<double>(1080));
}

TEST(Fft3d, ImpulseGivesPlaneWaveAndOverlapOffAgrees) {
  const N3 n{6, 10, 8}, m{2, 7, 3};  // a 1 x P or P x 1 pencil grid fits up to 8 ranks
  for (bool overlap : {true, false}) {
    toru::fft::fft3d<double> plan(MPI_COMM_WORLD, n, {.decomp = decomposition::pencil, .overlap = overlap});
    std::vector<std::complex<double>> a(plan.alloc_size()), b(plan.alloc_size());
    for_each(plan.inbox(), [&](N3 g, std::int64_t i) { a[i] = g == m ? 1.0 : 0.0; });
    plan.forward(a.data(), b.data());
    toru::test::error_norm e;
    for_each(plan.outbox(), [&](N3 k, std::int64_t i) {
      double phase = 0;
      for (int ax = 0; ax < 3; ++ax) phase += static_cast<double>(k[ax] * m[ax]) / static_cast<double>(n[ax]);
      e.add(b[i], std::polar(1.0, -2 * std::numbers::pi * phase));
    });
    EXPECT_LT(e.rel(), 1e-13) << "overlap " << overlap;
  }
}

TEST(Fft3d, LinearityAndShift) {
  const N3 n{9, 8, 7};
  toru::fft::fft3d<double> plan(MPI_COMM_WORLD, n);
  const std::int64_t A = plan.alloc_size();
  std::vector<std::complex<double>> x(A), y(A), z(A), fx(A), fy(A), fz(A), s(A), fs(A);
  const std::complex<double> alpha(0.5, -2.0), beta(-1.25, 0.75);
  for_each(plan.inbox(), [&](N3 g, std::int64_t i) {
    x[i] = cnoise(flat(n, g), 3);
    y[i] = cnoise(flat(n, g), 4);
    z[i] = alpha * x[i] + beta * y[i];
    // s = x shifted by one along axis 1 (cyclically): s(i0, i1, i2) = x(i0, i1 - 1, i2).
    s[i] = cnoise(flat(n, {g[0], (g[1] + n[1] - 1) % n[1], g[2]}), 3);
  });
  plan.forward(x.data(), fx.data());
  plan.forward(y.data(), fy.data());
  plan.forward(z.data(), fz.data());
  plan.forward(s.data(), fs.data());
  toru::test::error_norm lin, shift;
  for_each(plan.outbox(), [&](N3 k, std::int64_t i) {
    lin.add(fz[i], alpha * fx[i] + beta * fy[i]);
    shift.add(fs[i], fx[i] * std::polar(1.0, -2 * std::numbers::pi * static_cast<double>(k[1]) / 8.0));
  });
  EXPECT_LT(lin.rel(), 1e-13);
  EXPECT_LT(shift.rel(), 1e-13);
}

// The host's transposed slab output (n1 >= P) is FFTW_MPI_TRANSPOSED_OUT's layout
// [i1 part][i0][i2]; the device backend keeps [i1][i2 part][i0]. Expected boxes written out
// from the balanced-block rule (part r of n over p: start r*(n/p) + min(r, n%p)).
TEST(Fft3d, TransposedSlabLayoutsOfBothBackends) {
  const int P = toru::test::nranks(), me = toru::test::rank();
  const N3 n{30, 17, 64};
  const toru::fft::options3d opts{.decomp = decomposition::slab, .output = order::transposed};
  auto part = [&](std::int64_t len) {
    return std::array<std::int64_t, 2>{me * (len / P) + std::min<std::int64_t>(me, len % P), len / P + (me < len % P)};
  };
  const auto host = toru::fft::local_size_3d(P, me, n, opts);
  EXPECT_EQ(host.out.order, (std::array<int, 3>{1, 0, 2}));
  EXPECT_EQ(host.out.low, (N3{0, part(17)[0], 0}));
  EXPECT_EQ(host.out.size, (N3{30, part(17)[1], 64}));
  const auto device = toru::fft::local_size_3d(P, me, n, opts, false, true);
  EXPECT_EQ(device.out.order, (std::array<int, 3>{1, 2, 0}));
  EXPECT_EQ(device.out.low, (N3{0, 0, part(64)[0]}));
  EXPECT_EQ(device.out.size, (N3{30, 17, part(64)[1]}));
  // Any n0 (129: past FFTW's largest codelet, the earlier bound): the host's axis-0 FFTs run in
  // L1 tiles, so the layout stays FFTW_MPI_TRANSPOSED_OUT's.
  const auto big = toru::fft::local_size_3d(P, me, {129, 17, 8}, opts);
  EXPECT_EQ(big.out.order, (std::array<int, 3>{1, 0, 2}));
  EXPECT_EQ(big.out.size, (N3{129, part(17)[1], 8}));
}

TEST(Fft3d, LocalSizeQueryMatchesPlanAndTilesTheArray) {
  const int P = toru::test::nranks(), me = toru::test::rank();
  for (const N3& n : sizes)
    for (auto o : {order::natural, order::transposed}) {
      const toru::fft::options3d opts{.output = o};
      toru::fft::fft3d<double> plan(MPI_COMM_WORLD, n, opts);
      const auto lay = toru::fft::local_size_3d(P, me, n, opts);
      EXPECT_EQ(lay.in.low, plan.inbox().low);
      EXPECT_EQ(lay.in.size, plan.inbox().size);
      EXPECT_EQ(lay.out.low, plan.outbox().low);
      EXPECT_EQ(lay.out.order, plan.outbox().order);
      EXPECT_EQ(lay.out.size, plan.outbox().size);
      EXPECT_EQ(lay.in.order, plan.inbox().order);
      EXPECT_EQ(lay.in.row_stride, plan.inbox().row_stride);
      EXPECT_EQ(lay.out.row_stride, plan.outbox().row_stride);
      EXPECT_EQ(lay.alloc, plan.alloc_size());
      // Every point is owned exactly once: the sums of counts and of global indices match.
      std::int64_t mine[4] = {plan.inbox().count(), 0, plan.outbox().count(), 0}, all[4];
      for_each(plan.inbox(), [&](N3 g, std::int64_t) { mine[1] += flat(n, g); });
      for_each(plan.outbox(), [&](N3 g, std::int64_t) { mine[3] += flat(n, g); });
      MPI_Allreduce(mine, all, 4, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
      const std::int64_t N = n[0] * n[1] * n[2];
      EXPECT_EQ(all[0], N);
      EXPECT_EQ(all[2], N);
      EXPECT_EQ(all[1], N * (N - 1) / 2);
      EXPECT_EQ(all[3], N * (N - 1) / 2);
    }
}

}  // namespace
