// SPDX-License-Identifier: BSD-3-Clause
// Real-to-complex / complex-to-real 3D FFTs against serial FFTW, odd and even last dimensions.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "fft_test_util.hpp"
#include "mpi_test.hpp"
#include "toru/core/error.hpp"
#include "toru/fft/fft3d.hpp"

namespace {

using toru::fft::decomposition;
using toru::fft::order;
using toru::test::flat;
using toru::test::for_each;
using toru::test::noise;
using N3 = std::array<std::int64_t, 3>;

template <class T>
void check_r2c(N3 n, decomposition d, order o, bool in_place) {
  SCOPED_TRACE(::testing::Message() << n[0] << "x" << n[1] << "x" << n[2] << " " << toru::fft::to_string(d) << " "
                                    << toru::fft::to_string(o) << (in_place ? " in-place" : " out-of-place") << " "
                                    << (sizeof(T) == 8 ? "double" : "float"));
  using cpx = std::complex<T>;
  std::unique_ptr<toru::fft::fft3d_r2c<T>> plan;
  try {
    plan = std::make_unique<toru::fft::fft3d_r2c<T>>(MPI_COMM_WORLD, n, toru::fft::options3d{.decomp = d, .output = o});
  } catch (const toru::error& e) {
    EXPECT_NE(d, decomposition::automatic) << e.what();
    EXPECT_EQ(e.code(), toru::errc::invalid_argument) << e.what();
    // Independent of toru's own rule: with every (complex-side) extent >= the rank count, both fit.
    const std::int64_t P = toru::test::nranks();
    EXPECT_FALSE(n[0] >= P && n[1] >= P && n[2] / 2 + 1 >= P) << "refused a decomposition that fits: " << e.what();
    return;
  }
  const N3 nh{n[0], n[1], n[2] / 2 + 1};
  const double N = static_cast<double>(n[0] * n[1] * n[2]);
  std::vector<double> input(static_cast<std::size_t>(N));
  for (std::size_t i = 0; i < input.size(); ++i) input[i] = noise(i, 11);
  const auto ref = toru::test::serial_r2c3(n, input);

  // Real arrays: 2 * alloc_size() reals cover every layout (and the padded input).
  std::vector<cpx> buf(plan->alloc_size()), out(plan->alloc_size());
  T* real = reinterpret_cast<T*>(buf.data());
  for_each(plan->inbox(), [&](N3 g, std::int64_t i) { real[i] = static_cast<T>(input[flat(n, g)]); });
  cpx* spec = in_place ? buf.data() : out.data();
  plan->forward(real, spec);
  toru::test::error_norm fwd;
  for_each(plan->outbox(), [&](N3 k, std::int64_t i) { fwd.add(spec[i], ref[flat(nh, k)]); });
  EXPECT_LT(fwd.rel(), toru::test::tolerance<T>(N));

  std::vector<cpx> back_buf(plan->alloc_size());
  T* back = in_place ? reinterpret_cast<T*>(spec) : reinterpret_cast<T*>(back_buf.data());
  const std::vector<cpx> spec_copy(spec, spec + plan->alloc_size());
  plan->backward(spec, back, toru::fft::scale::full);
  toru::test::error_norm rt;
  for_each(plan->inbox(), [&](N3 g, std::int64_t i) { rt.add(static_cast<double>(back[i]), input[flat(n, g)]); });
  EXPECT_LT(rt.rel(), toru::test::tolerance<T>(N));
  if (!in_place) {
    bool preserved = true;
    for_each(plan->outbox(), [&](N3, std::int64_t i) { preserved = preserved && spec[i] == spec_copy[i]; });
    EXPECT_TRUE(preserved) << "out-of-place backward modified its input";
  }
}

TEST(Fft3dR2c, MatchesSerialFftwIncludingOddLastDimension) {
  for (N3 n : {N3{30, 17, 64}, N3{7, 9, 11}, N3{1, 12, 13}, N3{8, 5, 6}, N3{9, 16, 1}})
    for (auto d : {decomposition::automatic, decomposition::slab, decomposition::pencil})
      for (auto o : {order::natural, order::transposed}) {
        check_r2c<double>(n, d, o, false);
        check_r2c<double>(n, d, o, true);
      }
}

TEST(Fft3dR2c, FloatMatchesSerialFftw) {
  for (N3 n : {N3{12, 10, 15}, N3{7, 9, 11}})
    for (auto d : {decomposition::slab, decomposition::pencil}) check_r2c<float>(n, d, order::transposed, false);
}

// options3d::rows = packed: n2 reals per row, in buffers of exactly the real box (no padding, no
// 2 * alloc_size()), on the one-node window and through the exchange path, slab and pencil.
TEST(Fft3dR2c, PackedRowsMatchSerialFftw) {
  const int P = toru::test::nranks();
  for (N3 n : {N3{9, 8, 15}, N3{11, 10, 14}})  // every axis >= 8 (n2/2+1 too): slabs and pencils up to 8 ranks
    for (auto d : {decomposition::slab, decomposition::pencil})
      for (auto path : {toru::fft::exchange_path::automatic, toru::fft::exchange_path::alltoall}) {
        if (P == 1 && d == decomposition::pencil) continue;  // a 1x1 grid is a slab
        toru::fft::options3d o;
        o.rows = toru::fft::real_rows::packed;
        o.decomp = d;
        o.path = path;
        toru::fft::fft3d_r2c<double> plan(MPI_COMM_WORLD, n, o);
        const auto& ib = plan.inbox();
        EXPECT_EQ(ib.row_stride, ib.size[ib.order[2]]);
        std::vector<double> all(static_cast<std::size_t>(n[0] * n[1] * n[2]));
        for (std::size_t i = 0; i < all.size(); ++i) all[i] = noise(i, 61);
        std::vector<double> x(static_cast<std::size_t>(ib.extent())), y(x.size(), -7);
        for_each(ib, [&](N3 g, std::int64_t i) { x[i] = all[flat(n, g)]; });
        std::vector<std::complex<double>> z(static_cast<std::size_t>(plan.alloc_size()));
        plan.forward(x.data(), z.data());
        const auto want = toru::test::serial_r2c3(n, all);
        const N3 nc{n[0], n[1], n[2] / 2 + 1};
        toru::test::error_norm e, r;
        for_each(plan.outbox(), [&](N3 g, std::int64_t i) { e.add(z[i], want[flat(nc, g)]); });
        plan.backward(z.data(), y.data(), toru::fft::scale::full);
        for_each(ib, [&](N3 g, std::int64_t i) { r.add(y[i], all[flat(n, g)]); });
        const std::string what = fmt::format("{}x{}x{} {} {}", n[0], n[1], n[2], to_string(d), plan.strategy());
        EXPECT_LT(e.rel(), toru::test::tolerance<double>(static_cast<double>(all.size()))) << what;
        EXPECT_LT(r.rel(), toru::test::tolerance<double>(static_cast<double>(all.size()))) << what;
      }
}

}  // namespace
