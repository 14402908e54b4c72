// SPDX-License-Identifier: BSD-3-Clause
// fft3d_r2r, fft3d_mixed and fft3d_mixed_r2c: FFTW line transforms (r2r kinds; the DFT on a mixed
// plan's periodic axes; r2c / c2r along axis 2 of a mixed_r2c plan) on the pencil pipeline's three
// layouts (axis 2, 1, 0 whole and contiguous in turn). Each layout stores its transform axis
// contiguously, so every local transform is one guru plan over contiguous lines.
#include "toru/fft/fft3d_r2r.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <complex>
#include <optional>
#include <string>
#include <type_traits>

#include <fmt/format.h>

#include "bound_request.hpp"
#include "common.hpp"
#include "fftw_api.hpp"
#include "pencil_pipeline.hpp"
#include "pencils.hpp"
#include "plan3d.hpp"
#include "split.hpp"
#include "toru/core/agreement.hpp"
#include "toru/core/error.hpp"
#include "toru/core/mpi.hpp"
#include "toru/fft/fft3d_mixed.hpp"

namespace toru::fft {

std::string_view to_string(r2r_kind k) noexcept {
  constexpr std::string_view names[] = {"dct1", "dct2", "dct3", "dct4", "dst1", "dst2", "dst3", "dst4"};
  const auto i = static_cast<std::size_t>(k);
  return i < std::size(names) ? names[i] : "unknown";
}

r2r_kind inverse(r2r_kind k) noexcept {
  switch (k) {
    case r2r_kind::dct2:
      return r2r_kind::dct3;
    case r2r_kind::dct3:
      return r2r_kind::dct2;
    case r2r_kind::dst2:
      return r2r_kind::dst3;
    case r2r_kind::dst3:
      return r2r_kind::dst2;
    default:
      return k;
  }
}

namespace detail {

namespace {

fftw_r2r_kind fftw_kind(r2r_kind k) {
  switch (k) {
    case r2r_kind::dct1:
      return FFTW_REDFT00;
    case r2r_kind::dct2:
      return FFTW_REDFT10;
    case r2r_kind::dct3:
      return FFTW_REDFT01;
    case r2r_kind::dct4:
      return FFTW_REDFT11;
    case r2r_kind::dst1:
      return FFTW_RODFT00;
    case r2r_kind::dst2:
      return FFTW_RODFT10;
    case r2r_kind::dst3:
      return FFTW_RODFT01;
    case r2r_kind::dst4:
      return FFTW_RODFT11;
  }
  return FFTW_REDFT10;
}

// The logical DFT size of a kind on n points (FFTW manual, "The 1d Real-even DFTs").
double logical_size(r2r_kind k, std::int64_t n) {
  if (k == r2r_kind::dct1) return 2.0 * static_cast<double>(n - 1);
  if (k == r2r_kind::dst1) return 2.0 * static_cast<double>(n + 1);
  return 2.0 * static_cast<double>(n);
}

bool valid_kind(r2r_kind k) { return static_cast<int>(k) >= 0 && static_cast<int>(k) <= 7; }

}  // namespace

class r2r_plan {
 public:
  virtual ~r2r_plan() = default;
  /// Collective: the argument checks alone, in one agreement (the workspace argument is unused: the
  /// signature is plan3d's, for bound_request).
  virtual void check(bool forward, const void* in, void* out, void* ws, scale s) const = 0;
  /// Collective: the transform with no checks (check() passed for these arguments).
  virtual void perform(bool forward, const void* in, void* out, void* ws, scale s) const = 0;
  void execute(bool forward, const void* in, void* out, scale s) const {
    check(forward, in, out, nullptr, s);
    perform(forward, in, out, nullptr, s);
  }
  box3d in_box, out_box;
  std::int64_t alloc = 0;
  std::array<int, 2> grid{};
  std::array<r2r_kind, 3> kinds{};       // fft3d_r2r's
  std::array<axis_transform, 3> axes{};  // fft3d_mixed's and fft3d_mixed_r2c's
};

namespace {

// An axis' transform as the agreement's number: the kind, or -1 for the DFT.
std::int64_t axis_code(const axis_transform& t) { return t ? static_cast<std::int64_t>(*t) : -1; }

// Which public plan an r2r_plan_t is; agreed at creation, so ranks building different ones fail
// alike instead of exchanging different element sizes.
enum class family { r2r = 0, mixed = 1, mixed_r2c = 2 };

// The r2r plan (T real: every axis an r2r kind), the mixed plan (T complex: the DFT or an r2r kind
// per axis, the kind applied to the interleaved real and imaginary parts as two lines) and the
// mixed_r2c plan (T complex, R2C: real input, r2c along axis 2, so the pipeline carries
// n0 x n1 x (n2/2+1) complex points; the real rows padded to 2*(n2/2+1) as fft3d_r2c's).
template <class T, bool R2C = false>
class r2r_plan_t final : public r2r_plan {
  static constexpr bool is_complex = !std::is_floating_point_v<T>;
  static_assert(is_complex || !R2C);
  using R = typename std::conditional_t<is_complex, T, std::complex<T>>::value_type;
  using api = fftw_api<R>;
  static constexpr family kind_of_plan = R2C ? family::mixed_r2c : is_complex ? family::mixed : family::r2r;

  // The line transforms along one axis of one layout, forward or inverse, in place (on a work
  // buffer) or out of place (from or to the caller's).
  struct lines : owned_fftw_plan<R> {
    enum { dft, r2r, r2c, c2r } how = dft;
    void run(const void* in, void* out) const {
      if (!this->p) return;
      void* i = const_cast<void*>(in);
      switch (how) {
        case dft:
          return api::execute_dft(this->p, i, out);
        case r2r:
          return api::execute_r2r(this->p, i, out);
        case r2c:
          return api::execute_r2c(this->p, i, out);
        case c2r:
          return api::execute_c2r(this->p, i, out);
      }
    }
  };

  static const char* call_name() {
    return R2C ? "toru::fft::fft3d_mixed_r2c" : is_complex ? "toru::fft::fft3d_mixed" : "toru::fft::fft3d_r2r";
  }

 public:
  r2r_plan_t(MPI_Comm comm, std::array<std::int64_t, 3> n, std::array<axis_transform, 3> t, const options3d& opts)
      : n_(n) {
    axes = t;
    for (int a = 0; a < 3; ++a) kinds[a] = t[a].value_or(r2r_kind::dct2);
    const char* call = call_name();
    const char* name = is_complex ? "axes" : "kinds";
    expect_intracommunicator(comm, "comm");
    int P = 0;
    check_mpi(MPI_Comm_size(comm, &P), "MPI_Comm_size");
    const std::string names[3] = {fmt::format("{}[0]", name), fmt::format("{}[1]", name), fmt::format("{}[2]", name)};
    validate_collectively(
        comm, call,
        {{"n[0]", n[0]},
         {"n[1]", n[1]},
         {"n[2]", n[2]},
         {names[0].c_str(), axis_code(t[0])},
         {names[1].c_str(), axis_code(t[1])},
         {names[2].c_str(), axis_code(t[2])},
         {"precision (sizeof of the real type)", static_cast<std::int64_t>(sizeof(R))},
         {"options.grid[0]", opts.grid[0]},
         {"options.grid[1]", opts.grid[1]},
         {"options.output", static_cast<std::int64_t>(opts.output)},
         {"options.planner", static_cast<std::int64_t>(opts.planner)},
         {"plan (0 fft3d_r2r, 1 fft3d_mixed, 2 fft3d_mixed_r2c)", static_cast<std::int64_t>(kind_of_plan)}},
        [&] {
          if (R2C)
            expect(!t[2], names[2].c_str(),
                   "periodic (axis 2 is the real-to-complex axis: order the axes so a periodic one is last)",
                   t[2] ? std::string(to_string(*t[2])) : "periodic");
          for (int a = 0; a < 3; ++a) {
            if (t[a] || !is_complex)
              expect(t[a] && valid_kind(*t[a]), names[a].c_str(),
                     is_complex ? "periodic or an r2r_kind" : "an r2r_kind",
                     t[a] ? std::to_string(static_cast<int>(*t[a])) : "periodic");
            const std::int64_t least = t[a] == r2r_kind::dct1 ? 2 : 1;
            const std::string na = fmt::format("n[{}]", a);
            expect(n[a] >= least, na.c_str(), least == 2 ? ">= 2 (dct1 is defined on two or more points)" : ">= 1",
                   std::to_string(n[a]));
            expect(n[a] <= INT_MAX, na.c_str(), "<= INT_MAX (FFTW's int sizes)", std::to_string(n[a]));
          }
          check_pencil_grid(opts, P);
        });
    agree_ = agreement_comm(comm);
    grid = pencil_grid(opts, P);
    const std::array<std::int64_t, 3> points{n[0], n[1], R2C ? n[2] / 2 + 1 : n[2]};
    pipe_.emplace(comm, points, grid, opts.output == order::natural,
                  reshape_options{.algorithm = opts.algorithm, .comm = opts.comm}, mpi_type<T>(), sizeof(T),
                  static_cast<int>(sizeof(T)));
    in_box = pipe_->in_box();
    out_box = pipe_->out_box();
    alloc = pipe_->alloc();
    if (R2C) {  // reals: n2 per row, rows 2*(n2/2+1) apart (the complex row's bytes)
      in_box.size[2] = n[2];
      in_box.row_stride = 2 * points[2];
    }
    // Unaligned: the out-of-place plans run on the caller's buffers too. Axis 2's lines always run
    // out of place (pencil_pipeline: caller's in -> work, work -> caller's out).
    const unsigned flags = fftw_flags(opts.planner) | FFTW_UNALIGNED;
    for (int axis = 0; axis < 3; ++axis)
      for (int dir = 0; dir < 2; ++dir) {
        if (!(R2C && axis == 2))
          plan(in_place_[axis][dir], axis, dir == 0, pipe_->buffer_a(), pipe_->buffer_a(), flags);
        plan(out_of_place_[axis][dir], axis, dir == 0, pipe_->buffer_a(), pipe_->buffer_b(), flags);
      }
    scale_n_ = 1;
    for (int a = 0; a < 3; ++a) scale_n_ *= t[a] ? logical_size(*t[a], n[a]) : static_cast<double>(n[a]);
  }

  void check(bool forward, const void* in, void* out, void*, scale s) const override {
    const box3d& src = forward ? in_box : out_box;
    const box3d& dst = forward ? out_box : in_box;
    validate_collectively(*agree_,
                          R2C          ? "a toru::fft mixed_r2c forward/backward"
                          : is_complex ? "a toru::fft mixed forward/backward"
                                       : "a toru::fft r2r forward/backward",
                          {{"direction", forward ? -1 : 1}, {"scale", static_cast<std::int64_t>(s)}}, [&] {
                            check_scale(s);
                            check_buffers(in, src.extent(), out, dst.extent());
                          });
  }

  void perform(bool forward, const void* in, void* out, void*, scale s) const override {
    const box3d& dst = forward ? out_box : in_box;
    const int d = forward ? 0 : 1;
    auto lines_along = [&](int axis, const void* from, void* to) {
      (from == to ? in_place_ : out_of_place_)[axis][d].run(from, to);
    };
    if (forward)
      pipe_->forward(in, out, lines_along);
    else
      pipe_->backward(in, out, lines_along);
    if (s != scale::none) {
      const auto f = static_cast<R>(s == scale::full ? 1.0 / scale_n_ : 1.0 / std::sqrt(scale_n_));
      if (R2C && !forward) {  // reals, padding included
        R* o = static_cast<R*>(out);
        for (std::int64_t i = 0; i < dst.extent(); ++i) o[i] *= f;
      } else {
        T* o = static_cast<T*>(out);
        for (std::int64_t i = 0; i < dst.extent(); ++i) o[i] *= f;
      }
    }
  }

 private:
  // Every line of the layout with `axis` whole (contiguous, n[axis] elements apart): the DFT, or
  // the kind (its inverse backward) on each line of reals, a complex line being two of them.
  void plan(lines& l, int axis, bool forward, void* in, void* out, unsigned flags) {
    const box3d& b = pipe_->pencil(axis);
    const std::int64_t len = n_[axis];
    const std::int64_t count = b.size[axis] > 0 ? b.count() / b.size[axis] : 0;
    if (count == 0) return;
    const axis_transform& t = axes[axis];
    if (R2C && axis == 2) {  // real rows of n reals, 2*(n/2+1) apart <-> rows of n/2+1 complex
      const std::int64_t nc = b.size[2];
      l.how = forward ? lines::r2c : lines::c2r;
      const typename api::iodim dim{n_[2], 1, 1};
      const typename api::iodim many{count, forward ? 2 * nc : nc, forward ? nc : 2 * nc};
      l.p = (forward ? api::guru_r2c : api::guru_c2r)(1, &dim, 1, &many, in, out, flags);
    } else if (!t) {
      l.how = lines::dft;
      const typename api::iodim dim{len, 1, 1}, many{count, len, len};
      l.p = api::guru_dft(1, &dim, 1, &many, in, out, forward ? FFTW_FORWARD : FFTW_BACKWARD, flags);
    } else {
      l.how = lines::r2r;
      const r2r_kind kind = forward ? *t : inverse(*t);
      const fftw_r2r_kind fk = fftw_kind(kind);
      const std::int64_t c = is_complex ? 2 : 1;  // reals per element
      const typename api::iodim dim{len, c, c};
      const typename api::iodim many[2] = {{count, len * c, len * c}, {c, 1, 1}};
      l.p = api::guru_r2r(1, &dim, is_complex ? 2 : 1, many, in, out, &fk, flags);
    }
    if (!l.p)
      throw error(errc::fftw, fmt::format("FFTW could not plan a {} of length {}", t ? to_string(*t) : "DFT", len));
  }

  std::array<std::int64_t, 3> n_;
  mpi_comm_ptr agree_;  // where execute agrees (comm_cache.hpp: agreement_comm)
  std::optional<pencil_pipeline> pipe_;
  double scale_n_ = 1;
  lines in_place_[3][2], out_of_place_[3][2];
};

}  // namespace

}  // namespace detail

template <precision T>
fft3d_r2r<T>::fft3d_r2r(MPI_Comm comm, std::array<std::int64_t, 3> n, std::array<r2r_kind, 3> kinds, options3d opts) {
  impl_ = std::make_unique<detail::r2r_plan_t<T>>(comm, n, std::array<axis_transform, 3>{kinds[0], kinds[1], kinds[2]},
                                                  opts);
}
template <precision T>
fft3d_r2r<T>::~fft3d_r2r() = default;
template <precision T>
fft3d_r2r<T>::fft3d_r2r(fft3d_r2r&&) noexcept = default;
template <precision T>
fft3d_r2r<T>& fft3d_r2r<T>::operator=(fft3d_r2r&&) noexcept = default;
template <precision T>
const box3d& fft3d_r2r<T>::inbox() const {
  return impl_->in_box;
}
template <precision T>
const box3d& fft3d_r2r<T>::outbox() const {
  return impl_->out_box;
}
template <precision T>
std::int64_t fft3d_r2r<T>::alloc_size() const {
  return impl_->alloc;
}
template <precision T>
std::array<int, 2> fft3d_r2r<T>::grid() const {
  return impl_->grid;
}
template <precision T>
const std::array<r2r_kind, 3>& fft3d_r2r<T>::kinds() const {
  return impl_->kinds;
}
template <precision T>
void fft3d_r2r<T>::forward(const T* in, T* out, scale s) const {
  impl_->execute(true, in, out, s);
}
template <precision T>
void fft3d_r2r<T>::backward(const T* in, T* out, scale s) const {
  impl_->execute(false, in, out, s);
}
template <precision T>
request fft3d_r2r<T>::forward_init(const T* in, T* out, scale s) const {
  return detail::bound_request(*impl_, "toru::fft::fft3d_r2r (persistent forward)", true, in, out, s);
}
template <precision T>
request fft3d_r2r<T>::backward_init(const T* in, T* out, scale s) const {
  return detail::bound_request(*impl_, "toru::fft::fft3d_r2r (persistent backward)", false, in, out, s);
}

template class fft3d_r2r<float>;
template class fft3d_r2r<double>;

template <precision T>
fft3d_mixed<T>::fft3d_mixed(MPI_Comm comm, std::array<std::int64_t, 3> n, std::array<axis_transform, 3> axes,
                            options3d opts)
    : impl_(std::make_unique<detail::r2r_plan_t<std::complex<T>>>(comm, n, axes, opts)) {}
template <precision T>
fft3d_mixed<T>::~fft3d_mixed() = default;
template <precision T>
fft3d_mixed<T>::fft3d_mixed(fft3d_mixed&&) noexcept = default;
template <precision T>
fft3d_mixed<T>& fft3d_mixed<T>::operator=(fft3d_mixed&&) noexcept = default;
template <precision T>
const box3d& fft3d_mixed<T>::inbox() const {
  return impl_->in_box;
}
template <precision T>
const box3d& fft3d_mixed<T>::outbox() const {
  return impl_->out_box;
}
template <precision T>
std::int64_t fft3d_mixed<T>::alloc_size() const {
  return impl_->alloc;
}
template <precision T>
std::array<int, 2> fft3d_mixed<T>::grid() const {
  return impl_->grid;
}
template <precision T>
const std::array<axis_transform, 3>& fft3d_mixed<T>::axes() const {
  return impl_->axes;
}
template <precision T>
void fft3d_mixed<T>::forward(const complex_type* in, complex_type* out, scale s) const {
  impl_->execute(true, in, out, s);
}
template <precision T>
void fft3d_mixed<T>::backward(const complex_type* in, complex_type* out, scale s) const {
  impl_->execute(false, in, out, s);
}
template <precision T>
request fft3d_mixed<T>::forward_init(const complex_type* in, complex_type* out, scale s) const {
  return detail::bound_request(*impl_, "toru::fft::fft3d_mixed (persistent forward)", true, in, out, s);
}
template <precision T>
request fft3d_mixed<T>::backward_init(const complex_type* in, complex_type* out, scale s) const {
  return detail::bound_request(*impl_, "toru::fft::fft3d_mixed (persistent backward)", false, in, out, s);
}

template class fft3d_mixed<float>;
template class fft3d_mixed<double>;

template <precision T>
fft3d_mixed_r2c<T>::fft3d_mixed_r2c(MPI_Comm comm, std::array<std::int64_t, 3> n, std::array<axis_transform, 3> axes,
                                    options3d opts) {
  impl_ = std::make_unique<detail::r2r_plan_t<std::complex<T>, true>>(comm, n, axes, opts);
}
template <precision T>
fft3d_mixed_r2c<T>::~fft3d_mixed_r2c() = default;
template <precision T>
fft3d_mixed_r2c<T>::fft3d_mixed_r2c(fft3d_mixed_r2c&&) noexcept = default;
template <precision T>
fft3d_mixed_r2c<T>& fft3d_mixed_r2c<T>::operator=(fft3d_mixed_r2c&&) noexcept = default;
template <precision T>
const box3d& fft3d_mixed_r2c<T>::inbox() const {
  return impl_->in_box;
}
template <precision T>
const box3d& fft3d_mixed_r2c<T>::outbox() const {
  return impl_->out_box;
}
template <precision T>
std::int64_t fft3d_mixed_r2c<T>::alloc_size() const {
  return impl_->alloc;
}
template <precision T>
std::array<int, 2> fft3d_mixed_r2c<T>::grid() const {
  return impl_->grid;
}
template <precision T>
const std::array<axis_transform, 3>& fft3d_mixed_r2c<T>::axes() const {
  return impl_->axes;
}
template <precision T>
void fft3d_mixed_r2c<T>::forward(const T* in, complex_type* out, scale s) const {
  impl_->execute(true, in, out, s);
}
template <precision T>
void fft3d_mixed_r2c<T>::backward(const complex_type* in, T* out, scale s) const {
  impl_->execute(false, in, out, s);
}
template <precision T>
request fft3d_mixed_r2c<T>::forward_init(const T* in, complex_type* out, scale s) const {
  return detail::bound_request(*impl_, "toru::fft::fft3d_mixed_r2c (persistent forward)", true, in, out, s);
}
template <precision T>
request fft3d_mixed_r2c<T>::backward_init(const complex_type* in, T* out, scale s) const {
  return detail::bound_request(*impl_, "toru::fft::fft3d_mixed_r2c (persistent backward)", false, in, out, s);
}

template class fft3d_mixed_r2c<float>;
template class fft3d_mixed_r2c<double>;

}  // namespace toru::fft
