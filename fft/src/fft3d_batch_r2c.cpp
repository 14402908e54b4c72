// SPDX-License-Identifier: BSD-3-Clause
// fft3d_batch_r2c: where fft3d_r2c's plan takes the options, that plan run field by field
// (batch_field_loop.hpp), as fft3d_batch. Otherwise fft3d_batch's pencil pipeline on the complex
// grid n0 x n1 x (n2/2+1), whose first forward step (and last backward step) is an r2c (c2r) of
// the real rows along axis 2 straight from (into) the caller's array: FFTW guru plans over
// (fields x lines) with the real side's own strides, so planar real fields need no staging copy.
// Planar complex fields go through an interleaved staging copy as in fft3d_batch.
#include <optional>

#include <fmt/format.h>

#include "batch_field_loop.hpp"
#include "batch_fields.hpp"
#include "bound_request.hpp"
#include "common.hpp"
#include "fftw_api.hpp"
#include "pencil_pipeline.hpp"
#include "pencils.hpp"
#include "plan3d.hpp"
#include "toru/core/agreement.hpp"
#include "toru/core/error.hpp"
#include "toru/core/mpi.hpp"
#include "toru/fft/fft3d_batch.hpp"

namespace toru::fft {

namespace detail {

class batch_r2c_plan {
 public:
  virtual ~batch_r2c_plan() = default;
  /// Collective: the argument checks alone, in one agreement (ws unused: plan3d's signature, for
  /// bound_request).
  virtual void check(bool forward, const void* in, void* out, void* ws, scale s) const = 0;
  /// Collective: the transform with no checks (check() passed for these arguments).
  virtual void perform(bool forward, const void* in, void* out, void* ws, scale s) const = 0;
  void execute(bool forward, const void* in, void* out, scale s) const {
    check(forward, in, out, nullptr, s);
    perform(forward, in, out, nullptr, s);
  }
  box3d real_box, out_box;
  std::int64_t alloc = 0;
  int howmany = 1;
  std::array<int, 2> grid{};
};

namespace {

template <class T>
class batch_r2c_plan_t final : public batch_r2c_plan {
  using api = fftw_api<T>;
  using cpx = std::complex<T>;

 public:
  batch_r2c_plan_t(MPI_Comm comm, std::array<std::int64_t, 3> n, int F, fields layout, const options3d& opts)
      : n_(n), planar_(layout == fields::planar) {
    agree_on_batch(comm, "toru::fft::fft3d_batch_r2c", n, F, layout, sizeof(T), 1, opts);
    agree_ = agreement_comm(comm);
    int P = 0;
    check_mpi(MPI_Comm_size(comm, &P), "MPI_Comm_size");
    howmany = F;
    if (field_loop<T>::applies(n, true, opts)) {
      loop_ = std::make_unique<field_loop<T>>(comm, n, true, F, planar_, opts);
      grid = loop_->grid();
      real_box = loop_->inbox();
      out_box = loop_->outbox();
      alloc = loop_->alloc() * F;
      return;
    }
    grid = pencil_grid(opts, P);
    point_.emplace(F, mpi_type<cpx>());
    const std::int64_t nc = n[2] / 2 + 1;
    const int id = 1100 + static_cast<int>(sizeof(T));  // agreed with howmany above
    pipe_.emplace(comm, std::array<std::int64_t, 3>{n[0], n[1], nc}, grid, opts.output == order::natural,
                  reshape_options{.algorithm = opts.algorithm, .comm = opts.comm}, point_->get(), sizeof(cpx) * F, id);
    real_box = pipe_->in_box();
    real_box.size[2] = n[2];
    real_box.row_stride = 2 * nc;
    out_box = pipe_->out_box();
    alloc = pipe_->alloc() * F;
    if (planar_)  // the interleaved copy of a planar complex array
      validate_collectively(comm,
                            [&] { staging_ = aligned_buffer(checked_bytes(alloc, sizeof(cpx), "planar staging")); });
    const unsigned flags = fftw_flags(opts.planner) | FFTW_UNALIGNED;  // also run on the caller's buffers
    cpx* a = static_cast<cpx*>(pipe_->buffer_a());
    cpx* b = static_cast<cpx*>(pipe_->buffer_b());
    // b holds alloc complex elements, so 2 * alloc reals: the padded real box of every field.
    plan_real_rows(a, reinterpret_cast<T*>(b), flags);
    for (int axis = 0; axis < 2; ++axis)
      for (int dir = 0; dir < 2; ++dir) {
        const int sign = dir == 0 ? FFTW_FORWARD : FFTW_BACKWARD;
        plan_batch_lines<T>(in_place_[axis][dir], pipe_->pencil(axis), axis, F, sign, a, a, flags);
        plan_batch_lines<T>(out_of_place_[axis][dir], pipe_->pencil(axis), axis, F, sign, a, b, flags);
      }
  }

  void check(bool forward, const void* in, void* out, void*, scale s) const override {
    const std::int64_t F = howmany;
    const std::int64_t reals = real_box.extent() * F, modes = out_box.extent() * F;
    validate_collectively(*agree_, "a toru::fft batched r2c forward/backward",
                          {{"direction", forward ? -1 : 1}, {"scale", static_cast<std::int64_t>(s)}}, [&] {
                            check_scale(s);
                            check_buffers(in, forward ? reals : modes, out, forward ? modes : reals);
                          });
  }

  void perform(bool forward, const void* in, void* out, void*, scale s) const override {
    const std::int64_t F = howmany;
    const std::int64_t reals = real_box.extent() * F, modes = out_box.extent() * F;
    if (loop_) return loop_->execute(forward, in, out, s);
    const int d = forward ? 0 : 1;
    auto lines_along = [&](int axis, const void* from, void* to) {
      void* src = const_cast<void*>(from);
      if (axis < 2) {
        const auto& l = (from == to ? in_place_ : out_of_place_)[axis][d];
        if (l.p) api::execute_dft(l.p, src, to);
      } else if (forward) {
        if (r2c_.p) api::execute_r2c(r2c_.p, src, to);
      } else if (c2r_.p) {
        api::execute_c2r(c2r_.p, src, to);  // destroys its input: the pipeline's work buffer
      }
    };
    cpx* staging = static_cast<cpx*>(staging_.get());
    const double N = static_cast<double>(n_[0]) * static_cast<double>(n_[1]) * static_cast<double>(n_[2]);
    if (forward) {
      cpx* modes_out = static_cast<cpx*>(out);
      pipe_->forward(in, planar_ ? staging : modes_out, lines_along);
      if (planar_) split(staging, modes_out, out_box.extent(), F);
      if (s != scale::none) scale_array(modes_out, modes, static_cast<T>(scale_factor(s, N)));
    } else {
      const cpx* modes_in = static_cast<const cpx*>(in);
      if (planar_) interleave(modes_in, staging, out_box.extent(), F);
      pipe_->backward(planar_ ? staging : modes_in, out, lines_along);
      if (s != scale::none) {
        T* r = static_cast<T*>(out);
        const T k = static_cast<T>(scale_factor(s, N));
        for (std::int64_t i = 0; i < reals; ++i) r[i] *= k;
      }
    }
  }

 private:
  // The r2c / c2r along axis 2, between the caller's real layout and the pipeline's interleaved
  // complex pencil: real strides (element, row, field) = (F, 2 nc F, 1) interleaved or
  // (1, 2 nc, real extent) planar.
  void plan_real_rows(cpx* modes, T* reals, unsigned flags) {
    const box3d& bx = pipe_->pencil(2);
    const std::int64_t F = howmany, nc = bx.size[2], len = n_[2];
    const std::int64_t count = nc > 0 ? bx.count() / nc : 0;
    if (count == 0) return;
    const std::int64_t re = planar_ ? 1 : F, rrow = 2 * nc * re, rfield = planar_ ? real_box.extent() : 1;
    using iodim = typename api::iodim;
    const iodim fwd_dim{len, re, F}, bwd_dim{len, F, re};
    const iodim fwd_many[2] = {{count, rrow, nc * F}, {F, rfield, 1}};
    const iodim bwd_many[2] = {{count, nc * F, rrow}, {F, 1, rfield}};
    r2c_.p = api::guru_r2c(1, &fwd_dim, 2, fwd_many, reals, modes, flags);
    c2r_.p = api::guru_c2r(1, &bwd_dim, 2, bwd_many, modes, reals, flags);
    if (!r2c_.p || !c2r_.p)
      throw error(errc::fftw, fmt::format("FFTW could not plan {} batched real lines of {}", count * F, len));
  }

  mpi_comm_ptr agree_;  // where execute agrees (comm_cache.hpp: agreement_comm)
  std::array<std::int64_t, 3> n_;
  bool planar_;
  std::unique_ptr<field_loop<T>> loop_;  // the fast path, where plan3d takes the grid
  std::optional<fields_type> point_;     // before the pipeline: freed after its reshapes
  std::optional<pencil_pipeline> pipe_;
  aligned_buffer staging_;
  owned_fftw_plan<T> r2c_, c2r_;
  owned_fftw_plan<T> in_place_[2][2], out_of_place_[2][2];  // axes 0 and 1, forward and backward
};

}  // namespace

}  // namespace detail

template <precision T>
fft3d_batch_r2c<T>::fft3d_batch_r2c(MPI_Comm comm, std::array<std::int64_t, 3> n, int howmany, fields layout,
                                    options3d opts)
    : impl_(std::make_unique<detail::batch_r2c_plan_t<T>>(comm, n, howmany, layout, opts)) {}
template <precision T>
fft3d_batch_r2c<T>::~fft3d_batch_r2c() = default;
template <precision T>
fft3d_batch_r2c<T>::fft3d_batch_r2c(fft3d_batch_r2c&&) noexcept = default;
template <precision T>
fft3d_batch_r2c<T>& fft3d_batch_r2c<T>::operator=(fft3d_batch_r2c&&) noexcept = default;
template <precision T>
const box3d& fft3d_batch_r2c<T>::inbox() const {
  return impl_->real_box;
}
template <precision T>
const box3d& fft3d_batch_r2c<T>::outbox() const {
  return impl_->out_box;
}
template <precision T>
int fft3d_batch_r2c<T>::howmany() const {
  return impl_->howmany;
}
template <precision T>
std::int64_t fft3d_batch_r2c<T>::alloc_size() const {
  return impl_->alloc;
}
template <precision T>
std::array<int, 2> fft3d_batch_r2c<T>::grid() const {
  return impl_->grid;
}
template <precision T>
void fft3d_batch_r2c<T>::forward(const T* in, complex_type* out, scale s) const {
  impl_->execute(true, in, out, s);
}
template <precision T>
void fft3d_batch_r2c<T>::backward(const complex_type* in, T* out, scale s) const {
  impl_->execute(false, in, out, s);
}
template <precision T>
request fft3d_batch_r2c<T>::forward_init(const T* in, complex_type* out, scale s) const {
  return detail::bound_request(*impl_, "toru::fft::fft3d_batch_r2c (persistent forward)", true, in, out, s);
}
template <precision T>
request fft3d_batch_r2c<T>::backward_init(const complex_type* in, T* out, scale s) const {
  return detail::bound_request(*impl_, "toru::fft::fft3d_batch_r2c (persistent backward)", false, in, out, s);
}

template class fft3d_batch_r2c<float>;
template class fft3d_batch_r2c<double>;

}  // namespace toru::fft
