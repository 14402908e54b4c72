// SPDX-License-Identifier: BSD-3-Clause
// FFT plans on a described torus, against serial FFTW: the torus from TORU_TORUS (registered with it
// set: it describes MPI_COMM_WORLD, and the pencil rows and columns get the lines they occupy), and
// the torus given through options3d::comm / options1d::comm.
#include <gtest/gtest.h>

#include <string>

#include "fft_test_util.hpp"
#include "mpi_test.hpp"
#include "toru/core/error.hpp"
#include "toru/fft.h"
#include "toru/fft/fft1d.hpp"
#include "toru/fft/fft3d.hpp"

namespace {

using toru::fft::decomposition;
using toru::test::cnoise;
using toru::test::flat;
using toru::test::for_each;
using N3 = std::array<std::int64_t, 3>;

// A two-axis torus of P nodes where P allows one, else a ring.
std::string api_torus(int P) {
  switch (P) {
    case 4:
      return "2x2";
    case 6:
      return "3x2";
    case 8:
      return "2x4";
    default:
      return std::to_string(P);
  }
}

void check_3d(N3 n, toru::fft::options3d o, const std::string& label) {
  SCOPED_TRACE(::testing::Message() << n[0] << "x" << n[1] << "x" << n[2] << " " << toru::fft::to_string(o.decomp)
                                    << " torus '" << o.comm.torus << "' " << label);
  std::vector<std::complex<double>> input(static_cast<std::size_t>(n[0] * n[1] * n[2]));
  for (std::size_t i = 0; i < input.size(); ++i) input[i] = cnoise(i, 3);
  const auto ref = toru::test::serial_dft3(n, input, FFTW_FORWARD);
  std::unique_ptr<toru::fft::fft3d<double>> plan;
  ASSERT_NO_THROW(plan = std::make_unique<toru::fft::fft3d<double>>(MPI_COMM_WORLD, n, o));
  std::vector<std::complex<double>> a(plan->alloc_size()), b(plan->alloc_size());
  for_each(plan->inbox(), [&](N3 g, std::int64_t i) { a[i] = input[flat(n, g)]; });
  plan->forward(a.data(), b.data());
  toru::test::error_norm e;
  for_each(plan->outbox(), [&](N3 g, std::int64_t i) { e.add(b[i], ref[flat(n, g)]); });
  const double N = static_cast<double>(n[0] * n[1] * n[2]);
  EXPECT_LT(e.rel(), toru::test::tolerance<double>(N));
  plan->backward(b.data(), a.data(), toru::fft::scale::full);
  toru::test::error_norm r;
  for_each(plan->inbox(), [&](N3 g, std::int64_t i) { r.add(a[i], input[flat(n, g)]); });
  EXPECT_LT(r.rel(), toru::test::tolerance<double>(N));
}

// The sizes of the issue (1x16x16 and 2x2x2 pick pencils on 4 ranks) and one where every
// decomposition fits up to 8 ranks.
const N3 sizes[] = {{1, 16, 16}, {2, 2, 2}, {8, 9, 10}};

TEST(fft_torus, plans_on_the_environment_torus_match_serial_fftw) {
  for (const N3& n : sizes) check_3d(n, {}, "automatic");
  const std::int64_t P = toru::test::nranks();
  // Forced pencils with a two-row grid, where every rank gets work in both pencil layouts.
  if (P % 2 == 0) check_3d(sizes[2], {.decomp = decomposition::pencil, .grid = {2, static_cast<int>(P / 2)}}, "");
  check_3d(sizes[2], {.decomp = decomposition::slab}, "");
}

TEST(fft_torus, plans_on_a_torus_given_through_the_options_match_serial_fftw) {
  const int P = toru::test::nranks();
  const toru::comm::communicator_options c{.torus = api_torus(P), .threads = 0};
  for (const N3& n : sizes) check_3d(n, {.comm = c}, "automatic");
  if (P % 2 == 0) check_3d(sizes[2], {.decomp = decomposition::pencil, .grid = {2, P / 2}, .comm = c}, "");
  // And with the pipelined torus algorithm forced, which really uses the line and plane.
  check_3d(sizes[2], {.algorithm = toru::comm::alltoall_algorithm::indirect, .comm = c}, "indirect");
}

TEST(fft_torus, one_dimensional_plans_match_serial_fftw) {
  const int P = toru::test::nranks();
  const std::int64_t n = 4 * 9 * 5;
  std::vector<std::complex<double>> x(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) x[static_cast<std::size_t>(i)] = cnoise(static_cast<std::uint64_t>(i), 7);
  const auto X = toru::test::serial_dft1(x, FFTW_FORWARD);
  for (const std::string& spec : {std::string(), api_torus(P)}) {
    SCOPED_TRACE("torus '" + spec + "'");
    toru::fft::fft1d<double> plan(MPI_COMM_WORLD, n, {.comm = {.torus = spec, .threads = 0}});
    std::vector<std::complex<double>> a(plan.alloc_size()), b(plan.alloc_size());
    for (std::int64_t i = 0; i < plan.in_count(); ++i) a[i] = x[plan.in_start() + i];
    plan.forward(a.data(), b.data());
    toru::test::error_norm e;
    for (std::int64_t i = 0; i < plan.out_count(); ++i) e.add(b[i], X[plan.out_start() + i]);
    EXPECT_LT(e.rel(), toru::test::tolerance<double>(static_cast<double>(n)));
  }
}

TEST(fft_torus, options_that_differ_across_ranks_fail_on_every_rank) {
  const int P = toru::test::nranks();
  if (P < 2) GTEST_SKIP() << "needs two ranks";
  const std::string spec = toru::test::rank() == P - 1 ? "1x" + api_torus(P) : api_torus(P);
  try {
    toru::fft::fft3d<double> plan(MPI_COMM_WORLD, sizes[2], {.comm = {.torus = spec}});
    ADD_FAILURE() << "a torus that differs on one rank was accepted";
  } catch (const toru::error& e) {
    EXPECT_EQ(e.code(), toru::errc::mismatch) << e.what();
  }
}

// The C API takes the torus too (toru_fft_options.torus / .order): a spec of the wrong size is refused
// on every rank (so it is read), and a right one plans on it and transforms like serial FFTW.
TEST(fft_torus, c_plans_take_the_torus_from_their_options) {
  const int P = toru::test::nranks();
  const N3 n = sizes[2];
  toru_fft_options o = toru_fft_options_default();
  const std::string wrong = std::to_string(P + 1);
  o.torus = wrong.c_str();
  toru_fft_plan plan = nullptr;
  EXPECT_EQ(toru_fft_plan_create_3d(MPI_COMM_WORLD, n[0], n[1], n[2], &o, &plan), TORU_ERROR_INVALID_ARGUMENT)
      << toru_last_error();
  EXPECT_EQ(plan, nullptr);

  const std::string spec = api_torus(P);
  o.torus = spec.c_str();
  o.order = "YX";                                              // not the identity
  if (spec.find('x') == std::string::npos) o.order = nullptr;  // a ring has one axis
  ASSERT_EQ(toru_fft_plan_create_3d(MPI_COMM_WORLD, n[0], n[1], n[2], &o, &plan), TORU_SUCCESS) << toru_last_error();
  toru_fft_box in{}, out{};
  long long alloc = 0;
  ASSERT_EQ(toru_fft_plan_local_size(plan, &in, &out, &alloc), TORU_SUCCESS);
  std::vector<std::complex<double>> input(static_cast<std::size_t>(n[0] * n[1] * n[2]));
  for (std::size_t i = 0; i < input.size(); ++i) input[i] = cnoise(i, 5);
  const auto ref = toru::test::serial_dft3(n, input, FFTW_FORWARD);
  // Natural order: the input box is also the output box, memory axis 0, 1, 2 with row_stride.
  std::vector<std::complex<double>> a(static_cast<std::size_t>(alloc)), b(a.size());
  auto each = [&](const toru_fft_box& bx, auto&& f) {
    for (long long i = 0; i < bx.size[0]; ++i)
      for (long long j = 0; j < bx.size[1]; ++j)
        for (long long k = 0; k < bx.size[2]; ++k)
          f(N3{bx.low[0] + i, bx.low[1] + j, bx.low[2] + k}, (i * bx.size[1] + j) * bx.row_stride + k);
  };
  for (int axis = 0; axis < 3; ++axis) {
    ASSERT_EQ(in.order[axis], axis);
    ASSERT_EQ(out.order[axis], axis);
  }
  each(in, [&](N3 g, long long i) { a[static_cast<std::size_t>(i)] = input[flat(n, g)]; });
  ASSERT_EQ(toru_fft_plan_execute(plan, TORU_FFT_FORWARD, TORU_FFT_SCALE_NONE, a.data(), b.data()), TORU_SUCCESS)
      << toru_last_error();
  toru::test::error_norm e;
  each(out, [&](N3 g, long long i) { e.add(b[static_cast<std::size_t>(i)], ref[flat(n, g)]); });
  EXPECT_LT(e.rel(), toru::test::tolerance<double>(static_cast<double>(n[0] * n[1] * n[2])));
  EXPECT_EQ(toru_fft_plan_destroy(plan), TORU_SUCCESS);
}

}  // namespace
