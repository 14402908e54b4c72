// SPDX-License-Identifier: BSD-3-Clause
// The fft part of the C interface (toru/fft.h): result codes instead of exceptions, opaque plans.
#include <array>
#include <cstddef>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <variant>

#include <fmt/format.h>

#include "common.hpp"
#include "toru/core/agreement.hpp"
#include "toru/core/error.hpp"
#include "toru/core/mpi.hpp"
#include "toru/detail/c_guard.hpp"
#include "toru/detail/c_request.hpp"
#include "toru/detail/split_phase.hpp"
#include "toru/fft.h"
#include "toru/fft/fft1d.hpp"
#include "toru/fft/fft3d.hpp"
#include "toru/fft/fft3d_batch.hpp"
#include "toru/fft/fft3d_mixed.hpp"
#include "toru/fft/fft3d_r2r.hpp"
#include "toru/fft/reshape3d.hpp"

using namespace toru::fft;

struct toru_fft_plan_s {
  std::variant<fft3d<double>, fft3d<float>, fft3d_r2c<double>, fft3d_r2c<float>, fft1d<double>, fft1d<float>> plan;
  std::unique_ptr<toru::detail::split_phase> phase{};  // toru_fft_plan_start/_wait; after plan: joins first
};

namespace {

toru_fft_options defaults() { return TORU_FFT_OPTIONS_INIT; }

// The caller's options over the defaults. A caller compiled against an older toru/fft.h passes a
// shorter struct (its size says how long): only that prefix is read, the fields it does not know
// keep their defaults. Throws for a size no header ever wrote (0: the struct was never initialised).
toru_fft_options read_options(const toru_fft_options* in) {
  toru_fft_options o = defaults();
  if (!in) return o;
  const std::size_t known = offsetof(toru_fft_options, precision) + sizeof in->precision;
  toru::expect(
      in->size >= known && in->size <= sizeof o, "options->size",
      fmt::format("between {} and {} (set by TORU_FFT_OPTIONS_INIT or toru_fft_options_init)", known, sizeof o),
      std::to_string(in->size));
  std::memcpy(&o, in, in->size);
  o.size = sizeof o;
  return o;
}

using toru::detail::raw_enum;
bool valid_precision(int p) { return p == TORU_FFT_DOUBLE || p == TORU_FFT_FLOAT; }
bool valid_decomposition(int d) { return d >= TORU_FFT_DECOMPOSITION_AUTO && d <= TORU_FFT_DECOMPOSITION_PENCIL; }
bool valid_rows(int r) { return r == TORU_FFT_ROWS_PADDED || r == TORU_FFT_ROWS_PACKED; }

// This rank's checks of what only C can get wrong (a NULL out-pointer, an enum outside its range).
// They are not thrown here: they ride on the agreement of the C++ call that follows (see
// toru::defer_error), so every rank fails alike and no collective is added.
template <class F>
std::exception_ptr c_checks(F&& f) {
  try {
    f();
  } catch (...) {
    return std::current_exception();
  }
  return nullptr;
}

void check_options(const toru_fft_options& o, bool three_d) {
  toru::expect(valid_precision(raw_enum(o.precision)), "options->precision", "TORU_FFT_DOUBLE or TORU_FFT_FLOAT",
               std::to_string(raw_enum(o.precision)));
  if (three_d)
    toru::expect(valid_decomposition(raw_enum(o.decomposition)), "options->decomposition",
                 "a toru_fft_decomposition value", std::to_string(raw_enum(o.decomposition)));
  if (three_d)
    toru::expect(valid_rows(raw_enum(o.rows)), "options->rows", "TORU_FFT_ROWS_PADDED or TORU_FFT_ROWS_PACKED",
                 std::to_string(raw_enum(o.rows)));
}

// Never throws: invalid enums map to defaults, their error is deferred (above).
toru::comm::communicator_options convert_comm(const toru_fft_options& o) {
  toru::comm::communicator_options c;
  if (o.torus) c.torus = o.torus;
  if (o.order) c.order = o.order;
  return c;
}

options3d convert3d(const toru_fft_options& o) {
  return {.decomp = valid_decomposition(raw_enum(o.decomposition))
                        ? static_cast<decomposition>(raw_enum(o.decomposition))
                        : decomposition::automatic,
          .grid = {o.grid[0], o.grid[1]},
          .output = o.transposed_out ? order::transposed : order::natural,
          .planner = o.measure ? effort::measure : effort::estimate,
          .overlap = o.overlap != 0,
          .chunks = o.chunks,
          .rows = raw_enum(o.rows) == TORU_FFT_ROWS_PACKED ? real_rows::packed : real_rows::padded,
          .comm = convert_comm(o)};
}

options1d convert1d(const toru_fft_options& o) {
  return {.n1 = o.n1,
          .output = o.transposed_out ? order::transposed : order::natural,
          .planner = o.measure ? effort::measure : effort::estimate,
          .overlap = o.overlap != 0,
          .chunks = o.chunks,
          .comm = convert_comm(o)};
}

// Collective: C checks and C++ construction fail together on every rank (one agreement).
template <class Make>
toru_result create(MPI_Comm comm, const toru_fft_options* options, bool three_d, toru_fft_plan* plan,
                   Make&& make) noexcept {
  if (plan) *plan = nullptr;
  return toru::detail::c_guarded([&] {
    toru::expect_intracommunicator(comm, "comm");
    toru_fft_options o = defaults();  // stays so when this rank's options are refused (deferred below)
    const toru::defer_error checks(c_checks([&] {
      toru::expect(plan != nullptr, "plan", "a pointer to a toru_fft_plan", "NULL");
      o = read_options(options);
      check_options(o, three_d);
    }));
    std::unique_ptr<toru_fft_plan_s> p(make(o, raw_enum(o.precision) == TORU_FFT_FLOAT));
    *plan = p.release();
  });
}

toru_result plan3d(MPI_Comm comm, long long n0, long long n1, long long n2, const toru_fft_options* options,
                   toru_fft_plan* plan, bool r2c) {
  return create(comm, options, true, plan, [&](const toru_fft_options& o, bool single) -> toru_fft_plan {
    const options3d opts = convert3d(o);
    const std::array<std::int64_t, 3> n{n0, n1, n2};
    if (!single)
      return r2c ? new toru_fft_plan_s{fft3d_r2c<double>(comm, n, opts)}
                 : new toru_fft_plan_s{fft3d<double>(comm, n, opts)};
    return r2c ? new toru_fft_plan_s{fft3d_r2c<float>(comm, n, opts)}
               : new toru_fft_plan_s{fft3d<float>(comm, n, opts)};
  });
}

toru_result plan1d(MPI_Comm comm, long long n, const toru_fft_options* options, toru_fft_plan* plan) {
  return create(comm, options, false, plan, [&](const toru_fft_options& o, bool single) -> toru_fft_plan {
    if (!single) return new toru_fft_plan_s{fft1d<double>(comm, n, convert1d(o))};
    return new toru_fft_plan_s{fft1d<float>(comm, n, convert1d(o))};
  });
}

void to_c(const box3d& b, toru_fft_box* out) {
  if (!out) return;
  for (int a = 0; a < 3; ++a) {
    out->low[a] = b.low[a];
    out->size[a] = b.size[a];
    out->order[a] = b.order[a];
  }
  out->row_stride = b.row_stride;
}

// The header's memory rule with order {0, 1, 2}: rows run along axis 2, whose length is 1, so
// consecutive indices of axis 0 are row_stride = 1 element apart.
void to_c_1d(std::int64_t start, std::int64_t count, toru_fft_box* out) {
  if (!out) return;
  *out = toru_fft_box{{start, 0, 0}, {count, 1, 1}, {0, 1, 2}, 1};
}

template <class F>
toru_result with_plan(toru_fft_plan plan, F&& f) noexcept {
  if (!plan) {
    // A NULL plan has no communicator: nobody else can be told, so (like MPI_COMM_NULL for a plan
    // call) it fails on this rank alone; toru.h says so.
    toru::detail::set_last_error(
        "plan: expected a plan from toru_fft_plan_create_*, got NULL (a NULL plan has no communicator to report this "
        "to "
        "the other ranks: in a collective call they are left waiting, so treat this error as fatal)");
    return TORU_ERROR_INVALID_ARGUMENT;
  }
  return toru::detail::c_guarded([&] { std::visit(f, plan->plan); });
}

template <class P>
constexpr bool is_1d = std::is_same_v<P, fft1d<double>> || std::is_same_v<P, fft1d<float>>;

template <class P, class In, class Out>
void run(const P& p, toru_fft_direction direction, scale s, const void* in, void* out, void* ws) {
  if (direction == TORU_FFT_FORWARD)
    p.forward(static_cast<const In*>(in), static_cast<Out*>(out), ws, s);
  else
    p.backward(static_cast<const Out*>(in), static_cast<In*>(out), ws, s);
}

void expect_direction(int dir) {
  toru::expect(dir == TORU_FFT_FORWARD || dir == TORU_FFT_BACKWARD, "direction",
               "TORU_FFT_FORWARD or TORU_FFT_BACKWARD", std::to_string(dir));
}

// What only a C caller of the *_init calls can get wrong, checked before the init's agreement.
void expect_init_args(int dir, const toru_request* request) {
  expect_direction(dir);
  toru::expect(request != nullptr, "request", "a pointer to a toru_request", "NULL");
}

// The C++ call behind toru_fft_plan_execute and toru_fft_plan_start (on the calling thread, or on
// the start's own): a bad direction rides on the call's agreement, on that thread.
// dir and sc are the enums' raw values: a C caller's out-of-range enum is no valid toru_fft_scale to load.
void execute_cpp(const toru_fft_plan_s& plan, int dir, int sc, const void* in, void* out, void* ws) {
  std::visit(
      [&](const auto& p) {
        const toru::defer_error checks(c_checks([&] { expect_direction(dir); }));
        using P = std::decay_t<decltype(p)>;
        using cpx = typename P::complex_type;
        using real = typename cpx::value_type;
        // An out-of-range scale reaches the C++ call, whose agreement refuses it on every rank.
        const auto s = static_cast<scale>(sc);
        const toru_fft_direction d = dir == TORU_FFT_BACKWARD ? TORU_FFT_BACKWARD : TORU_FFT_FORWARD;
        if constexpr (std::is_same_v<P, fft3d_r2c<real>>)
          run<P, real, cpx>(p, d, s, in, out, ws);
        else
          run<P, cpx, cpx>(p, d, s, in, out, ws);
      },
      plan.plan);
}

toru_result execute(toru_fft_plan plan, toru_fft_direction direction, toru_fft_scale sc, const void* in, void* out,
                    void* ws) {
  const int dir = raw_enum(direction);
  const int scale = raw_enum(sc);
  return with_plan(plan, [&](const auto&) { execute_cpp(*plan, dir, scale, in, out, ws); });
}

}  // namespace

namespace {
// What an r2r-family plan's buffers hold: `in` forward's input (backward's output), `out` forward's
// output: reals, complex values for the mixed plans, reals in and complex out for mixed_r2c.
template <class P>
struct r2r_data {
  using in = typename P::real_type;
  using out = in;
};
template <toru::fft::precision T>
struct r2r_data<fft3d_mixed<T>> {
  using in = std::complex<T>;
  using out = in;
};
template <toru::fft::precision T>
struct r2r_data<toru::fft::fft3d_mixed_r2c<T>> {
  using in = T;
  using out = std::complex<T>;
};

// local_size of a plan held in a variant (the r2r and batch families): its boxes and allocation.
template <class Plan>
toru_result variant_local_size(const Plan* plan, const char* expected, toru_fft_box* in, toru_fft_box* out,
                               long long* alloc) {
  return toru::detail::c_guarded([&] {
    toru::expect(plan != nullptr, "plan", expected, "NULL");
    std::visit(
        [&](const auto& p) {
          to_c(p.inbox(), in);
          to_c(p.outbox(), out);
          if (alloc) *alloc = p.alloc_size();
        },
        plan->plan);
  });
}

// execute of a plan held in a variant: run(p, forward, scale) with a bad direction deferred to the
// C++ call's agreement, as toru_fft_plan_execute does.
template <class Plan, class Run>
toru_result variant_execute(const Plan* plan, const char* expected, toru_fft_direction direction, toru_fft_scale scale,
                            Run&& run) {
  const int dir = raw_enum(direction);
  const auto s = static_cast<toru::fft::scale>(raw_enum(scale));
  return toru::detail::c_guarded([&] {
    toru::expect(plan != nullptr, "plan", expected, "NULL");
    std::visit(
        [&](const auto& p) {
          const toru::defer_error checks(c_checks([&] { expect_direction(dir); }));
          run(p, dir != TORU_FFT_BACKWARD, s);
        },
        plan->plan);
  });
}

// init of a plan held in a variant, as toru_fft_plan_init: bind(p, forward, scale) makes the C++
// request; a bad direction or a NULL request pointer rides on its agreement, so every rank fails
// alike, and *request is written only on success.
template <class Plan, class Bind>
toru_result variant_init(const Plan* plan, const char* expected, toru_fft_direction direction, toru_fft_scale scale,
                         toru_request* request, Bind&& bind) {
  const int dir = raw_enum(direction);
  const auto s = static_cast<toru::fft::scale>(raw_enum(scale));
  return toru::detail::c_guarded([&] {
    toru::expect(plan != nullptr, "plan", expected, "NULL");
    std::visit(
        [&](const auto& p) {
          const toru::defer_error checks(c_checks([&] { expect_init_args(dir, request); }));
          toru::request r = bind(p, dir != TORU_FFT_BACKWARD, s);
          *request = new toru_request_s{std::move(r)};
        },
        plan->plan);
  });
}

// The element types of a batched plan's buffers: in_type for the forward input and the backward
// output (reals for an r2c plan, else complex), complex_type for the other side.
template <class P>
struct batch_data {
  using complex_type = typename P::complex_type;
  using real = typename complex_type::value_type;
  using in_type = std::conditional_t<std::is_same_v<P, toru::fft::fft3d_batch_r2c<real>>, real, complex_type>;
};
}  // namespace

extern "C" {

toru_fft_options toru_fft_options_default(void) { return defaults(); }

toru_result toru_fft_options_init(toru_fft_options* options) {
  return toru::detail::c_guarded([&] {
    toru::expect(options != nullptr, "options", "a pointer to a toru_fft_options", "NULL");
    *options = defaults();
  });
}

toru_result toru_fft_plan_create_3d(MPI_Comm comm, long long n0, long long n1, long long n2,
                                    const toru_fft_options* options, toru_fft_plan* plan) {
  return plan3d(comm, n0, n1, n2, options, plan, false);
}
toru_result toru_fft_plan_create_r2c_3d(MPI_Comm comm, long long n0, long long n1, long long n2,
                                        const toru_fft_options* options, toru_fft_plan* plan) {
  return plan3d(comm, n0, n1, n2, options, plan, true);
}
toru_result toru_fft_plan_create_1d(MPI_Comm comm, long long n, const toru_fft_options* options, toru_fft_plan* plan) {
  return plan1d(comm, n, options, plan);
}
toru_result toru_fft_plan_create_3d_f(MPI_Fint comm, long long n0, long long n1, long long n2,
                                      const toru_fft_options* options, toru_fft_plan* plan) {
  return plan3d(MPI_Comm_f2c(comm), n0, n1, n2, options, plan, false);
}
toru_result toru_fft_plan_create_r2c_3d_f(MPI_Fint comm, long long n0, long long n1, long long n2,
                                          const toru_fft_options* options, toru_fft_plan* plan) {
  return plan3d(MPI_Comm_f2c(comm), n0, n1, n2, options, plan, true);
}
toru_result toru_fft_plan_create_1d_f(MPI_Fint comm, long long n, const toru_fft_options* options,
                                      toru_fft_plan* plan) {
  return plan1d(MPI_Comm_f2c(comm), n, options, plan);
}

toru_result toru_fft_local_size_3d_f(MPI_Fint comm, long long n0, long long n1, long long n2, int r2c,
                                     const toru_fft_options* options, toru_fft_box* in, toru_fft_box* out,
                                     long long* alloc) {
  return toru_fft_local_size_3d(MPI_Comm_f2c(comm), n0, n1, n2, r2c, options, in, out, alloc);
}

toru_result toru_fft_plan_local_size(toru_fft_plan plan, toru_fft_box* in, toru_fft_box* out, long long* alloc) {
  return with_plan(plan, [&](const auto& p) {
    using P = std::decay_t<decltype(p)>;
    if constexpr (is_1d<P>) {
      to_c_1d(p.in_start(), p.in_count(), in);
      to_c_1d(p.out_start(), p.out_count(), out);
    } else {
      to_c(p.inbox(), in);
      to_c(p.outbox(), out);
    }
    if (alloc) *alloc = p.alloc_size();
  });
}

toru_result toru_fft_local_size_3d(MPI_Comm comm, long long n0, long long n1, long long n2, int r2c,
                                   const toru_fft_options* options, toru_fft_box* in, toru_fft_box* out,
                                   long long* alloc) {
  return toru::detail::c_guarded([&] {
    const toru_fft_options o = read_options(options);
    toru::expect_intracommunicator(comm, "comm");
    check_options(o, true);
    int size = 0, rank = 0;
    toru::check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
    toru::check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
    const local_layout lay = local_size_3d(size, rank, {n0, n1, n2}, convert3d(o), r2c != 0);
    to_c(lay.in, in);
    to_c(lay.out, out);
    // As fft3d_r2c's use_packed_rows: the same real box, its rows unpadded (alloc, sized for the
    // padded rows, stays enough).
    if (r2c && in && raw_enum(o.rows) == TORU_FFT_ROWS_PACKED) in->row_stride = in->size[in->order[2]];
    if (alloc) *alloc = lay.alloc;
  });
}

toru_result toru_fft_plan_factors_1d(toru_fft_plan plan, long long* n1, long long* n2) {
  return with_plan(plan, [&](const auto& p) {
    using P = std::decay_t<decltype(p)>;
    if constexpr (is_1d<P>) {
      if (n1) *n1 = p.n1();
      if (n2) *n2 = p.n2();
    } else {
      throw toru::error(toru::errc::invalid_argument,
                        "plan: expected a plan from toru_fft_plan_create_1d, got a 3D plan");
    }
  });
}

toru_result toru_fft_plan_workspace_size(toru_fft_plan plan, size_t* bytes) {
  return with_plan(plan, [&](const auto& p) {
    toru::expect(bytes != nullptr, "bytes", "a pointer", "NULL");
    *bytes = p.workspace_size();
  });
}

toru_result toru_fft_plan_shared_out(toru_fft_plan plan, void** buffer) {
  return with_plan(plan, [&](auto& p) {
    using P = std::decay_t<decltype(p)>;
    if constexpr (is_1d<P>) {
      throw toru::error(toru::errc::invalid_argument, "plan: toru_fft_plan_shared_out takes a 3D plan, got a 1D one");
    } else {
      void* got = p.shared_out();  // collective: on every rank before a local error
      toru::expect(buffer != nullptr, "buffer", "a pointer", "NULL");
      *buffer = got;
    }
  });
}

toru_result toru_fft_plan_execute(toru_fft_plan plan, toru_fft_direction direction, toru_fft_scale scale,
                                  const void* in, void* out) {
  return execute(plan, direction, scale, in, out, nullptr);
}
toru_result toru_fft_plan_execute_ws(toru_fft_plan plan, toru_fft_direction direction, toru_fft_scale scale,
                                     const void* in, void* out, void* ws) {
  return execute(plan, direction, scale, in, out, ws);
}

toru_result toru_fft_plan_start(toru_fft_plan plan, toru_fft_direction direction, toru_fft_scale scale, const void* in,
                                void* out) {
  const int dir = raw_enum(direction);
  const int sc = raw_enum(scale);
  return with_plan(plan, [&](const auto&) {
    toru::detail::start_split_phase(plan->phase, "toru_fft_plan_start",
                                    [plan, dir, sc, in, out] { execute_cpp(*plan, dir, sc, in, out, nullptr); });
  });
}

toru_result toru_fft_plan_wait(toru_fft_plan plan) {
  return with_plan(plan, [&](const auto&) { toru::detail::wait_split_phase(plan->phase, "toru_fft_plan_wait"); });
}

toru_result toru_fft_plan_init(toru_fft_plan plan, toru_fft_direction direction, toru_fft_scale scale, const void* in,
                               void* out, toru_request* request) {
  const int dir = raw_enum(direction);
  const int sc = raw_enum(scale);
  return with_plan(plan, [&](const auto& p) {
    // Ride on the init's agreement: every rank returns the same error.
    const toru::defer_error checks(c_checks([&] { expect_init_args(dir, request); }));
    using P = std::decay_t<decltype(p)>;
    using cpx = typename P::complex_type;
    using real = typename cpx::value_type;
    using In = std::conditional_t<std::is_same_v<P, fft3d_r2c<real>>, real, cpx>;
    const auto s = static_cast<toru::fft::scale>(sc);
    toru::request r = dir == TORU_FFT_BACKWARD ? p.backward_init(static_cast<const cpx*>(in), static_cast<In*>(out), s)
                                               : p.forward_init(static_cast<const In*>(in), static_cast<cpx*>(out), s);
    *request = new toru_request_s{std::move(r)};
  });
}

toru_result toru_fft_plan_destroy(toru_fft_plan plan) {
  delete plan;
  return TORU_SUCCESS;
}

struct toru_fft_reshape_s {
  std::variant<reshape3d<double>, reshape3d<float>, reshape3d<std::complex<double>>, reshape3d<std::complex<float>>> r;
};

namespace {
box3d from_c(const toru_fft_box& b) {
  box3d r;
  for (int a = 0; a < 3; ++a) {
    r.low[a] = b.low[a];
    r.size[a] = b.size[a];
    r.order[a] = b.order[a];
  }
  r.row_stride = b.row_stride;
  return r;
}
}  // namespace

toru_result toru_fft_plan_create_boxes_3d(MPI_Comm comm, long long n0, long long n1, long long n2, int r2c,
                                          const toru_fft_box* in, const toru_fft_box* out,
                                          const toru_fft_options* options, toru_fft_plan* plan) {
  if (plan) *plan = nullptr;
  return toru::detail::c_guarded([&] {
    toru::expect_intracommunicator(comm, "comm");
    toru_fft_options o = defaults();
    box3d bi, bo;  // empty where this rank's arguments are refused (the error rides on the agreement)
    const toru::defer_error checks(c_checks([&] {
      toru::expect(plan != nullptr, "plan", "a pointer to a toru_fft_plan", "NULL");
      toru::expect(in != nullptr, "in", "a toru_fft_box", "NULL");
      toru::expect(out != nullptr, "out", "a toru_fft_box", "NULL");
      o = read_options(options);
      check_options(o, true);
      bi = from_c(*in);
      bo = from_c(*out);
    }));
    const options3d opts = convert3d(o);
    const std::array<std::int64_t, 3> n{n0, n1, n2};
    std::unique_ptr<toru_fft_plan_s> p;
    if (raw_enum(o.precision) == TORU_FFT_FLOAT)
      p.reset(r2c ? new toru_fft_plan_s{fft3d_r2c<float>(comm, n, bi, bo, opts)}
                  : new toru_fft_plan_s{fft3d<float>(comm, n, bi, bo, opts)});
    else
      p.reset(r2c ? new toru_fft_plan_s{fft3d_r2c<double>(comm, n, bi, bo, opts)}
                  : new toru_fft_plan_s{fft3d<double>(comm, n, bi, bo, opts)});
    *plan = p.release();
  });
}

toru_result toru_fft_plan_create_boxes_3d_f(MPI_Fint comm, long long n0, long long n1, long long n2, int r2c,
                                            const toru_fft_box* in, const toru_fft_box* out,
                                            const toru_fft_options* options, toru_fft_plan* plan) {
  return toru_fft_plan_create_boxes_3d(MPI_Comm_f2c(comm), n0, n1, n2, r2c, in, out, options, plan);
}

struct toru_fft_r2r_plan_s {
  std::variant<fft3d_r2r<double>, fft3d_r2r<float>, fft3d_mixed<double>, fft3d_mixed<float>,
               toru::fft::fft3d_mixed_r2c<double>, toru::fft::fft3d_mixed_r2c<float>>
      plan;
};

namespace {
enum class r2r_family { r2r, mixed, mixed_r2c };

// The r2r and mixed plans' creation: the mixed ones admit TORU_FFT_PERIODIC (the C++ agreement
// names an out-of-range kind on every rank).
toru_result create_r2r(MPI_Comm comm, long long n0, long long n1, long long n2, const toru_fft_r2r_kind kinds[3],
                       const toru_fft_options* options, toru_fft_r2r_plan* plan, r2r_family family) {
  const bool mixed = family != r2r_family::r2r;
  if (plan) *plan = nullptr;
  return toru::detail::c_guarded([&] {
    toru::expect_intracommunicator(comm, "comm");
    toru_fft_options o = defaults();
    std::array<toru::fft::axis_transform, 3> k{r2r_kind::dct2, r2r_kind::dct2, r2r_kind::dct2};
    const toru::defer_error checks(c_checks([&] {
      toru::expect(plan != nullptr, "plan", "a pointer to a toru_fft_r2r_plan", "NULL");
      toru::expect(kinds != nullptr, "kinds", "three toru_fft_r2r_kind values", "NULL");
      o = read_options(options);
      check_options(o, true);
      for (int a = 0; a < 3; ++a) {
        const int v = raw_enum(kinds[a]);
        if (mixed && v == TORU_FFT_PERIODIC)
          k[a] = toru::fft::periodic;
        else
          k[a] = static_cast<r2r_kind>(v);
      }
    }));
    const options3d opts = convert3d(o);
    const std::array<std::int64_t, 3> n{n0, n1, n2};
    const bool single = raw_enum(o.precision) == TORU_FFT_FLOAT;
    std::unique_ptr<toru_fft_r2r_plan_s> p;
    if (family == r2r_family::mixed_r2c)
      p.reset(single ? new toru_fft_r2r_plan_s{toru::fft::fft3d_mixed_r2c<float>(comm, n, k, opts)}
                     : new toru_fft_r2r_plan_s{toru::fft::fft3d_mixed_r2c<double>(comm, n, k, opts)});
    else if (mixed)
      p.reset(single ? new toru_fft_r2r_plan_s{fft3d_mixed<float>(comm, n, k, opts)}
                     : new toru_fft_r2r_plan_s{fft3d_mixed<double>(comm, n, k, opts)});
    else {
      const std::array<r2r_kind, 3> r{*k[0], *k[1], *k[2]};  // TORU_FFT_PERIODIC: out of range, named by the plan
      p.reset(single ? new toru_fft_r2r_plan_s{fft3d_r2r<float>(comm, n, r, opts)}
                     : new toru_fft_r2r_plan_s{fft3d_r2r<double>(comm, n, r, opts)});
    }
    *plan = p.release();
  });
}
}  // namespace

toru_result toru_fft_r2r_plan_create_3d(MPI_Comm comm, long long n0, long long n1, long long n2,
                                        const toru_fft_r2r_kind kinds[3], const toru_fft_options* options,
                                        toru_fft_r2r_plan* plan) {
  return create_r2r(comm, n0, n1, n2, kinds, options, plan, r2r_family::r2r);
}

toru_result toru_fft_r2r_plan_create_3d_f(MPI_Fint comm, long long n0, long long n1, long long n2,
                                          const toru_fft_r2r_kind kinds[3], const toru_fft_options* options,
                                          toru_fft_r2r_plan* plan) {
  return toru_fft_r2r_plan_create_3d(MPI_Comm_f2c(comm), n0, n1, n2, kinds, options, plan);
}

toru_result toru_fft_r2r_plan_create_mixed_3d(MPI_Comm comm, long long n0, long long n1, long long n2,
                                              const toru_fft_r2r_kind kinds[3], const toru_fft_options* options,
                                              toru_fft_r2r_plan* plan) {
  return create_r2r(comm, n0, n1, n2, kinds, options, plan, r2r_family::mixed);
}

toru_result toru_fft_r2r_plan_create_mixed_3d_f(MPI_Fint comm, long long n0, long long n1, long long n2,
                                                const toru_fft_r2r_kind kinds[3], const toru_fft_options* options,
                                                toru_fft_r2r_plan* plan) {
  return toru_fft_r2r_plan_create_mixed_3d(MPI_Comm_f2c(comm), n0, n1, n2, kinds, options, plan);
}

toru_result toru_fft_r2r_plan_create_mixed_r2c_3d(MPI_Comm comm, long long n0, long long n1, long long n2,
                                                  const toru_fft_r2r_kind kinds[3], const toru_fft_options* options,
                                                  toru_fft_r2r_plan* plan) {
  return create_r2r(comm, n0, n1, n2, kinds, options, plan, r2r_family::mixed_r2c);
}

toru_result toru_fft_r2r_plan_create_mixed_r2c_3d_f(MPI_Fint comm, long long n0, long long n1, long long n2,
                                                    const toru_fft_r2r_kind kinds[3], const toru_fft_options* options,
                                                    toru_fft_r2r_plan* plan) {
  return toru_fft_r2r_plan_create_mixed_r2c_3d(MPI_Comm_f2c(comm), n0, n1, n2, kinds, options, plan);
}

toru_result toru_fft_r2r_plan_local_size(toru_fft_r2r_plan plan, toru_fft_box* in, toru_fft_box* out,
                                         long long* alloc) {
  return variant_local_size(plan, "a plan from toru_fft_r2r_plan_create_3d", in, out, alloc);
}

toru_result toru_fft_r2r_plan_execute(toru_fft_r2r_plan plan, toru_fft_direction direction, toru_fft_scale scale,
                                      const void* in, void* out) {
  return variant_execute(plan, "a plan from toru_fft_r2r_plan_create_3d", direction, scale,
                         [&](const auto& p, bool forward, toru::fft::scale s) {
                           using D = r2r_data<std::decay_t<decltype(p)>>;
                           if (forward)
                             p.forward(static_cast<const typename D::in*>(in), static_cast<typename D::out*>(out), s);
                           else
                             p.backward(static_cast<const typename D::out*>(in), static_cast<typename D::in*>(out), s);
                         });
}

toru_result toru_fft_r2r_plan_init(toru_fft_r2r_plan plan, toru_fft_direction direction, toru_fft_scale scale,
                                   const void* in, void* out, toru_request* request) {
  return variant_init(plan, "a plan from toru_fft_r2r_plan_create_3d", direction, scale, request,
                      [&](const auto& p, bool forward, toru::fft::scale s) {
                        using D = r2r_data<std::decay_t<decltype(p)>>;
                        using In = typename D::in;
                        using Out = typename D::out;
                        return forward ? p.forward_init(static_cast<const In*>(in), static_cast<Out*>(out), s)
                                       : p.backward_init(static_cast<const Out*>(in), static_cast<In*>(out), s);
                      });
}

toru_result toru_fft_r2r_plan_destroy(toru_fft_r2r_plan plan) {
  delete plan;
  return TORU_SUCCESS;
}

struct toru_fft_batch_plan_s {
  std::variant<toru::fft::fft3d_batch<double>, toru::fft::fft3d_batch<float>, toru::fft::fft3d_batch_r2c<double>,
               toru::fft::fft3d_batch_r2c<float>>
      plan;
};

toru_result toru_fft_batch_plan_create_3d(MPI_Comm comm, long long n0, long long n1, long long n2, int r2c, int howmany,
                                          toru_fft_fields layout, const toru_fft_options* options,
                                          toru_fft_batch_plan* plan) {
  if (plan) *plan = nullptr;
  return toru::detail::c_guarded([&] {
    toru::expect_intracommunicator(comm, "comm");
    toru_fft_options o = defaults();
    const toru::defer_error checks(c_checks([&] {
      toru::expect(plan != nullptr, "plan", "a pointer to a toru_fft_batch_plan", "NULL");
      o = read_options(options);
      check_options(o, true);
    }));
    // howmany, layout, r2c (the transform kind) and the precision are agreed by the plan itself.
    const options3d opts = convert3d(o);
    const std::array<std::int64_t, 3> n{n0, n1, n2};
    const auto f = static_cast<toru::fft::fields>(raw_enum(layout));
    const bool single = raw_enum(o.precision) == TORU_FFT_FLOAT;
    std::unique_ptr<toru_fft_batch_plan_s> p;
    if (r2c)
      p.reset(single ? new toru_fft_batch_plan_s{toru::fft::fft3d_batch_r2c<float>(comm, n, howmany, f, opts)}
                     : new toru_fft_batch_plan_s{toru::fft::fft3d_batch_r2c<double>(comm, n, howmany, f, opts)});
    else
      p.reset(single ? new toru_fft_batch_plan_s{toru::fft::fft3d_batch<float>(comm, n, howmany, f, opts)}
                     : new toru_fft_batch_plan_s{toru::fft::fft3d_batch<double>(comm, n, howmany, f, opts)});
    *plan = p.release();
  });
}

toru_result toru_fft_batch_plan_create_3d_f(MPI_Fint comm, long long n0, long long n1, long long n2, int r2c,
                                            int howmany, toru_fft_fields layout, const toru_fft_options* options,
                                            toru_fft_batch_plan* plan) {
  return toru_fft_batch_plan_create_3d(MPI_Comm_f2c(comm), n0, n1, n2, r2c, howmany, layout, options, plan);
}

toru_result toru_fft_batch_plan_local_size(toru_fft_batch_plan plan, toru_fft_box* in, toru_fft_box* out,
                                           long long* alloc) {
  return variant_local_size(plan, "a plan from toru_fft_batch_plan_create_3d", in, out, alloc);
}

toru_result toru_fft_batch_plan_execute(toru_fft_batch_plan plan, toru_fft_direction direction, toru_fft_scale scale,
                                        const void* in, void* out) {
  return variant_execute(plan, "a plan from toru_fft_batch_plan_create_3d", direction, scale,
                         [&](const auto& p, bool forward, toru::fft::scale s) {
                           using D = batch_data<std::decay_t<decltype(p)>>;
                           using C = typename D::complex_type;
                           using I = typename D::in_type;
                           if (forward)
                             p.forward(static_cast<const I*>(in), static_cast<C*>(out), s);
                           else
                             p.backward(static_cast<const C*>(in), static_cast<I*>(out), s);
                         });
}

toru_result toru_fft_batch_plan_init(toru_fft_batch_plan plan, toru_fft_direction direction, toru_fft_scale scale,
                                     const void* in, void* out, toru_request* request) {
  return variant_init(plan, "a plan from toru_fft_batch_plan_create_3d", direction, scale, request,
                      [&](const auto& p, bool forward, toru::fft::scale s) {
                        using D = batch_data<std::decay_t<decltype(p)>>;
                        using C = typename D::complex_type;
                        using I = typename D::in_type;
                        return forward ? p.forward_init(static_cast<const I*>(in), static_cast<C*>(out), s)
                                       : p.backward_init(static_cast<const C*>(in), static_cast<I*>(out), s);
                      });
}

toru_result toru_fft_batch_plan_destroy(toru_fft_batch_plan plan) {
  delete plan;
  return TORU_SUCCESS;
}

toru_result toru_fft_reshape_create(MPI_Comm comm, long long n0, long long n1, long long n2, const toru_fft_box* in,
                                    const toru_fft_box* out, toru_fft_element element, toru_fft_reshape* reshape) {
  if (reshape) *reshape = nullptr;
  return toru::detail::c_guarded([&] {
    toru::expect_intracommunicator(comm, "comm");
    box3d bi, bo;  // empty boxes where this rank's are refused (the error is deferred to the agreement)
    const int e = raw_enum(element);
    const toru::defer_error checks(c_checks([&] {
      toru::expect(reshape != nullptr, "reshape", "a pointer to a toru_fft_reshape", "NULL");
      toru::expect(in != nullptr, "in", "a toru_fft_box", "NULL");
      toru::expect(out != nullptr, "out", "a toru_fft_box", "NULL");
      toru::expect(e >= TORU_FFT_ELEMENT_DOUBLE && e <= TORU_FFT_ELEMENT_COMPLEX_FLOAT, "element",
                   "a toru_fft_element value", std::to_string(e));
      bi = from_c(*in);
      bo = from_c(*out);
    }));
    const std::array<std::int64_t, 3> n{n0, n1, n2};
    std::unique_ptr<toru_fft_reshape_s> r;
    switch (e) {
      case TORU_FFT_ELEMENT_FLOAT:
        r.reset(new toru_fft_reshape_s{reshape3d<float>(comm, n, bi, bo)});
        break;
      case TORU_FFT_ELEMENT_COMPLEX_DOUBLE:
        r.reset(new toru_fft_reshape_s{reshape3d<std::complex<double>>(comm, n, bi, bo)});
        break;
      case TORU_FFT_ELEMENT_COMPLEX_FLOAT:
        r.reset(new toru_fft_reshape_s{reshape3d<std::complex<float>>(comm, n, bi, bo)});
        break;
      default:  // double, and a refused element (its error is raised by the agreement)
        r.reset(new toru_fft_reshape_s{reshape3d<double>(comm, n, bi, bo)});
    }
    *reshape = r.release();
  });
}

toru_result toru_fft_reshape_create_f(MPI_Fint comm, long long n0, long long n1, long long n2, const toru_fft_box* in,
                                      const toru_fft_box* out, toru_fft_element element, toru_fft_reshape* reshape) {
  return toru_fft_reshape_create(MPI_Comm_f2c(comm), n0, n1, n2, in, out, element, reshape);
}

toru_result toru_fft_reshape_sizes(toru_fft_reshape reshape, long long* in_size, long long* out_size) {
  return toru::detail::c_guarded([&] {
    toru::expect(reshape != nullptr, "reshape", "a reshape from toru_fft_reshape_create", "NULL");
    std::visit(
        [&](const auto& r) {
          if (in_size) *in_size = r.in_size();
          if (out_size) *out_size = r.out_size();
        },
        reshape->r);
  });
}

toru_result toru_fft_reshape_execute(toru_fft_reshape reshape, const void* in, void* out) {
  return toru::detail::c_guarded([&] {
    toru::expect(reshape != nullptr, "reshape", "a reshape from toru_fft_reshape_create", "NULL");
    std::visit(
        [&](const auto& r) {
          using T = typename std::decay_t<decltype(r)>::element_type;
          r.execute(static_cast<const T*>(in), static_cast<T*>(out));
        },
        reshape->r);
  });
}

toru_result toru_fft_reshape_destroy(toru_fft_reshape reshape) {
  delete reshape;
  return TORU_SUCCESS;
}

const char* toru_fft_last_error(void) { return toru_last_error(); }

// The names of toru 0.1, kept so that old callers build and link (declared deprecated in toru/fft.h).
toru_result toru_fft_plan_3d(MPI_Comm comm, long long n0, long long n1, long long n2, const toru_fft_options* options,
                             toru_fft_plan* plan) {
  return plan3d(comm, n0, n1, n2, options, plan, false);
}
toru_result toru_fft_plan_r2c_3d(MPI_Comm comm, long long n0, long long n1, long long n2,
                                 const toru_fft_options* options, toru_fft_plan* plan) {
  return plan3d(comm, n0, n1, n2, options, plan, true);
}
toru_result toru_fft_plan_1d(MPI_Comm comm, long long n, const toru_fft_options* options, toru_fft_plan* plan) {
  return plan1d(comm, n, options, plan);
}
toru_result toru_fft_plan_3d_f(MPI_Fint comm, long long n0, long long n1, long long n2, const toru_fft_options* options,
                               toru_fft_plan* plan) {
  return plan3d(MPI_Comm_f2c(comm), n0, n1, n2, options, plan, false);
}
toru_result toru_fft_plan_r2c_3d_f(MPI_Fint comm, long long n0, long long n1, long long n2,
                                   const toru_fft_options* options, toru_fft_plan* plan) {
  return plan3d(MPI_Comm_f2c(comm), n0, n1, n2, options, plan, true);
}
toru_result toru_fft_plan_1d_f(MPI_Fint comm, long long n, const toru_fft_options* options, toru_fft_plan* plan) {
  return plan1d(MPI_Comm_f2c(comm), n, options, plan);
}
toru_result toru_fft_local_size(toru_fft_plan plan, toru_fft_box* in, toru_fft_box* out, long long* alloc) {
  return toru_fft_plan_local_size(plan, in, out, alloc);
}
toru_result toru_fft_factors_1d(toru_fft_plan plan, long long* n1, long long* n2) {
  return toru_fft_plan_factors_1d(plan, n1, n2);
}
toru_result toru_fft_workspace_size(toru_fft_plan plan, size_t* bytes) {
  return toru_fft_plan_workspace_size(plan, bytes);
}
toru_result toru_fft_execute(toru_fft_plan plan, toru_fft_direction direction, toru_fft_scale scale, const void* in,
                             void* out) {
  return execute(plan, direction, scale, in, out, nullptr);
}
toru_result toru_fft_execute_ws(toru_fft_plan plan, toru_fft_direction direction, toru_fft_scale scale, const void* in,
                                void* out, void* ws) {
  return execute(plan, direction, scale, in, out, ws);
}
toru_result toru_fft_destroy(toru_fft_plan plan) { return toru_fft_plan_destroy(plan); }

}  // extern "C"
