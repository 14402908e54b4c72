// SPDX-License-Identifier: BSD-3-Clause
// The members of the public fft3d classes for every backend tag: fft3d.cpp instantiates them
// for fftw, instances_cufft.cpp for cufft when toru is built with CUDA.
#pragma once

#include <exception>
#include <functional>
#include <string>

#include <fmt/format.h>

#include "bound_request.hpp"
#include "common.hpp"
#include "plan3d.hpp"
#include "toru/core/agreement.hpp"
#include "toru/core/mpi.hpp"
#include "toru/detail/split_phase.hpp"
#include "toru/fft/fft3d.hpp"

namespace toru::fft {

namespace detail {
// The caller's boxes carry their own row stride: options.rows does not apply.
inline options3d rows_from_boxes(options3d o) {
  o.rows = real_rows::padded;
  return o;
}
}  // namespace detail

#define TORU_FFT3D_COMMON(CLASS, R2C)                                                                      \
  template <precision T, backend B>                                                                        \
  CLASS<T, B>::CLASS(MPI_Comm comm, std::array<std::int64_t, 3> n, options3d opts)                         \
      : impl_(std::make_unique<detail::plan3d<T>>(comm, n, R2C, opts, backend_traits<B>::device_memory)) { \
    if (R2C && opts.rows == real_rows::packed) impl_->use_packed_rows(comm);                               \
  }                                                                                                        \
  template <precision T, backend B>                                                                        \
  CLASS<T, B>::CLASS(MPI_Comm comm, std::array<std::int64_t, 3> n, box3d in, box3d out, options3d opts)    \
      : CLASS(comm, n, detail::rows_from_boxes(opts)) {                                                    \
    impl_->use_boxes(comm, in, out);                                                                       \
  }                                                                                                        \
  template <precision T, backend B>                                                                        \
  CLASS<T, B>::~CLASS() = default;                                                                         \
  template <precision T, backend B>                                                                        \
  CLASS<T, B>::CLASS(CLASS&&) noexcept = default;                                                          \
  template <precision T, backend B>                                                                        \
  CLASS<T, B>& CLASS<T, B>::operator=(CLASS&&) noexcept = default;                                         \
  template <precision T, backend B>                                                                        \
  const box3d& CLASS<T, B>::inbox() const {                                                                \
    return impl_->inbox();                                                                                 \
  }                                                                                                        \
  template <precision T, backend B>                                                                        \
  const box3d& CLASS<T, B>::outbox() const {                                                               \
    return impl_->outbox();                                                                                \
  }                                                                                                        \
  template <precision T, backend B>                                                                        \
  std::int64_t CLASS<T, B>::alloc_size() const {                                                           \
    return impl_->alloc_size();                                                                            \
  }                                                                                                        \
  template <precision T, backend B>                                                                        \
  std::complex<T>* CLASS<T, B>::shared_out() {                                                             \
    return impl_->shared_out();                                                                            \
  }                                                                                                        \
  template <precision T, backend B>                                                                        \
  std::size_t CLASS<T, B>::workspace_size() const {                                                        \
    return impl_->workspace_size();                                                                        \
  }                                                                                                        \
  template <precision T, backend B>                                                                        \
  decomposition CLASS<T, B>::decomp() const {                                                              \
    return impl_->layout().decomp;                                                                         \
  }                                                                                                        \
  template <precision T, backend B>                                                                        \
  std::array<int, 2> CLASS<T, B>::grid() const {                                                           \
    return {impl_->layout().p0, impl_->layout().p1};                                                       \
  }                                                                                                        \
  template <precision T, backend B>                                                                        \
  std::string CLASS<T, B>::strategy() const {                                                              \
    return impl_->strategy_name();                                                                         \
  }                                                                                                        \
  template <precision T, backend B>                                                                        \
  std::vector<std::string> CLASS<T, B>::candidates() const {                                               \
    return detail::applicable_names(impl_->strategies());                                                  \
  }                                                                                                        \
  template <precision T, backend B>                                                                        \
  std::vector<std::pair<std::string, double>> CLASS<T, B>::planner_seconds() const {                       \
    return detail::timed_names(impl_->strategies(), impl_->measured());                                    \
  }

TORU_FFT3D_COMMON(fft3d, false)
TORU_FFT3D_COMMON(fft3d_r2c, true)
#undef TORU_FFT3D_COMMON

template <precision T, backend B>
void fft3d<T, B>::forward(const complex_type* in, complex_type* out, scale s) const {
  impl_->execute(true, in, out, nullptr, s);
}
template <precision T, backend B>
void fft3d<T, B>::forward(const complex_type* in, complex_type* out, void* ws, scale s) const {
  impl_->execute(true, in, out, ws, s);
}
template <precision T, backend B>
void fft3d<T, B>::backward(const complex_type* in, complex_type* out, scale s) const {
  impl_->execute(false, in, out, nullptr, s);
}
template <precision T, backend B>
void fft3d<T, B>::backward(const complex_type* in, complex_type* out, void* ws, scale s) const {
  impl_->execute(false, in, out, ws, s);
}

namespace detail {
// The span checks ride on the agreement of the execute that follows (no collective of their own).
inline std::exception_ptr check_spans(std::size_t in_size, std::int64_t in_need, std::size_t out_size,
                                      std::int64_t out_need) {
  try {
    expect(static_cast<std::int64_t>(in_size) >= in_need, "in", fmt::format("at least {} elements", in_need),
           std::to_string(in_size));
    expect(static_cast<std::int64_t>(out_size) >= out_need, "out",
           fmt::format("at least {} elements (alloc_size())", out_need), std::to_string(out_size));
  } catch (...) {
    return std::current_exception();
  }
  return nullptr;
}
}  // namespace detail

template <precision T, backend B>
void fft3d<T, B>::forward(std::span<const complex_type> in, std::span<complex_type> out, scale s) const {
  const toru::defer_error check(
      detail::check_spans(in.size(), impl_->inbox().extent(), out.size(), impl_->alloc_size()));
  impl_->execute(true, in.data(), out.data(), nullptr, s);
}
template <precision T, backend B>
void fft3d<T, B>::backward(std::span<const complex_type> in, std::span<complex_type> out, scale s) const {
  const toru::defer_error check(
      detail::check_spans(in.size(), impl_->outbox().extent(), out.size(), impl_->alloc_size()));
  impl_->execute(false, in.data(), out.data(), nullptr, s);
}

template <precision T, backend B>
void fft3d_r2c<T, B>::forward(const T* in, complex_type* out, scale s) const {
  impl_->execute(true, in, out, nullptr, s);
}
template <precision T, backend B>
void fft3d_r2c<T, B>::forward(const T* in, complex_type* out, void* ws, scale s) const {
  impl_->execute(true, in, out, ws, s);
}
template <precision T, backend B>
void fft3d_r2c<T, B>::backward(const complex_type* in, T* out, scale s) const {
  impl_->execute(false, in, out, nullptr, s);
}
template <precision T, backend B>
void fft3d_r2c<T, B>::backward(const complex_type* in, T* out, void* ws, scale s) const {
  impl_->execute(false, in, out, ws, s);
}

template <precision T, backend B>
void fft3d<T, B>::start_forward(const complex_type* in, complex_type* out, scale s) const {
  toru::detail::start_split_phase(phase_, "toru::fft::fft3d",
                                  [this, in, out, s] { impl_->execute(true, in, out, nullptr, s); });
}
template <precision T, backend B>
void fft3d<T, B>::start_backward(const complex_type* in, complex_type* out, scale s) const {
  toru::detail::start_split_phase(phase_, "toru::fft::fft3d",
                                  [this, in, out, s] { impl_->execute(false, in, out, nullptr, s); });
}
template <precision T, backend B>
void fft3d<T, B>::wait() const {
  toru::detail::wait_split_phase(phase_, "toru::fft::fft3d");
}
template <precision T, backend B>
void fft3d_r2c<T, B>::start_forward(const T* in, complex_type* out, scale s) const {
  toru::detail::start_split_phase(phase_, "toru::fft::fft3d_r2c",
                                  [this, in, out, s] { impl_->execute(true, in, out, nullptr, s); });
}
template <precision T, backend B>
void fft3d_r2c<T, B>::start_backward(const complex_type* in, T* out, scale s) const {
  toru::detail::start_split_phase(phase_, "toru::fft::fft3d_r2c",
                                  [this, in, out, s] { impl_->execute(false, in, out, nullptr, s); });
}
template <precision T, backend B>
void fft3d_r2c<T, B>::wait() const {
  toru::detail::wait_split_phase(phase_, "toru::fft::fft3d_r2c");
}

template <precision T, backend B>
request fft3d<T, B>::forward_init(const complex_type* in, complex_type* out, scale s) const {
  return detail::bound_request(*impl_, "toru::fft::fft3d (persistent forward)", true, in, out, s);
}
template <precision T, backend B>
request fft3d<T, B>::backward_init(const complex_type* in, complex_type* out, scale s) const {
  return detail::bound_request(*impl_, "toru::fft::fft3d (persistent backward)", false, in, out, s);
}
template <precision T, backend B>
request fft3d_r2c<T, B>::forward_init(const T* in, complex_type* out, scale s) const {
  return detail::bound_request(*impl_, "toru::fft::fft3d_r2c (persistent forward)", true, in, out, s);
}
template <precision T, backend B>
request fft3d_r2c<T, B>::backward_init(const complex_type* in, T* out, scale s) const {
  return detail::bound_request(*impl_, "toru::fft::fft3d_r2c (persistent backward)", false, in, out, s);
}

}  // namespace toru::fft
