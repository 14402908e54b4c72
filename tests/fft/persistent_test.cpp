// SPDX-License-Identifier: BSD-3-Clause
// Persistent FFT requests (forward_init / backward_init, then start / wait every step): each step's
// result against serial FFTW on the step's own input, the reference computed while the transform
// is in flight; the arguments are agreed on once, at init (this process's MPI_Allreduce calls are
// counted through PMPI: execute agrees on every call, a started request never), and bad arguments
// at init are the same error on every rank. The r2r, mixed (complex and real) and batched plans' requests also match
// their blocking forward bit for bit.
#include <fftw3.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <atomic>
#include <complex>
#include <vector>

#include "fft_test_util.hpp"
#include "mpi_test.hpp"
#include "toru/core/error.hpp"
#include "toru/core/request.hpp"
#include "toru/fft/fft1d.hpp"
#include "toru/fft/fft3d.hpp"
#include "toru/fft/fft3d_batch.hpp"
#include "toru/fft/fft3d_mixed.hpp"
#include "toru/fft/fft3d_r2r.hpp"

namespace {
std::atomic<int> allreduces{0};
}  // namespace

// Every MPI_Allreduce of this process, toru's libraries' included (the executable's definition
// interposes MPI's; target property ENABLE_EXPORTS).
extern "C" int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                             MPI_Comm comm) {
  allreduces.fetch_add(1);
  return PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
}

namespace {

using index3 = std::array<std::int64_t, 3>;
using cpx = std::complex<double>;
using toru::fft::box3d;

std::vector<cpx> global_input(index3 n, std::uint64_t seed) {
  std::vector<cpx> all(static_cast<std::size_t>(n[0] * n[1] * n[2]));
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = toru::test::cnoise(i, seed);
  return all;
}

// Three steps on the same bound buffers, new input each step: forward checked against serial FFTW
// (computed between start and wait), backward (scale full) against the input.
template <class Plan>
void three_steps_c2c(const Plan& plan, index3 n) {
  std::vector<cpx> a(plan.alloc_size()), b(plan.alloc_size()), c(plan.alloc_size());
  // The counter works: a plain execute agrees on its arguments.
  int before = allreduces.load();
  plan.forward(a.data(), b.data());
  EXPECT_GT(allreduces.load() - before, 0);

  toru::request fwd = plan.forward_init(a.data(), b.data());
  toru::request bwd = plan.backward_init(b.data(), c.data(), toru::fft::scale::full);
  for (std::uint64_t step = 0; step < 3; ++step) {
    const auto all = global_input(n, 20 + step);
    toru::test::for_each(plan.inbox(), [&](index3 g, std::int64_t i) { a[i] = all[toru::test::flat(n, g)]; });
    before = allreduces.load();
    fwd.start();
    EXPECT_TRUE(fwd.active());
    const auto want = toru::test::serial_dft3(n, all, -1);  // the work done while the FFT is in flight
    fwd.wait();
    bwd.run();
    EXPECT_EQ(allreduces.load() - before, 0) << "step " << step << ": a started request agreed on its arguments";
    toru::test::error_norm e, r;
    toru::test::for_each(plan.outbox(), [&](index3 g, std::int64_t i) { e.add(b[i], want[toru::test::flat(n, g)]); });
    toru::test::for_each(plan.inbox(), [&](index3 g, std::int64_t i) { r.add(c[i], all[toru::test::flat(n, g)]); });
    EXPECT_LT(e.rel(), toru::test::tolerance<double>(static_cast<double>(all.size()))) << "step " << step;
    EXPECT_LT(r.rel(), toru::test::tolerance<double>(static_cast<double>(all.size()))) << "step " << step;
  }
}

TEST(FftPersistent, C2cStepsMatchSerialFftwWithoutAgreeing) {
  three_steps_c2c(toru::fft::fft3d<double>(MPI_COMM_WORLD, {9, 10, 7}), {9, 10, 7});
}

// This rank's slab of axis `axis` (uneven for most rank counts), stored in `order`.
box3d slab(index3 n, int axis, std::array<int, 3> order) {
  const int P = toru::test::nranks(), me = toru::test::rank();
  box3d b;
  b.size = n;
  b.low[axis] = n[axis] * me / P;
  b.size[axis] = n[axis] * (me + 1) / P - b.low[axis];
  b.order = order;
  b.row_stride = b.size[order[2]];
  return b;
}

TEST(FftPersistent, C2cBetweenCallersBoxesMatchesSerialFftw) {
  // Through the plan's reshapes: the caller's slabs along axis 2 in, along axis 1 out.
  const index3 n{5, 11, 6};
  three_steps_c2c(toru::fft::fft3d<double>(MPI_COMM_WORLD, n, slab(n, 2, {0, 1, 2}), slab(n, 1, {2, 0, 1})), n);
}

TEST(FftPersistent, R2cStepsMatchSerialFftw) {
  const index3 n{8, 5, 7};
  toru::fft::fft3d_r2c<double> plan(MPI_COMM_WORLD, n);
  std::vector<double> x(2 * plan.alloc_size()), y(2 * plan.alloc_size());
  std::vector<cpx> z(plan.alloc_size());
  toru::request fwd = plan.forward_init(x.data(), z.data());
  toru::request bwd = plan.backward_init(z.data(), y.data(), toru::fft::scale::full);
  const index3 nc{n[0], n[1], n[2] / 2 + 1};
  for (std::uint64_t step = 0; step < 2; ++step) {
    std::vector<double> all(static_cast<std::size_t>(n[0] * n[1] * n[2]));
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = toru::test::noise(i, 40 + step);
    toru::test::for_each(plan.inbox(), [&](index3 g, std::int64_t i) { x[i] = all[toru::test::flat(n, g)]; });
    const int before = allreduces.load();
    fwd.start();
    const auto want = toru::test::serial_r2c3(n, all);
    fwd.wait();
    bwd.run();
    EXPECT_EQ(allreduces.load() - before, 0);
    toru::test::error_norm e, r;
    toru::test::for_each(plan.outbox(), [&](index3 g, std::int64_t i) { e.add(z[i], want[toru::test::flat(nc, g)]); });
    toru::test::for_each(plan.inbox(), [&](index3 g, std::int64_t i) { r.add(y[i], all[toru::test::flat(n, g)]); });
    EXPECT_LT(e.rel(), toru::test::tolerance<double>(static_cast<double>(all.size()))) << "step " << step;
    EXPECT_LT(r.rel(), toru::test::tolerance<double>(static_cast<double>(all.size()))) << "step " << step;
  }
}

TEST(FftPersistent, OneDimensionalStepsMatchSerialFftw) {
  const std::int64_t N = 3 * 5 * 7;
  toru::fft::fft1d<double> plan(MPI_COMM_WORLD, N);
  std::vector<cpx> a(plan.alloc_size()), b(plan.alloc_size());
  toru::request fwd = plan.forward_init(a.data(), b.data());
  for (std::uint64_t step = 0; step < 2; ++step) {
    std::vector<cpx> all(N);
    for (std::int64_t i = 0; i < N; ++i) all[i] = toru::test::cnoise(static_cast<std::uint64_t>(i), 50 + step);
    for (std::int64_t i = 0; i < plan.in_count(); ++i) a[i] = all[plan.in_start() + i];
    const int before = allreduces.load();
    fwd.start();
    const auto want = toru::test::serial_dft1(all, -1);
    fwd.wait();
    EXPECT_EQ(allreduces.load() - before, 0);
    toru::test::error_norm e;
    for (std::int64_t i = 0; i < plan.out_count(); ++i) e.add(b[i], want[plan.out_start() + i]);
    EXPECT_LT(e.rel(), toru::test::tolerance<double>(static_cast<double>(N))) << "step " << step;
  }
}

// Every rank throws the same code, and the message names `word`.
void expect_same_error(const std::function<void()>& call, toru::errc code, const char* word) {
  try {
    call();
    ADD_FAILURE() << "accepted";
  } catch (const toru::error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find(word), std::string::npos) << e.what();
  }
}

TEST(FftPersistent, BadArgumentsAtInitFailOnEveryRank) {
  const int last = toru::test::nranks() - 1, me = toru::test::rank();
  toru::fft::fft3d<double> plan(MPI_COMM_WORLD, {6, 5, 4});
  std::vector<cpx> a(plan.alloc_size()), b(plan.alloc_size());
  expect_same_error([&] { (void)plan.forward_init(a.data(), me == last ? nullptr : b.data()); },
                    toru::errc::invalid_argument, "out");
  expect_same_error(
      [&] { (void)plan.backward_init(a.data(), b.data(), static_cast<toru::fft::scale>(me == last ? 7 : 0)); },
      toru::errc::invalid_argument, "scale");
  // The plan is unharmed: a good request still runs.
  toru::request ok = plan.forward_init(a.data(), b.data());
  ok.start();
  EXPECT_THROW(ok.start(), toru::error);  // one in flight already
  ok.wait();
  EXPECT_THROW(ok.wait(), toru::error);  // nothing in flight
  toru::request empty;
  EXPECT_FALSE(empty);
  EXPECT_THROW(empty.start(), toru::error);
}

// Serial FFTW's r2r of the whole array (kinds per axis, FFTW's numbering as toru's).
std::vector<double> serial_r2r3(index3 n, std::vector<double> a, std::array<toru::fft::r2r_kind, 3> k) {
  const fftw_r2r_kind table[] = {FFTW_REDFT00, FFTW_REDFT10, FFTW_REDFT01, FFTW_REDFT11,
                                 FFTW_RODFT00, FFTW_RODFT10, FFTW_RODFT01, FFTW_RODFT11};
  std::vector<double> out(a.size());
  fftw_plan p = fftw_plan_r2r_3d(static_cast<int>(n[0]), static_cast<int>(n[1]), static_cast<int>(n[2]), a.data(),
                                 out.data(), table[static_cast<int>(k[0])], table[static_cast<int>(k[1])],
                                 table[static_cast<int>(k[2])], FFTW_ESTIMATE);
  fftw_execute(p);
  fftw_destroy_plan(p);
  return out;
}

TEST(FftPersistent, R2rStepsMatchSerialFftwAndBlockingBitForBit) {
  using toru::fft::r2r_kind;
  const index3 n{7, 6, 5};
  const std::array<r2r_kind, 3> kinds{r2r_kind::dct2, r2r_kind::dst3, r2r_kind::dct4};
  toru::fft::fft3d_r2r<double> plan(MPI_COMM_WORLD, n, kinds);
  std::vector<double> x(plan.alloc_size()), y(plan.alloc_size()), z(plan.alloc_size()), blocking(plan.alloc_size());
  toru::request fwd = plan.forward_init(x.data(), y.data());
  toru::request bwd = plan.backward_init(y.data(), z.data(), toru::fft::scale::full);
  for (std::uint64_t step = 0; step < 2; ++step) {
    std::vector<double> all(static_cast<std::size_t>(n[0] * n[1] * n[2]));
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = toru::test::noise(i, 60 + step);
    toru::test::for_each(plan.inbox(), [&](index3 g, std::int64_t i) { x[i] = all[toru::test::flat(n, g)]; });
    plan.forward(x.data(), blocking.data());
    const int before = allreduces.load();
    fwd.start();
    const auto want = serial_r2r3(n, all, kinds);  // the work done while the transform is in flight
    fwd.wait();
    bwd.start();
    bwd.wait();
    EXPECT_EQ(allreduces.load() - before, 0) << "step " << step << ": a started request agreed on its arguments";
    toru::test::error_norm e, r;
    toru::test::for_each(plan.outbox(), [&](index3 g, std::int64_t i) {
      e.add(y[i], want[toru::test::flat(n, g)]);
      EXPECT_EQ(y[i], blocking[i]) << "step " << step;
    });
    toru::test::for_each(plan.inbox(), [&](index3 g, std::int64_t i) { r.add(z[i], all[toru::test::flat(n, g)]); });
    EXPECT_LT(e.rel(), toru::test::tolerance<double>(static_cast<double>(all.size()))) << "step " << step;
    EXPECT_LT(r.rel(), toru::test::tolerance<double>(static_cast<double>(all.size()))) << "step " << step;
  }
  expect_same_error([&] { (void)plan.forward_init(x.data(), toru::test::rank() == 0 ? nullptr : y.data()); },
                    toru::errc::invalid_argument, "out");
  fwd.start();
  EXPECT_THROW(fwd.start(), toru::error);  // one in flight already
  fwd.wait();
}

TEST(FftPersistent, MixedStepsMatchBlockingBitForBitAndRoundTrip) {
  using toru::fft::periodic;
  using toru::fft::r2r_kind;
  const index3 n{5, 7, 6};
  toru::fft::fft3d_mixed<double> plan(MPI_COMM_WORLD, n, {periodic, r2r_kind::dst2, periodic});
  std::vector<cpx> x(plan.alloc_size()), y(plan.alloc_size()), z(plan.alloc_size()), blocking(plan.alloc_size());
  toru::request fwd = plan.forward_init(x.data(), y.data());
  toru::request bwd = plan.backward_init(y.data(), z.data(), toru::fft::scale::full);
  const auto all = global_input(n, 70);
  toru::test::for_each(plan.inbox(), [&](index3 g, std::int64_t i) { x[i] = all[toru::test::flat(n, g)]; });
  plan.forward(x.data(), blocking.data());
  const int before = allreduces.load();
  fwd.start();
  const auto busy = toru::test::serial_dft3(n, all, -1);  // unrelated work while the transform is in flight
  fwd.wait();
  bwd.start();
  bwd.wait();
  EXPECT_EQ(allreduces.load() - before, 0);
  EXPECT_EQ(busy.size(), all.size());
  toru::test::error_norm r;
  toru::test::for_each(plan.outbox(), [&](index3, std::int64_t i) { EXPECT_EQ(y[i], blocking[i]); });
  toru::test::for_each(plan.inbox(), [&](index3 g, std::int64_t i) { r.add(z[i], all[toru::test::flat(n, g)]); });
  EXPECT_LT(r.rel(), toru::test::tolerance<double>(static_cast<double>(all.size())));
}

TEST(FftPersistent, MixedR2cStepsMatchBlockingBitForBitAndRoundTrip) {
  using toru::fft::periodic;
  using toru::fft::r2r_kind;
  const index3 n{5, 7, 6};
  toru::fft::fft3d_mixed_r2c<double> plan(MPI_COMM_WORLD, n, {r2r_kind::dct1, periodic, periodic});
  const auto alloc = static_cast<std::size_t>(plan.alloc_size());
  std::vector<double> x(2 * alloc), z(2 * alloc);
  std::vector<cpx> y(alloc), blocking(alloc);
  toru::request fwd = plan.forward_init(x.data(), y.data());
  toru::request bwd = plan.backward_init(y.data(), z.data(), toru::fft::scale::full);
  const auto all = global_input(n, 71);
  toru::test::for_each(plan.inbox(), [&](index3 g, std::int64_t i) { x[i] = all[toru::test::flat(n, g)].real(); });
  plan.forward(x.data(), blocking.data());
  const int before = allreduces.load();
  fwd.start();
  fwd.wait();
  bwd.start();
  bwd.wait();
  EXPECT_EQ(allreduces.load() - before, 0);
  toru::test::error_norm r;
  toru::test::for_each(plan.outbox(), [&](index3, std::int64_t i) { EXPECT_EQ(y[i], blocking[i]); });
  toru::test::for_each(plan.inbox(),
                       [&](index3 g, std::int64_t i) { r.add(z[i], all[toru::test::flat(n, g)].real()); });
  EXPECT_LT(r.rel(), toru::test::tolerance<double>(static_cast<double>(all.size())));
}

TEST(FftPersistent, BatchStepsMatchSerialFftwAndBlockingBitForBit) {
  const index3 n{6, 5, 7};
  const int F = 3;
  toru::fft::fft3d_batch<double> plan(MPI_COMM_WORLD, n, F);  // interleaved fields
  std::vector<cpx> a(plan.alloc_size()), b(plan.alloc_size()), c(plan.alloc_size()), blocking(plan.alloc_size());
  toru::request fwd = plan.forward_init(a.data(), b.data());
  toru::request bwd = plan.backward_init(b.data(), c.data(), toru::fft::scale::full);
  for (std::uint64_t step = 0; step < 2; ++step) {
    std::vector<std::vector<cpx>> all;
    for (int f = 0; f < F; ++f) all.push_back(global_input(n, 80 + 10 * step + static_cast<std::uint64_t>(f)));
    toru::test::for_each(plan.inbox(), [&](index3 g, std::int64_t i) {
      for (int f = 0; f < F; ++f) a[i * F + f] = all[f][toru::test::flat(n, g)];
    });
    plan.forward(a.data(), blocking.data());
    const int before = allreduces.load();
    fwd.start();
    std::vector<std::vector<cpx>> want;  // the work done while the transform is in flight
    for (int f = 0; f < F; ++f) want.push_back(toru::test::serial_dft3(n, all[f], -1));
    fwd.wait();
    bwd.start();
    bwd.wait();
    EXPECT_EQ(allreduces.load() - before, 0) << "step " << step << ": a started request agreed on its arguments";
    toru::test::error_norm e, r;
    toru::test::for_each(plan.outbox(), [&](index3 g, std::int64_t i) {
      for (int f = 0; f < F; ++f) {
        e.add(b[i * F + f], want[f][toru::test::flat(n, g)]);
        EXPECT_EQ(b[i * F + f], blocking[i * F + f]) << "step " << step;
      }
    });
    toru::test::for_each(plan.inbox(), [&](index3 g, std::int64_t i) {
      for (int f = 0; f < F; ++f) r.add(c[i * F + f], all[f][toru::test::flat(n, g)]);
    });
    EXPECT_LT(e.rel(), toru::test::tolerance<double>(static_cast<double>(n[0] * n[1] * n[2]))) << "step " << step;
    EXPECT_LT(r.rel(), toru::test::tolerance<double>(static_cast<double>(n[0] * n[1] * n[2]))) << "step " << step;
  }
  fwd.start();
  EXPECT_THROW(fwd.start(), toru::error);  // one in flight already
  fwd.wait();
}

TEST(FftPersistent, BatchR2cStepsMatchSerialFftwAndBlockingBitForBit) {
  const index3 n{5, 6, 7}, nc{5, 6, 4};
  const int F = 2;
  toru::fft::fft3d_batch_r2c<double> plan(MPI_COMM_WORLD, n, F);  // interleaved, padded rows
  std::vector<double> x(2 * plan.alloc_size()), y(2 * plan.alloc_size());
  std::vector<cpx> z(plan.alloc_size()), blocking(plan.alloc_size());
  toru::request fwd = plan.forward_init(x.data(), z.data());
  toru::request bwd = plan.backward_init(z.data(), y.data(), toru::fft::scale::full);
  std::vector<std::vector<double>> all(F, std::vector<double>(static_cast<std::size_t>(n[0] * n[1] * n[2])));
  for (int f = 0; f < F; ++f)
    for (std::size_t i = 0; i < all[f].size(); ++i)
      all[f][i] = toru::test::noise(i, 100 + static_cast<std::uint64_t>(f));
  toru::test::for_each(plan.inbox(), [&](index3 g, std::int64_t i) {
    for (int f = 0; f < F; ++f) x[i * F + f] = all[f][toru::test::flat(n, g)];
  });
  plan.forward(x.data(), blocking.data());
  const int before = allreduces.load();
  fwd.start();
  std::vector<std::vector<cpx>> want;  // the work done while the transform is in flight
  for (int f = 0; f < F; ++f) want.push_back(toru::test::serial_r2c3(n, all[f]));
  fwd.wait();
  bwd.start();
  bwd.wait();
  EXPECT_EQ(allreduces.load() - before, 0);
  toru::test::error_norm e, r;
  toru::test::for_each(plan.outbox(), [&](index3 g, std::int64_t i) {
    for (int f = 0; f < F; ++f) {
      e.add(z[i * F + f], want[f][toru::test::flat(nc, g)]);
      EXPECT_EQ(z[i * F + f], blocking[i * F + f]);
    }
  });
  toru::test::for_each(plan.inbox(), [&](index3 g, std::int64_t i) {
    for (int f = 0; f < F; ++f) r.add(y[i * F + f], all[f][toru::test::flat(n, g)]);
  });
  EXPECT_LT(e.rel(), toru::test::tolerance<double>(static_cast<double>(n[0] * n[1] * n[2])));
  EXPECT_LT(r.rel(), toru::test::tolerance<double>(static_cast<double>(n[0] * n[1] * n[2])));
}

}  // namespace
