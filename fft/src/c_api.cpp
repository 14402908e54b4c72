// The fft part of the C interface (toru/fft.h): result codes instead of exceptions, opaque plans.
#include <memory>
#include <new>
#include <string>
#include <variant>

#include "toru/core/error.hpp"
#include "toru/core/mpi.hpp"
#include "toru/detail/c_guard.hpp"
#include "toru/fft.h"
#include "toru/fft/fft1d.hpp"
#include "toru/fft/fft3d.hpp"

using namespace toru::fft;

struct toru_fft_plan_s {
  std::variant<fft3d<double>, fft3d<float>, fft3d_r2c<double>, fft3d_r2c<float>, fft1d<double>, fft1d<float>> plan;
};

namespace {

toru_fft_options defaults() {
  toru_fft_options o{};
  o.precision = TORU_FFT_DOUBLE;
  o.decomposition = TORU_FFT_DECOMPOSITION_AUTO;
  o.overlap = 1;
  return o;
}

void check_precision(const toru_fft_options& o) {
  toru::expect(o.precision == TORU_FFT_DOUBLE || o.precision == TORU_FFT_FLOAT, "options->precision",
               "TORU_FFT_DOUBLE or TORU_FFT_FLOAT", std::to_string(static_cast<int>(o.precision)));
}

options3d convert3d(const toru_fft_options& o) {
  toru::expect(o.decomposition >= TORU_FFT_DECOMPOSITION_AUTO && o.decomposition <= TORU_FFT_DECOMPOSITION_PENCIL,
               "options->decomposition", "a toru_fft_decomposition value",
               std::to_string(static_cast<int>(o.decomposition)));
  return {.decomp = static_cast<decomposition>(o.decomposition),
          .grid = {o.grid[0], o.grid[1]},
          .output = o.transposed_out ? order::transposed : order::natural,
          .planner = o.measure ? effort::measure : effort::estimate,
          .overlap = o.overlap != 0,
          .chunks = o.chunks};
}

options1d convert1d(const toru_fft_options& o) {
  return {.n1 = o.n1,
          .output = o.transposed_out ? order::transposed : order::natural,
          .planner = o.measure ? effort::measure : effort::estimate,
          .overlap = o.overlap != 0,
          .chunks = o.chunks};
}

template <class Make>
toru_result create(toru_fft_plan* plan, Make&& make) noexcept {
  if (!plan) {
    toru::detail::set_last_error("plan: expected a pointer to a toru_fft_plan, got NULL");
    return TORU_ERROR_INVALID_ARGUMENT;
  }
  *plan = nullptr;
  return toru::detail::c_guarded([&] { *plan = make(); });
}

toru_result plan3d(MPI_Comm comm, long long n0, long long n1, long long n2, const toru_fft_options* options,
                   toru_fft_plan* plan, bool r2c) {
  return create(plan, [&]() -> toru_fft_plan {
    const toru_fft_options o = options ? *options : defaults();
    // Validated collectively by the plan constructors; a bad precision is a local mistake, but all
    // ranks pass the same options in a correct program, and a wrong one fails before any collective.
    check_precision(o);
    const options3d opts = convert3d(o);
    const std::array<std::int64_t, 3> n{n0, n1, n2};
    if (o.precision == TORU_FFT_DOUBLE)
      return r2c ? new toru_fft_plan_s{fft3d_r2c<double>(comm, n, opts)}
                 : new toru_fft_plan_s{fft3d<double>(comm, n, opts)};
    return r2c ? new toru_fft_plan_s{fft3d_r2c<float>(comm, n, opts)}
               : new toru_fft_plan_s{fft3d<float>(comm, n, opts)};
  });
}

toru_result plan1d(MPI_Comm comm, long long n, const toru_fft_options* options, toru_fft_plan* plan) {
  return create(plan, [&]() -> toru_fft_plan {
    const toru_fft_options o = options ? *options : defaults();
    check_precision(o);
    if (o.precision == TORU_FFT_DOUBLE) return new toru_fft_plan_s{fft1d<double>(comm, n, convert1d(o))};
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

void to_c_1d(std::int64_t start, std::int64_t count, toru_fft_box* out) {
  if (!out) return;
  *out = toru_fft_box{{start, 0, 0}, {count, 1, 1}, {0, 1, 2}, count};
}

template <class F>
toru_result with_plan(toru_fft_plan plan, F&& f) noexcept {
  if (!plan) {
    toru::detail::set_last_error("plan: expected a plan from toru_fft_plan_*, got NULL");
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

toru_result execute(toru_fft_plan plan, toru_fft_direction direction, toru_fft_scale sc, const void* in, void* out,
                    void* ws) {
  return with_plan(plan, [&](const auto& p) {
    toru::expect(direction == TORU_FFT_FORWARD || direction == TORU_FFT_BACKWARD, "direction",
                 "TORU_FFT_FORWARD or TORU_FFT_BACKWARD", std::to_string(static_cast<int>(direction)));
    toru::expect(sc >= TORU_FFT_SCALE_NONE && sc <= TORU_FFT_SCALE_SYMMETRIC, "scale", "a toru_fft_scale value",
                 std::to_string(static_cast<int>(sc)));
    using P = std::decay_t<decltype(p)>;
    using cpx = typename P::complex_type;
    using real = typename cpx::value_type;
    const auto s = static_cast<scale>(sc);
    if constexpr (std::is_same_v<P, fft3d_r2c<real>>)
      run<P, real, cpx>(p, direction, s, in, out, ws);
    else
      run<P, cpx, cpx>(p, direction, s, in, out, ws);
  });
}

}  // namespace

extern "C" {

toru_fft_options toru_fft_options_default(void) { return defaults(); }

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

toru_result toru_fft_local_size_3d_f(MPI_Fint comm, long long n0, long long n1, long long n2, int r2c,
                                     const toru_fft_options* options, toru_fft_box* in, toru_fft_box* out,
                                     long long* alloc) {
  return toru_fft_local_size_3d(MPI_Comm_f2c(comm), n0, n1, n2, r2c, options, in, out, alloc);
}

toru_result toru_fft_local_size(toru_fft_plan plan, toru_fft_box* in, toru_fft_box* out, long long* alloc) {
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
    const toru_fft_options o = options ? *options : defaults();
    int size = 0, rank = 0;
    toru::check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
    toru::check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
    const local_layout lay = local_size_3d(size, rank, {n0, n1, n2}, convert3d(o), r2c != 0);
    to_c(lay.in, in);
    to_c(lay.out, out);
    if (alloc) *alloc = lay.alloc;
  });
}

toru_result toru_fft_workspace_size(toru_fft_plan plan, size_t* bytes) {
  return with_plan(plan, [&](const auto& p) {
    toru::expect(bytes != nullptr, "bytes", "a pointer", "NULL");
    *bytes = p.workspace_size();
  });
}

toru_result toru_fft_execute(toru_fft_plan plan, toru_fft_direction direction, toru_fft_scale scale, const void* in,
                             void* out) {
  return execute(plan, direction, scale, in, out, nullptr);
}
toru_result toru_fft_execute_ws(toru_fft_plan plan, toru_fft_direction direction, toru_fft_scale scale, const void* in,
                                void* out, void* ws) {
  return execute(plan, direction, scale, in, out, ws);
}

toru_result toru_fft_destroy(toru_fft_plan plan) {
  delete plan;
  return TORU_SUCCESS;
}

const char* toru_fft_last_error(void) { return toru_last_error(); }

}  // extern "C"
