// SPDX-License-Identifier: BSD-3-Clause
// fft3d_r2r: FFTW r2r line transforms on three pencil layouts (axis 2, 1, 0 whole and contiguous
// in turn), moved between by reshape3d. Each layout stores its transform axis contiguously, so
// every local transform is one plan_many_r2r over contiguous lines.
#include "toru/fft/fft3d_r2r.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "common.hpp"
#include "fftw_api.hpp"
#include "pencils.hpp"
#include "plan3d.hpp"
#include "split.hpp"
#include "toru/core/agreement.hpp"
#include "toru/core/error.hpp"
#include "toru/core/mpi.hpp"
#include "toru/fft/reshape3d.hpp"

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
  virtual void execute(bool forward, const void* in, void* out, scale s) const = 0;
  box3d in_box, out_box;
  std::int64_t alloc = 0;
  std::array<int, 2> grid{};
  std::array<r2r_kind, 3> kinds{};
};

namespace {

template <class T>
class r2r_plan_t final : public r2r_plan {
  using api = fftw_api<T>;

  // The line transforms along one axis of one layout, forward or inverse kind, in place (on a
  // work buffer) or out of place (from or to the caller's).
  struct lines : owned_fftw_plan<T> {
    void run(const T* in, T* out) const {
      if (this->p) api::execute_r2r(this->p, const_cast<T*>(in), out);
    }
  };

 public:
  r2r_plan_t(MPI_Comm comm, std::array<std::int64_t, 3> n, std::array<r2r_kind, 3> k, const options3d& opts)
      : n_(n), comm_(comm) {
    kinds = k;
    expect_intracommunicator(comm, "comm");
    int P = 0, me = 0;
    check_mpi(MPI_Comm_size(comm, &P), "MPI_Comm_size");
    check_mpi(MPI_Comm_rank(comm, &me), "MPI_Comm_rank");
    validate_collectively(
        comm, "toru::fft::fft3d_r2r",
        {{"n[0]", n[0]},
         {"n[1]", n[1]},
         {"n[2]", n[2]},
         {"kinds[0]", static_cast<std::int64_t>(k[0])},
         {"kinds[1]", static_cast<std::int64_t>(k[1])},
         {"kinds[2]", static_cast<std::int64_t>(k[2])},
         {"precision (sizeof of the real type)", static_cast<std::int64_t>(sizeof(T))},
         {"options.grid[0]", opts.grid[0]},
         {"options.grid[1]", opts.grid[1]},
         {"options.output", static_cast<std::int64_t>(opts.output)},
         {"options.planner", static_cast<std::int64_t>(opts.planner)}},
        [&] {
          for (int a = 0; a < 3; ++a) {
            const std::string which = fmt::format("kinds[{}]", a);
            expect(valid_kind(k[a]), which.c_str(), "an r2r_kind", std::to_string(static_cast<int>(k[a])));
            const std::int64_t least = k[a] == r2r_kind::dct1 ? 2 : 1;
            const std::string na = fmt::format("n[{}]", a);
            expect(n[a] >= least, na.c_str(), least == 2 ? ">= 2 (dct1 is defined on two or more points)" : ">= 1",
                   std::to_string(n[a]));
            expect(n[a] <= INT_MAX, na.c_str(), "<= INT_MAX (FFTW's int sizes)", std::to_string(n[a]));
          }
          check_pencil_grid(opts, P);
        });
    grid = pencil_grid(opts, P);
    const int r0 = me / grid[1], r1 = me % grid[1];
    for (int a = 0; a < 3; ++a) pencils_[a] = pencil(n, a, grid[0], grid[1], r0, r1);
    natural_ = opts.output == order::natural;
    in_box = pencils_[2];
    out_box = natural_ ? pencils_[2] : pencils_[0];
    alloc = std::max({pencils_[0].extent(), pencils_[1].extent(), pencils_[2].extent(), std::int64_t{1}});
    const reshape_options ro{.algorithm = opts.algorithm, .comm = opts.comm};
    zy_ = std::make_unique<reshape3d<T>>(comm, n, pencils_[2], pencils_[1], ro);
    yx_ = std::make_unique<reshape3d<T>>(comm, n, pencils_[1], pencils_[0], ro);
    xy_ = std::make_unique<reshape3d<T>>(comm, n, pencils_[0], pencils_[1], ro);
    yz_ = std::make_unique<reshape3d<T>>(comm, n, pencils_[1], pencils_[2], ro);
    if (natural_) {
      xz_ = std::make_unique<reshape3d<T>>(comm, n, pencils_[0], pencils_[2], ro);
      zx_ = std::make_unique<reshape3d<T>>(comm, n, pencils_[2], pencils_[0], ro);
    }
    // One rank short of memory fails on every rank.
    validate_collectively(comm, [&] {
      const std::size_t bytes = checked_bytes(alloc, sizeof(T), "r2r work buffers");
      a_ = aligned_buffer(bytes);
      b_ = aligned_buffer(bytes);
    });
    // Unaligned: the out-of-place plans run on the caller's buffers too.
    const unsigned flags = fftw_flags(opts.planner) | FFTW_UNALIGNED;
    T* a = static_cast<T*>(a_.get());
    T* b = static_cast<T*>(b_.get());
    for (int axis = 0; axis < 3; ++axis)
      for (int dir = 0; dir < 2; ++dir) {
        const r2r_kind kind = dir == 0 ? k[axis] : inverse(k[axis]);
        plan(in_place_[axis][dir], axis, kind, a, a, flags);
        plan(out_of_place_[axis][dir], axis, kind, a, b, flags);
      }
    scale_n_ = logical_size(k[0], n[0]) * logical_size(k[1], n[1]) * logical_size(k[2], n[2]);
  }

  void execute(bool forward, const void* in_v, void* out_v, scale s) const override {
    const T* in = static_cast<const T*>(in_v);
    T* out = static_cast<T*>(out_v);
    T* a = static_cast<T*>(a_.get());
    T* b = static_cast<T*>(b_.get());
    const box3d& src = forward ? in_box : out_box;
    const box3d& dst = forward ? out_box : in_box;
    validate_collectively(comm(), "a toru::fft r2r forward/backward",
                          {{"direction", forward ? -1 : 1}, {"scale", static_cast<std::int64_t>(s)}}, [&] {
                            check_scale(s);
                            check_buffers(in, src.extent(), out, dst.extent());
                          });
    if (forward) {
      out_of_place_[2][0].run(in, a);
      zy_->execute(a, b);
      in_place_[1][0].run(b, b);
      yx_->execute(b, a);
      if (natural_) {
        in_place_[0][0].run(a, a);
        xz_->execute(a, out);
      } else {
        out_of_place_[0][0].run(a, out);
      }
    } else {
      if (natural_) {
        zx_->execute(in, a);
        in_place_[0][1].run(a, a);
      } else {
        out_of_place_[0][1].run(in, a);
      }
      xy_->execute(a, b);
      in_place_[1][1].run(b, b);
      yz_->execute(b, a);
      out_of_place_[2][1].run(a, out);
    }
    if (s != scale::none)
      scale_real(out, dst.extent(), static_cast<T>(s == scale::full ? 1.0 / scale_n_ : 1.0 / std::sqrt(scale_n_)));
  }

 private:
  MPI_Comm comm() const { return comm_; }

  static void scale_real(T* p, std::int64_t count, T f) {
    for (std::int64_t i = 0; i < count; ++i) p[i] *= f;
  }

  // The lines of the layout with `axis` whole: contiguous, n[axis] apart.
  void plan(lines& l, int axis, r2r_kind kind, T* in, T* out, unsigned flags) {
    const box3d& b = pencils_[axis];
    const int len = static_cast<int>(n_[axis]);
    const std::int64_t howmany = b.size[axis] > 0 ? b.count() / b.size[axis] : 0;
    if (howmany == 0) return;
    const fftw_r2r_kind fk = fftw_kind(kind);
    l.p = api::many_r2r(1, &len, static_cast<int>(howmany), in, nullptr, 1, len, out, nullptr, 1, len, &fk, flags);
    if (!l.p) throw error(errc::fftw, fmt::format("FFTW could not plan a {} of length {}", to_string(kind), len));
  }

  std::array<std::int64_t, 3> n_;
  MPI_Comm comm_;
  std::array<box3d, 3> pencils_;  // axis 0, 1, 2 whole
  bool natural_ = true;
  double scale_n_ = 1;
  std::unique_ptr<reshape3d<T>> zy_, yx_, xy_, yz_, xz_, zx_;
  aligned_buffer a_, b_;
  lines in_place_[3][2], out_of_place_[3][2];
};

}  // namespace

}  // namespace detail

template <precision T>
fft3d_r2r<T>::fft3d_r2r(MPI_Comm comm, std::array<std::int64_t, 3> n, std::array<r2r_kind, 3> kinds, options3d opts) {
  impl_ = std::make_unique<detail::r2r_plan_t<T>>(comm, n, kinds, opts);
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

template class fft3d_r2r<float>;
template class fft3d_r2r<double>;

}  // namespace toru::fft
