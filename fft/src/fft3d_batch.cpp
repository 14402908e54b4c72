// SPDX-License-Identifier: BSD-3-Clause
// fft3d_batch: where fft3d's plan takes the options (unless a forced grid leaves a rank empty),
// that plan run field by field (batch_field_loop.hpp: measured faster than the pipeline below).
// Otherwise the pencil pipeline (as fft3d_r2r's), every point carrying `howmany` interleaved
// fields. The local transforms are FFTW guru plans over (fields x lines); each reshape moves a
// point's fields as one MPI element (a contiguous datatype), so a transpose is one exchange for all
// fields. Planar arrays are interleaved into a staging copy on the way in and split on the way out.
#include "toru/fft/fft3d_batch.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <optional>
#include <string>

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

namespace toru::fft {

namespace detail {

class batch_plan {
 public:
  virtual ~batch_plan() = default;
  /// Collective: the argument checks alone, in one agreement (ws unused: plan3d's signature, for
  /// bound_request).
  virtual void check(bool forward, const void* in, void* out, void* ws, scale s) const = 0;
  /// Collective: the transform with no checks (check() passed for these arguments).
  virtual void perform(bool forward, const void* in, void* out, void* ws, scale s) const = 0;
  void execute(bool forward, const void* in, void* out, scale s) const {
    check(forward, in, out, nullptr, s);
    perform(forward, in, out, nullptr, s);
  }
  box3d in_box, out_box;
  std::int64_t alloc = 0;
  int howmany = 1;
  std::array<int, 2> grid{};
};

namespace {

template <class T>
class batch_plan_t final : public batch_plan {
  using api = fftw_api<T>;
  using cpx = std::complex<T>;

  struct lines : owned_fftw_plan<T> {
    void run(const cpx* in, cpx* out) const {
      if (this->p) api::execute_dft(this->p, const_cast<cpx*>(in), out);
    }
  };

 public:
  batch_plan_t(MPI_Comm comm, std::array<std::int64_t, 3> n, int F, fields layout, const options3d& opts)
      : n_(n), planar_(layout == fields::planar) {
    agree_on_batch(comm, "toru::fft::fft3d_batch", n, F, layout, sizeof(T), 0, opts);
    agree_ = agreement_comm(comm);
    int P = 0;
    check_mpi(MPI_Comm_size(comm, &P), "MPI_Comm_size");
    howmany = F;
    if (field_loop<T>::applies(n, false, opts)) {
      loop_ = std::make_unique<field_loop<T>>(comm, n, false, F, planar_, opts);
      grid = loop_->grid();
      in_box = loop_->inbox();
      out_box = loop_->outbox();
      alloc = loop_->alloc() * F;
      return;
    }
    grid = pencil_grid(opts, P);
    point_.emplace(F, mpi_type<cpx>());
    const int id = 1000 + static_cast<int>(sizeof(T));  // agreed with howmany above
    pipe_.emplace(comm, n, grid, opts.output == order::natural,
                  reshape_options{.algorithm = opts.algorithm, .comm = opts.comm}, point_->get(), sizeof(cpx) * F, id);
    in_box = pipe_->in_box();
    out_box = pipe_->out_box();
    alloc = pipe_->alloc() * F;
    if (planar_)  // the interleaved copy of a planar array
      validate_collectively(comm,
                            [&] { staging_ = aligned_buffer(checked_bytes(alloc, sizeof(cpx), "planar staging")); });
    const unsigned flags = fftw_flags(opts.planner) | FFTW_UNALIGNED;  // also run on the caller's buffers
    cpx* a = static_cast<cpx*>(pipe_->buffer_a());
    cpx* b = static_cast<cpx*>(pipe_->buffer_b());
    for (int axis = 0; axis < 3; ++axis)
      for (int dir = 0; dir < 2; ++dir) {
        const int sign = dir == 0 ? FFTW_FORWARD : FFTW_BACKWARD;
        plan_batch_lines<T>(in_place_[axis][dir], pipe_->pencil(axis), axis, F, sign, a, a, flags);
        plan_batch_lines<T>(out_of_place_[axis][dir], pipe_->pencil(axis), axis, F, sign, a, b, flags);
      }
  }

  void check(bool forward, const void* in, void* out, void*, scale s) const override {
    const box3d& src = forward ? in_box : out_box;
    const box3d& dst = forward ? out_box : in_box;
    const std::int64_t F = howmany;
    validate_collectively(*agree_, "a toru::fft batched forward/backward",
                          {{"direction", forward ? -1 : 1}, {"scale", static_cast<std::int64_t>(s)}}, [&] {
                            check_scale(s);
                            check_buffers(static_cast<const cpx*>(in), src.extent() * F, static_cast<cpx*>(out),
                                          dst.extent() * F);
                          });
  }

  void perform(bool forward, const void* in_v, void* out_v, void*, scale s) const override {
    const cpx* in = static_cast<const cpx*>(in_v);
    cpx* out = static_cast<cpx*>(out_v);
    const box3d& src = forward ? in_box : out_box;
    const box3d& dst = forward ? out_box : in_box;
    const std::int64_t F = howmany;
    if (loop_) return loop_->execute(forward, in, out, s);
    // Planar data goes through the interleaved staging copy, transformed there in place.
    const int d = forward ? 0 : 1;
    auto lines_along = [&](int axis, const void* from, void* to) {
      (from == to ? in_place_ : out_of_place_)[axis][d].run(static_cast<const cpx*>(from), static_cast<cpx*>(to));
    };
    cpx* staging = static_cast<cpx*>(staging_.get());
    if (planar_) interleave(in, staging, src.extent(), F);
    const cpx* first = planar_ ? staging : in;
    cpx* last = planar_ ? staging : out;
    if (forward)
      pipe_->forward(first, last, lines_along);
    else
      pipe_->backward(first, last, lines_along);
    if (planar_) split(staging, out, dst.extent(), F);
    if (s != scale::none) {
      const double N = static_cast<double>(n_[0]) * static_cast<double>(n_[1]) * static_cast<double>(n_[2]);
      scale_array(out, dst.extent() * F, static_cast<T>(scale_factor(s, N)));
    }
  }

 private:
  mpi_comm_ptr agree_;  // where execute agrees (comm_cache.hpp: agreement_comm)
  std::array<std::int64_t, 3> n_;
  bool planar_;
  std::unique_ptr<field_loop<T>> loop_;  // the fast path, where plan3d takes the grid
  std::optional<fields_type> point_;     // before the pipeline: freed after its reshapes
  std::optional<pencil_pipeline> pipe_;
  aligned_buffer staging_;
  lines in_place_[3][2], out_of_place_[3][2];
};

}  // namespace

}  // namespace detail

template <precision T>
fft3d_batch<T>::fft3d_batch(MPI_Comm comm, std::array<std::int64_t, 3> n, int howmany, fields layout, options3d opts)
    : impl_(std::make_unique<detail::batch_plan_t<T>>(comm, n, howmany, layout, opts)) {}
template <precision T>
fft3d_batch<T>::~fft3d_batch() = default;
template <precision T>
fft3d_batch<T>::fft3d_batch(fft3d_batch&&) noexcept = default;
template <precision T>
fft3d_batch<T>& fft3d_batch<T>::operator=(fft3d_batch&&) noexcept = default;
template <precision T>
const box3d& fft3d_batch<T>::inbox() const {
  return impl_->in_box;
}
template <precision T>
const box3d& fft3d_batch<T>::outbox() const {
  return impl_->out_box;
}
template <precision T>
int fft3d_batch<T>::howmany() const {
  return impl_->howmany;
}
template <precision T>
std::int64_t fft3d_batch<T>::alloc_size() const {
  return impl_->alloc;
}
template <precision T>
std::array<int, 2> fft3d_batch<T>::grid() const {
  return impl_->grid;
}
template <precision T>
void fft3d_batch<T>::forward(const complex_type* in, complex_type* out, scale s) const {
  impl_->execute(true, in, out, s);
}
template <precision T>
void fft3d_batch<T>::backward(const complex_type* in, complex_type* out, scale s) const {
  impl_->execute(false, in, out, s);
}
template <precision T>
request fft3d_batch<T>::forward_init(const complex_type* in, complex_type* out, scale s) const {
  return detail::bound_request(*impl_, "toru::fft::fft3d_batch (persistent forward)", true, in, out, s);
}
template <precision T>
request fft3d_batch<T>::backward_init(const complex_type* in, complex_type* out, scale s) const {
  return detail::bound_request(*impl_, "toru::fft::fft3d_batch (persistent backward)", false, in, out, s);
}

template class fft3d_batch<float>;
template class fft3d_batch<double>;

}  // namespace toru::fft
