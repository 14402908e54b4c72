// SPDX-License-Identifier: BSD-3-Clause
// The collective-error harness: for every public fft entry point, C and C++, one argument is
// corrupted on exactly one rank (the first, the last and a middle one in turn) and every rank must
// return the same error code and message, within a time limit. A hang trips a watchdog that aborts
// the job loudly instead of letting the suite wait for ctest's timeout. Entry points that are not
// collective (local-size queries, workspace size; toru_fft_plan_factors_1d in c_layout_1d_test) must fail on the
// corrupted rank only.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <array>
#include <climits>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "collective_errors.hpp"
#include "fft_test_util.hpp"
#include "mpi_test.hpp"
#include "toru/core/error.hpp"
#include "toru/fft/fft1d.hpp"
#include "toru/fft/fft3d.hpp"
#include "toru/toru.h"

namespace {

using toru::fft::decomposition;
using toru::fft::fft1d;
using toru::fft::fft3d;
using toru::fft::fft3d_r2c;
using toru::fft::order;
using toru::fft::scale;
using cpx = std::complex<double>;

using toru::test::from_c;
using toru::test::from_cpp;
using toru::test::outcome;
using toru::test::watchdog;

std::string bcast_string(std::string s, int root) {
  int len = static_cast<int>(s.size());
  MPI_Bcast(&len, 1, MPI_INT, root, MPI_COMM_WORLD);
  s.resize(static_cast<std::size_t>(len));
  MPI_Bcast(s.data(), len, MPI_CHAR, root, MPI_COMM_WORLD);
  return s;
}

std::vector<int> culprits() {
  const int P = toru::test::nranks();
  std::set<int> c{0, P - 1, P / 2};
  return {c.begin(), c.end()};
}

// A collective case: `run(culprit)` calls the entry point, corrupting its argument when `culprit`.
struct collective_case {
  std::string name;
  int expected;  // the code every rank must return
  std::function<outcome(bool culprit)> run;
};

// Runs every case with every culprit and checks: the expected code and one message on all ranks.
void check_collective(const std::vector<collective_case>& cases) {
  const int me = toru::test::rank();
  for (int c : culprits())
    for (const auto& k : cases) {
      const std::string what = k.name + " corrupted on rank " + std::to_string(c);
      SCOPED_TRACE(what);
      watchdog dog(what);
      const outcome o = k.run(me == c);
      // The harness's own collectives also run under the watchdog: a rank that returned early
      // while others still wait would leave them (and this bcast) stuck or mismatched.
      const std::string rank0 = bcast_string(o.message, 0);
      int lo = 0, hi = 0;
      MPI_Allreduce(&o.code, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
      MPI_Allreduce(&o.code, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
      EXPECT_EQ(lo, hi) << "codes differ across ranks; this rank: " << o.code << " " << o.message;
      EXPECT_EQ(o.code, k.expected) << o.message;
      EXPECT_EQ(o.message, rank0);
      EXPECT_NE(o.message, "");
      MPI_Barrier(MPI_COMM_WORLD);
    }
}

// A local case: the corrupted rank alone fails with `expected`, the others succeed.
void check_local(const std::string& name, int expected, const std::function<outcome(bool culprit)>& run) {
  const int me = toru::test::rank();
  for (int c : culprits()) {
    const std::string what = name + " corrupted on rank " + std::to_string(c);
    SCOPED_TRACE(what);
    watchdog dog(what);
    const outcome o = run(me == c);
    EXPECT_EQ(o.code, me == c ? expected : 0) << o.message;
    MPI_Barrier(MPI_COMM_WORLD);
  }
}

constexpr long long n0 = 8, n1 = 6, n2 = 5;  // uneven on 3 and 4 ranks
constexpr long long n1d = 60;

// ---- C plan creation ----

using c_plan_fn = std::function<toru_result(MPI_Comm, const toru_fft_options*, toru_fft_plan*)>;

outcome c_plan(const c_plan_fn& make, MPI_Comm comm, const toru_fft_options* opts, bool null_out = false) {
  toru_fft_plan p = nullptr;
  const outcome o = from_c(make(comm, opts, null_out ? nullptr : &p));
  toru_fft_plan_destroy(p);
  return o;
}

std::vector<collective_case> c_plan_cases(const std::string& fn, const c_plan_fn& make, bool three_d) {
  const int bad = TORU_ERROR_INVALID_ARGUMENT, mismatch = TORU_ERROR_MISMATCH;
  auto with = [make](std::function<void(toru_fft_options&)> corrupt) {
    return [make, corrupt](bool culprit) {
      toru_fft_options o = toru_fft_options_default();
      if (culprit) corrupt(o);
      return c_plan(make, MPI_COMM_WORLD, &o);
    };
  };
  std::vector<collective_case> cases{
      {fn + " plan = NULL", bad, [make](bool culprit) { return c_plan(make, MPI_COMM_WORLD, nullptr, culprit); }},
      {fn + " precision FLOAT", mismatch, with([](auto& o) { o.precision = TORU_FFT_FLOAT; })},
      {fn + " precision 7", bad, with([](auto& o) { o.precision = static_cast<toru_fft_precision>(7); })},
      {fn + " transposed_out", mismatch, with([](auto& o) { o.transposed_out = 1; })},
      {fn + " measure", mismatch, with([](auto& o) { o.measure = 1; })},
      {fn + " overlap", mismatch, with([](auto& o) { o.overlap = 0; })},
      {fn + " chunks 3", mismatch, with([](auto& o) { o.chunks = 3; })},
      {fn + " chunks -1", bad, with([](auto& o) { o.chunks = -1; })},
  };
  if (three_d) {
    cases.push_back({fn + " decomposition PENCIL", mismatch,
                     with([](auto& o) { o.decomposition = TORU_FFT_DECOMPOSITION_PENCIL; })});
    cases.push_back({fn + " decomposition 9", bad,
                     with([](auto& o) { o.decomposition = static_cast<toru_fft_decomposition>(9); })});
    cases.push_back({fn + " grid {1, 1}", mismatch, with([](auto& o) { o.grid[0] = o.grid[1] = 1; })});
  } else {
    cases.push_back({fn + " n1 7 (not a divisor)", bad, with([](auto& o) { o.n1 = 7; })});
    cases.push_back({fn + " n1 4", mismatch, with([](auto& o) { o.n1 = 4; })});
  }
  return cases;
}

TEST(CollectiveErrors, CPlan3d) {
  c_plan_fn make = [](MPI_Comm c, const toru_fft_options* o, toru_fft_plan* p) {
    return toru_fft_plan_create_3d(c, n0, n1, n2, o, p);
  };
  auto cases = c_plan_cases("toru_fft_plan_create_3d", make, true);
  auto sized = [](long long a, long long b) {
    return [a, b](bool culprit) {
      toru_fft_plan p = nullptr;
      const outcome o =
          from_c(toru_fft_plan_create_3d(MPI_COMM_WORLD, culprit ? a : n0, culprit ? b : n1, n2, nullptr, &p));
      toru_fft_plan_destroy(p);
      return o;
    };
  };
  cases.push_back({"toru_fft_plan_create_3d n0 9", TORU_ERROR_MISMATCH, sized(9, n1)});
  cases.push_back({"toru_fft_plan_create_3d n1 0", TORU_ERROR_INVALID_ARGUMENT, sized(n0, 0)});
  cases.push_back({"toru_fft_plan_create_3d n0 LLONG_MAX", TORU_ERROR_INVALID_ARGUMENT, sized(LLONG_MAX, n1)});
  cases.push_back(
      {"toru_fft_plan_create_3d instead of toru_fft_plan_create_r2c_3d", TORU_ERROR_MISMATCH, [](bool culprit) {
         toru_fft_plan p = nullptr;
         const outcome o = from_c(culprit ? toru_fft_plan_create_3d(MPI_COMM_WORLD, n0, n1, n2, nullptr, &p)
                                          : toru_fft_plan_create_r2c_3d(MPI_COMM_WORLD, n0, n1, n2, nullptr, &p));
         toru_fft_plan_destroy(p);
         return o;
       }});
  check_collective(cases);
}

TEST(CollectiveErrors, CPlanR2c3d) {
  c_plan_fn make = [](MPI_Comm c, const toru_fft_options* o, toru_fft_plan* p) {
    return toru_fft_plan_create_r2c_3d(c, n0, n1, n2, o, p);
  };
  auto cases = c_plan_cases("toru_fft_plan_create_r2c_3d", make, true);
  cases.push_back({"toru_fft_plan_create_r2c_3d n2 -4", TORU_ERROR_INVALID_ARGUMENT, [](bool culprit) {
                     toru_fft_plan p = nullptr;
                     const outcome o =
                         from_c(toru_fft_plan_create_r2c_3d(MPI_COMM_WORLD, n0, n1, culprit ? -4 : n2, nullptr, &p));
                     toru_fft_plan_destroy(p);
                     return o;
                   }});
  check_collective(cases);
}

TEST(CollectiveErrors, CPlan1d) {
  c_plan_fn make = [](MPI_Comm c, const toru_fft_options* o, toru_fft_plan* p) {
    return toru_fft_plan_create_1d(c, n1d, o, p);
  };
  auto cases = c_plan_cases("toru_fft_plan_create_1d", make, false);
  auto sized = [](long long n) {
    return [n](bool culprit) {
      toru_fft_plan p = nullptr;
      const outcome o = from_c(toru_fft_plan_create_1d(MPI_COMM_WORLD, culprit ? n : n1d, nullptr, &p));
      toru_fft_plan_destroy(p);
      return o;
    };
  };
  cases.push_back({"toru_fft_plan_create_1d n 64", TORU_ERROR_MISMATCH, sized(64)});
  cases.push_back({"toru_fft_plan_create_1d n 0", TORU_ERROR_INVALID_ARGUMENT, sized(0)});
  // Minutes of trial division before the fix; refused at once now.
  cases.push_back({"toru_fft_plan_create_1d n LLONG_MAX", TORU_ERROR_INVALID_ARGUMENT, sized(LLONG_MAX)});
  // The Mersenne prime 2^61-1: n1 = 1 and n2 = n, too long for FFTW; found by factoring, not by
  // a billion trial divisions.
  cases.push_back({"toru_fft_plan_create_1d n 2^61-1", TORU_ERROR_INVALID_ARGUMENT, sized((1LL << 61) - 1)});
  check_collective(cases);
}

// ---- C execute ----

struct c_plans {
  toru_fft_plan c2c = nullptr, r2c = nullptr, one = nullptr;
  long long alloc = 1;
  c_plans() {
    EXPECT_EQ(toru_fft_plan_create_3d(MPI_COMM_WORLD, n0, n1, n2, nullptr, &c2c), TORU_SUCCESS) << toru_last_error();
    EXPECT_EQ(toru_fft_plan_create_r2c_3d(MPI_COMM_WORLD, n0, n1, n2, nullptr, &r2c), TORU_SUCCESS)
        << toru_last_error();
    EXPECT_EQ(toru_fft_plan_create_1d(MPI_COMM_WORLD, n1d, nullptr, &one), TORU_SUCCESS) << toru_last_error();
    for (toru_fft_plan p : {c2c, r2c, one}) {
      long long a = 0;
      toru_fft_plan_local_size(p, nullptr, nullptr, &a);
      alloc = std::max(alloc, a);
    }
  }
  ~c_plans() {
    toru_fft_plan_destroy(c2c);
    toru_fft_plan_destroy(r2c);
    toru_fft_plan_destroy(one);
  }
};

TEST(CollectiveErrors, CExecute) {
  c_plans plans;
  std::vector<cpx> a(static_cast<std::size_t>(plans.alloc)), b(a.size());
  std::vector<char> ws(1 << 20);
  const int bad = TORU_ERROR_INVALID_ARGUMENT, mismatch = TORU_ERROR_MISMATCH;
  std::vector<collective_case> cases;
  for (const auto& entry : {std::pair{"3d", plans.c2c}, std::pair{"r2c", plans.r2c}, std::pair{"1d", plans.one}})
    for (bool with_ws : {false, true}) {
      const std::string label = entry.first;
      toru_fft_plan plan = entry.second;
      size_t need = 0;
      toru_fft_plan_workspace_size(plan, &need);
      ASSERT_LE(need, ws.size());
      const std::string fn = std::string(with_ws ? "toru_fft_plan_execute_ws " : "toru_fft_plan_execute ") + label;
      auto call = [&, plan, with_ws](toru_fft_direction d, toru_fft_scale s, const void* in, void* out) {
        return from_c(with_ws ? toru_fft_plan_execute_ws(plan, d, s, in, out, ws.data())
                              : toru_fft_plan_execute(plan, d, s, in, out));
      };
      const auto F = TORU_FFT_FORWARD, B = TORU_FFT_BACKWARD;
      const auto none = TORU_FFT_SCALE_NONE;
      cases.push_back({fn + " direction BACKWARD", mismatch,
                       [&, call](bool c) { return call(c ? B : F, none, a.data(), b.data()); }});
      cases.push_back({fn + " direction 0", bad, [&, call](bool c) {
                         return call(c ? static_cast<toru_fft_direction>(0) : F, none, a.data(), b.data());
                       }});
      cases.push_back({fn + " scale FULL", mismatch,
                       [&, call](bool c) { return call(F, c ? TORU_FFT_SCALE_FULL : none, a.data(), b.data()); }});
      cases.push_back({fn + " scale 5", bad, [&, call](bool c) {
                         return call(B, c ? static_cast<toru_fft_scale>(5) : none, a.data(), b.data());
                       }});
      cases.push_back(
          {fn + " out NULL", bad, [&, call](bool c) { return call(F, none, a.data(), c ? nullptr : b.data()); }});
      cases.push_back(
          {fn + " in NULL", bad, [&, call](bool c) { return call(B, none, c ? nullptr : a.data(), b.data()); }});
    }
  // A 3D execute on one rank and a 1D execute on the others: different collectives, one error.
  cases.push_back({"toru_fft_plan_execute 3d instead of 1d", mismatch, [&](bool c) {
                     return from_c(toru_fft_plan_execute(c ? plans.c2c : plans.one, TORU_FFT_FORWARD,
                                                         TORU_FFT_SCALE_NONE, a.data(), b.data()));
                   }});
  check_collective(cases);
  // The plans still work after all of that.
  for (toru_fft_plan p : {plans.c2c, plans.one})
    EXPECT_EQ(toru_fft_plan_execute(p, TORU_FFT_FORWARD, TORU_FFT_SCALE_NONE, a.data(), b.data()), TORU_SUCCESS)
        << toru_last_error();
}

// The persistent forms (toru_*_plan_init): the same argument errors as execute, on every rank, and
// on failure the caller's request is left as it was; then a good init still binds and runs.
TEST(CollectiveErrors, CInit) {
  c_plans plans;
  const toru_fft_r2r_kind kinds[3] = {TORU_FFT_DCT2, TORU_FFT_DST1, TORU_FFT_DCT4};
  toru_fft_r2r_plan r2r = nullptr;
  ASSERT_EQ(toru_fft_r2r_plan_create_3d(MPI_COMM_WORLD, n0, n1, n2, kinds, nullptr, &r2r), TORU_SUCCESS)
      << toru_last_error();
  toru_fft_batch_plan batch = nullptr;
  ASSERT_EQ(toru_fft_batch_plan_create_3d(MPI_COMM_WORLD, n0, n1, n2, 0, 2, TORU_FFT_INTERLEAVED, nullptr, &batch),
            TORU_SUCCESS)
      << toru_last_error();
  long long alloc = plans.alloc, r2r_alloc = 0, batch_alloc = 0;
  toru_fft_r2r_plan_local_size(r2r, nullptr, nullptr, &r2r_alloc);
  toru_fft_batch_plan_local_size(batch, nullptr, nullptr, &batch_alloc);
  alloc = std::max({alloc, r2r_alloc, batch_alloc});
  std::vector<cpx> a(static_cast<std::size_t>(alloc)), b(a.size());
  // Direction and scale travel as int: out-of-range values are what a C caller can pass, and a C++
  // enum object holding one is undefined (UBSan's -fsanitize=enum flags the load).
  using init_fn = std::function<toru_result(int, int, const void*, void*, toru_request*)>;
  std::vector<std::pair<std::string, init_fn>> inits;
  for (const auto& [label, plan] :
       {std::pair{"3d", plans.c2c}, std::pair{"r2c", plans.r2c}, std::pair{"1d", plans.one}})
    inits.emplace_back(std::string("toru_fft_plan_init ") + label, [plan](int d, int s, const void* in, void* out,
                                                                          toru_request* r) {
      return toru_fft_plan_init(plan, static_cast<toru_fft_direction>(d), static_cast<toru_fft_scale>(s), in, out, r);
    });
  inits.emplace_back("toru_fft_r2r_plan_init", [r2r](int d, int s, const void* in, void* out, toru_request* r) {
    return toru_fft_r2r_plan_init(r2r, static_cast<toru_fft_direction>(d), static_cast<toru_fft_scale>(s), in, out, r);
  });
  inits.emplace_back("toru_fft_batch_plan_init", [batch](int d, int s, const void* in, void* out, toru_request* r) {
    return toru_fft_batch_plan_init(batch, static_cast<toru_fft_direction>(d), static_cast<toru_fft_scale>(s), in, out,
                                    r);
  });
  const int bad = TORU_ERROR_INVALID_ARGUMENT, mismatch = TORU_ERROR_MISMATCH;
  const auto F = TORU_FFT_FORWARD, B = TORU_FFT_BACKWARD;
  const auto none = TORU_FFT_SCALE_NONE;
  // A request value no init may write over when it fails (never started or freed).
  toru_request untouched = reinterpret_cast<toru_request>(&a);
  std::vector<collective_case> cases;
  for (const auto& [fn, init] : inits) {
    auto call = [&, init](int d, int s, const void* in, void* out, bool null_request) {
      toru_request r = untouched;
      const outcome o = from_c(init(d, s, in, out, null_request ? nullptr : &r));
      if (o.code == TORU_SUCCESS) {
        toru_request_free(&r);
      } else {
        EXPECT_EQ(r, untouched) << fn << ": the request was written on failure";
      }
      return o;
    };
    cases.push_back({fn + " direction BACKWARD", mismatch,
                     [&, call](bool c) { return call(c ? B : F, none, a.data(), b.data(), false); }});
    cases.push_back(
        {fn + " direction 0", bad, [&, call](bool c) { return call(c ? 0 : F, none, a.data(), b.data(), false); }});
    cases.push_back({fn + " scale FULL", mismatch,
                     [&, call](bool c) { return call(F, c ? TORU_FFT_SCALE_FULL : none, a.data(), b.data(), false); }});
    cases.push_back(
        {fn + " scale 5", bad, [&, call](bool c) { return call(B, c ? 5 : none, a.data(), b.data(), false); }});
    cases.push_back(
        {fn + " out NULL", bad, [&, call](bool c) { return call(F, none, a.data(), c ? nullptr : b.data(), false); }});
    cases.push_back(
        {fn + " in NULL", bad, [&, call](bool c) { return call(B, none, c ? nullptr : a.data(), b.data(), false); }});
    cases.push_back({fn + " request NULL", bad, [&, call](bool c) { return call(F, none, a.data(), b.data(), c); }});
  }
  // A 3D init on one rank and an r2r init on the others: different collectives, one error.
  cases.push_back({"toru_fft_plan_init 3d instead of r2r", mismatch, [&](bool c) {
                     toru_request r = untouched;
                     const outcome o = from_c(c ? toru_fft_plan_init(plans.c2c, F, none, a.data(), b.data(), &r)
                                                : toru_fft_r2r_plan_init(r2r, F, none, a.data(), b.data(), &r));
                     if (o.code == TORU_SUCCESS) toru_request_free(&r);
                     return o;
                   }});
  check_collective(cases);
  // After the refusals every plan still binds, and its request runs (start, wait) like execute.
  for (const auto& [fn, init] : inits) {
    SCOPED_TRACE(fn);
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = toru::test::cnoise(i, 7);
    std::vector<cpx> in = a, want(b.size()), got(b.size());
    toru_request r = nullptr;
    ASSERT_EQ(init(F, none, in.data(), got.data(), &r), TORU_SUCCESS) << toru_last_error();
    ASSERT_EQ(toru_request_start(r), TORU_SUCCESS) << toru_last_error();
    ASSERT_EQ(toru_request_wait(r), TORU_SUCCESS) << toru_last_error();
    EXPECT_EQ(toru_request_free(&r), TORU_SUCCESS);
    in = a;
    if (fn == "toru_fft_r2r_plan_init")
      ASSERT_EQ(toru_fft_r2r_plan_execute(r2r, F, none, in.data(), want.data()), TORU_SUCCESS);
    else if (fn == "toru_fft_batch_plan_init")
      ASSERT_EQ(toru_fft_batch_plan_execute(batch, F, none, in.data(), want.data()), TORU_SUCCESS);
    else {
      toru_fft_plan p = fn.ends_with("3d") ? plans.c2c : fn.ends_with("r2c") ? plans.r2c : plans.one;
      ASSERT_EQ(toru_fft_plan_execute(p, F, none, in.data(), want.data()), TORU_SUCCESS);
    }
    EXPECT_TRUE(std::equal(got.begin(), got.end(), want.begin())) << "request and execute differ";
  }
  toru_fft_batch_plan_destroy(batch);
  toru_fft_r2r_plan_destroy(r2r);
}

// A NULL plan has no communicator: on every rank it is the same error (on one rank only, the
// others would wait in the collective; toru.h documents it as fatal).
TEST(CollectiveErrors, CNullPlanOnEveryRank) {
  watchdog dog("toru_fft_plan_execute(NULL) on every rank");
  EXPECT_EQ(toru_fft_plan_execute(nullptr, TORU_FFT_FORWARD, TORU_FFT_SCALE_NONE, nullptr, nullptr),
            TORU_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(toru_last_error()).find("no communicator"), std::string::npos) << toru_last_error();
  EXPECT_EQ(toru_fft_plan_execute_ws(nullptr, TORU_FFT_FORWARD, TORU_FFT_SCALE_NONE, nullptr, nullptr, nullptr),
            TORU_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(toru_fft_plan_destroy(nullptr), TORU_SUCCESS);
}

// ---- C, not collective: the corrupted rank alone fails ----

TEST(CollectiveErrors, CLocalQueries) {
  c_plans plans;
  const int bad = TORU_ERROR_INVALID_ARGUMENT;
  check_local("toru_fft_plan_local_size plan NULL", bad, [&](bool c) {
    long long alloc = 0;
    return from_c(toru_fft_plan_local_size(c ? nullptr : plans.c2c, nullptr, nullptr, &alloc));
  });
  check_local("toru_fft_local_size_3d n0 0", bad, [&](bool c) {
    toru_fft_box in, out;
    long long alloc = 0;
    return from_c(toru_fft_local_size_3d(MPI_COMM_WORLD, c ? 0 : n0, n1, n2, 0, nullptr, &in, &out, &alloc));
  });
  check_local("toru_fft_local_size_3d MPI_COMM_NULL", bad, [&](bool c) {
    toru_fft_box in, out;
    long long alloc = 0;
    return from_c(
        toru_fft_local_size_3d(c ? MPI_COMM_NULL : MPI_COMM_WORLD, n0, n1, n2, 1, nullptr, &in, &out, &alloc));
  });
  check_local("toru_fft_local_size_3d decomposition 9", bad, [&](bool c) {
    toru_fft_options o = toru_fft_options_default();
    if (c) o.decomposition = static_cast<toru_fft_decomposition>(9);
    long long alloc = 0;
    return from_c(toru_fft_local_size_3d(MPI_COMM_WORLD, n0, n1, n2, 0, &o, nullptr, nullptr, &alloc));
  });
  check_local("toru_fft_plan_workspace_size bytes NULL", bad, [&](bool c) {
    size_t bytes = 0;
    return from_c(toru_fft_plan_workspace_size(plans.one, c ? nullptr : &bytes));
  });
}

// ---- Communicators no rank can use ----

TEST(CollectiveErrors, CommNullAndIntercommRefused) {
  // A split into two halves joined by an intercommunicator.
  const int me = toru::test::rank(), P = toru::test::nranks();
  MPI_Comm half = MPI_COMM_NULL, inter = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, me < P / 2, me, &half);
  MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, me < P / 2 ? P / 2 : 0, 7, &inter);
  for (MPI_Comm comm : {MPI_COMM_NULL, inter}) {
    const std::string expect_text = comm == MPI_COMM_NULL ? "MPI_COMM_NULL" : "intercommunicator";
    watchdog dog(expect_text);
    std::vector<outcome> got;
    toru_fft_plan p = nullptr;
    got.push_back(from_c(toru_fft_plan_create_3d(comm, n0, n1, n2, nullptr, &p)));
    got.push_back(from_c(toru_fft_plan_create_r2c_3d(comm, n0, n1, n2, nullptr, &p)));
    got.push_back(from_c(toru_fft_plan_create_1d(comm, n1d, nullptr, &p)));
    EXPECT_EQ(p, nullptr);
    long long alloc = 0;
    got.push_back(from_c(toru_fft_local_size_3d(comm, n0, n1, n2, 0, nullptr, nullptr, nullptr, &alloc)));
    got.push_back(from_cpp([&] { fft3d<double>(comm, {n0, n1, n2}); }));
    got.push_back(from_cpp([&] { fft3d_r2c<float>(comm, {n0, n1, n2}); }));
    got.push_back(from_cpp([&] { fft1d<double>(comm, n1d); }));
    for (const auto& o : got) {
      EXPECT_EQ(o.code, TORU_ERROR_INVALID_ARGUMENT) << o.message;
      EXPECT_NE(o.message.find(expect_text), std::string::npos) << o.message;
    }
  }
  MPI_Comm_free(&inter);
  MPI_Comm_free(&half);
}

// ---- C++ constructors ----

TEST(CollectiveErrors, CppConstructors) {
  const auto bad = static_cast<int>(toru::errc::invalid_argument);
  const auto mismatch = static_cast<int>(toru::errc::mismatch);
  const std::array<std::int64_t, 3> n{n0, n1, n2};
  auto plan3 = [n](std::function<void(std::array<std::int64_t, 3>&, toru::fft::options3d&)> corrupt) {
    return [n, corrupt](bool c) {
      auto m = n;
      toru::fft::options3d o;
      if (c) corrupt(m, o);
      return from_cpp([&] { fft3d<double>(MPI_COMM_WORLD, m, o); });
    };
  };
  auto plan1 = [](std::int64_t bad_n, toru::fft::options1d bad_o) {
    return [bad_n, bad_o](bool c) {
      return from_cpp([&] { fft1d<double>(MPI_COMM_WORLD, c ? bad_n : n1d, c ? bad_o : toru::fft::options1d{}); });
    };
  };
  const int P = toru::test::nranks();
  check_collective({
      {"fft3d n[2] 7", mismatch, plan3([](auto& m, auto&) { m[2] = 7; })},
      {"fft3d n[0] 0", bad, plan3([](auto& m, auto&) { m[0] = 0; })},
      {"fft3d decomp pencil", mismatch, plan3([](auto&, auto& o) { o.decomp = decomposition::pencil; })},
      {"fft3d decomp slab", mismatch, plan3([](auto&, auto& o) { o.decomp = decomposition::slab; })},
      {"fft3d grid {P + 1, 1}", bad, plan3([P](auto&, auto& o) {
         o.decomp = decomposition::pencil;
         o.grid = {P + 1, 1};
       })},
      {"fft3d output transposed", mismatch, plan3([](auto&, auto& o) { o.output = order::transposed; })},
      {"fft3d overlap", mismatch, plan3([](auto&, auto& o) { o.overlap = false; })},
      {"fft3d<float> among fft3d<double>", mismatch,
       [n](bool c) {
         return from_cpp([&] {
           if (c)
             fft3d<float>(MPI_COMM_WORLD, n);
           else
             fft3d<double>(MPI_COMM_WORLD, n);
         });
       }},
      {"fft3d_r2c among fft3d", mismatch,
       [n](bool c) {
         return from_cpp([&] {
           if (c)
             fft3d_r2c<double>(MPI_COMM_WORLD, n);
           else
             fft3d<double>(MPI_COMM_WORLD, n);
         });
       }},
      {"fft3d_r2c n[1] -1", bad,
       [n](bool c) {
         auto m = n;
         if (c) m[1] = -1;
         return from_cpp([&] { fft3d_r2c<double>(MPI_COMM_WORLD, m); });
       }},
      {"fft1d n 61", mismatch, plan1(61, {})},
      {"fft1d n LLONG_MAX", bad, plan1(LLONG_MAX, {})},
      {"fft1d n1 7", bad, plan1(n1d, {.n1 = 7})},
      {"fft1d output transposed", mismatch, plan1(n1d, {.output = order::transposed})},
      {"fft1d<float> among fft1d<double>", mismatch,
       [](bool c) {
         return from_cpp([&] {
           if (c)
             fft1d<float>(MPI_COMM_WORLD, n1d);
           else
             fft1d<double>(MPI_COMM_WORLD, n1d);
         });
       }},
  });
}

// ---- C++ forward / backward ----

TEST(CollectiveErrors, CppExecute) {
  const auto bad = static_cast<int>(toru::errc::invalid_argument);
  const auto mismatch = static_cast<int>(toru::errc::mismatch);
  fft3d<double> c2c(MPI_COMM_WORLD, {n0, n1, n2});
  fft3d_r2c<double> r2c(MPI_COMM_WORLD, {n0, n1, n2});
  fft1d<double> one(MPI_COMM_WORLD, n1d);
  const auto alloc = std::max({c2c.alloc_size(), r2c.alloc_size(), one.alloc_size()});
  std::vector<cpx> a(static_cast<std::size_t>(alloc)), b(a.size());
  std::vector<double> r(2 * a.size());
  const auto bad_scale = static_cast<scale>(9);
  std::vector<collective_case> cases{
      {"fft3d backward among forward", mismatch,
       [&](bool c) {
         return from_cpp([&] { c ? c2c.backward(a.data(), b.data()) : c2c.forward(a.data(), b.data()); });
       }},
      {"fft3d scale full", mismatch,
       [&](bool c) { return from_cpp([&] { c2c.forward(a.data(), b.data(), c ? scale::full : scale::none); }); }},
      {"fft3d scale 9", bad,
       [&](bool c) { return from_cpp([&] { c2c.backward(a.data(), b.data(), c ? bad_scale : scale::none); }); }},
      {"fft3d out nullptr", bad,
       [&](bool c) { return from_cpp([&] { c2c.forward(a.data(), c ? nullptr : b.data()); }); }},
      {"fft3d ws overload in nullptr", bad,
       [&](bool c) { return from_cpp([&] { c2c.forward(c ? nullptr : a.data(), b.data(), nullptr); }); }},
      {"fft3d span out too short", bad,
       [&](bool c) {
         return from_cpp([&] { c2c.forward(std::span<const cpx>(a), std::span<cpx>(b.data(), c ? 1 : b.size())); });
       }},
      {"fft3d span backward among pointer forward", mismatch,
       [&](bool c) {
         return from_cpp([&] {
           if (c)
             c2c.backward(std::span<const cpx>(a), std::span<cpx>(b));
           else
             c2c.forward(a.data(), b.data());
         });
       }},
      {"fft3d_r2c backward among forward", mismatch,
       [&](bool c) {
         return from_cpp([&] { c ? r2c.backward(b.data(), r.data()) : r2c.forward(r.data(), b.data()); });
       }},
      {"fft3d_r2c in nullptr", bad,
       [&](bool c) { return from_cpp([&] { r2c.forward(c ? nullptr : r.data(), b.data()); }); }},
      {"fft1d backward among forward", mismatch,
       [&](bool c) {
         return from_cpp([&] { c ? one.backward(a.data(), b.data()) : one.forward(a.data(), b.data()); });
       }},
      {"fft1d scale symmetric", mismatch,
       [&](bool c) {
         return from_cpp([&] { one.forward(a.data(), b.data(), nullptr, c ? scale::symmetric : scale::none); });
       }},
      {"fft1d out nullptr", bad,
       [&](bool c) { return from_cpp([&] { one.backward(a.data(), c ? nullptr : b.data()); }); }},
      {"fft3d backward_init among forward_init", mismatch,
       [&](bool c) {
         return from_cpp(
             [&] { auto q = c ? c2c.backward_init(a.data(), b.data()) : c2c.forward_init(a.data(), b.data()); });
       }},
      {"fft3d forward_init out nullptr", bad,
       [&](bool c) { return from_cpp([&] { auto q = c2c.forward_init(a.data(), c ? nullptr : b.data()); }); }},
      {"fft3d_r2c forward_init scale 9", bad,
       [&](bool c) {
         return from_cpp([&] { auto q = r2c.forward_init(r.data(), b.data(), c ? bad_scale : scale::none); });
       }},
      {"fft1d forward_init among fft3d forward_init", mismatch,
       [&](bool c) {
         return from_cpp(
             [&] { auto q = c ? one.forward_init(a.data(), b.data()) : c2c.forward_init(a.data(), b.data()); });
       }},
      {"fft1d forward among fft3d forward", mismatch,
       [&](bool c) {
         return from_cpp([&] { c ? one.forward(a.data(), b.data()) : c2c.forward(a.data(), b.data()); });
       }},
  };
  check_collective(cases);
  // After every refused call both plans still compute: their values against serial FFTW.
  EXPECT_LT(toru::test::forward_error_against_serial(c2c, {n0, n1, n2}, MPI_COMM_WORLD),
            toru::test::tolerance<double>(n0 * n1 * n2));
  std::vector<cpx> x(static_cast<std::size_t>(n1d));
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = toru::test::cnoise(i, 3);
  const auto want = toru::test::serial_dft1(x, FFTW_BACKWARD);
  std::fill(a.begin(), a.end(), cpx{});
  // backward() takes the forward's natural-order output: rank-local [out_start, out_start + out_count).
  for (std::int64_t i = 0; i < one.out_count(); ++i) a[static_cast<std::size_t>(i)] = x[one.out_start() + i];
  one.backward(a.data(), b.data());
  toru::test::error_norm e;
  for (std::int64_t i = 0; i < one.in_count(); ++i) e.add(b[static_cast<std::size_t>(i)], want[one.in_start() + i]);
  EXPECT_LT(e.rel(), toru::test::tolerance<double>(n1d));
}

// ---- Out of memory: the byte count in the message is the real one, never wrapped ----

TEST(CollectiveErrors, OutOfMemoryMessages) {
  watchdog dog("out-of-memory plans");
  // (2^31-1)^2 points: every rank would need more than 2^64 bytes (P <= 4).
  const long long huge = 2147483647LL * 2147483647LL;
  toru_fft_plan p = nullptr;
  outcome o = from_c(toru_fft_plan_create_1d(MPI_COMM_WORLD, huge, nullptr, &p));
  EXPECT_EQ(o.code, TORU_ERROR_OUT_OF_MEMORY) << o.message;
  EXPECT_NE(o.message.find("exceed the 64-bit address space"), std::string::npos) << o.message;
  EXPECT_EQ(o.message.find(" -"), std::string::npos) << "a negative (wrapped) count: " << o.message;
  // 2^56 points: two regions of 2^60 / P bytes, beyond even a 57-bit address space (P <= 8) but
  // representable, so the allocation itself fails and its message must carry the exact count.
  const long long big = 1LL << 56;
  o = from_c(toru_fft_plan_create_1d(MPI_COMM_WORLD, big, nullptr, &p));
  EXPECT_EQ(o.code, TORU_ERROR_OUT_OF_MEMORY) << o.message;
  // Rank 0 (the lowest failing rank) reports its own two work regions of max(alloc, n1, n2) elements.
  const auto lay = toru::fft::local_size_1d(toru::test::nranks(), 0, big);
  const long long region = (std::max({lay.alloc, lay.n1, lay.n2}) * 16 + 63) / 64 * 64;
  EXPECT_NE(o.message.find(std::to_string(2 * region) + " bytes"), std::string::npos) << o.message;
  EXPECT_EQ(p, nullptr);
}

}  // namespace
