// SPDX-License-Identifier: BSD-3-Clause
// The members of the public fft1d classes for every backend tag: fft1d.cpp instantiates them
// for fftw, instances_cufft.cpp for cufft when toru is built with CUDA.
#pragma once

#include "bound_request.hpp"
#include "plan1d.hpp"
#include "toru/core/error.hpp"
#include "toru/detail/split_phase.hpp"
#include "toru/fft/fft1d.hpp"

namespace toru::fft {

template <precision T, backend B>
fft1d<T, B>::fft1d(MPI_Comm comm, std::int64_t n, options1d opts)
    : impl_(std::make_unique<detail::plan1d<T>>(comm, n, opts, backend_traits<B>::device_memory)) {}
template <precision T, backend B>
fft1d<T, B>::~fft1d() = default;
template <precision T, backend B>
fft1d<T, B>::fft1d(fft1d&&) noexcept = default;
template <precision T, backend B>
fft1d<T, B>& fft1d<T, B>::operator=(fft1d&&) noexcept = default;

template <precision T, backend B>
std::int64_t fft1d<T, B>::size() const {
  return impl_->n;
}
template <precision T, backend B>
std::int64_t fft1d<T, B>::n1() const {
  return impl_->n1;
}
template <precision T, backend B>
std::int64_t fft1d<T, B>::n2() const {
  return impl_->n2;
}
template <precision T, backend B>
std::string fft1d<T, B>::strategy() const {
  return impl_->strategy_name();
}
template <precision T, backend B>
std::vector<std::string> fft1d<T, B>::candidates() const {
  return detail::applicable_names(impl_->strategies());
}
template <precision T, backend B>
std::vector<std::pair<std::string, double>> fft1d<T, B>::planner_seconds() const {
  return detail::timed_names(impl_->strategies(), impl_->measured());
}
template <precision T, backend B>
std::int64_t fft1d<T, B>::in_start() const {
  return impl_->in_start;
}
template <precision T, backend B>
std::int64_t fft1d<T, B>::in_count() const {
  return impl_->in_count;
}
template <precision T, backend B>
std::int64_t fft1d<T, B>::out_start() const {
  return impl_->out_start;
}
template <precision T, backend B>
std::int64_t fft1d<T, B>::out_count() const {
  return impl_->out_count;
}
template <precision T, backend B>
std::int64_t fft1d<T, B>::alloc_size() const {
  return impl_->alloc;
}
template <precision T, backend B>
std::size_t fft1d<T, B>::workspace_size() const {
  return impl_->workspace_size();
}
template <precision T, backend B>
void fft1d<T, B>::forward(const complex_type* in, complex_type* out, scale s) const {
  impl_->execute(true, in, out, nullptr, s);
}
template <precision T, backend B>
void fft1d<T, B>::forward(const complex_type* in, complex_type* out, void* ws, scale s) const {
  impl_->execute(true, in, out, ws, s);
}
template <precision T, backend B>
void fft1d<T, B>::backward(const complex_type* in, complex_type* out, scale s) const {
  impl_->execute(false, in, out, nullptr, s);
}
template <precision T, backend B>
void fft1d<T, B>::backward(const complex_type* in, complex_type* out, void* ws, scale s) const {
  impl_->execute(false, in, out, ws, s);
}

template <precision T, backend B>
void fft1d<T, B>::start_forward(const complex_type* in, complex_type* out, scale s) const {
  toru::detail::start_split_phase(phase_, "toru::fft::fft1d",
                                  [this, in, out, s] { impl_->execute(true, in, out, nullptr, s); });
}
template <precision T, backend B>
void fft1d<T, B>::start_backward(const complex_type* in, complex_type* out, scale s) const {
  toru::detail::start_split_phase(phase_, "toru::fft::fft1d",
                                  [this, in, out, s] { impl_->execute(false, in, out, nullptr, s); });
}
template <precision T, backend B>
void fft1d<T, B>::wait() const {
  toru::detail::wait_split_phase(phase_, "toru::fft::fft1d");
}

template <precision T, backend B>
request fft1d<T, B>::forward_init(const complex_type* in, complex_type* out, scale s) const {
  return detail::bound_request(*impl_, "toru::fft::fft1d (persistent forward)", true, in, out, s);
}
template <precision T, backend B>
request fft1d<T, B>::backward_init(const complex_type* in, complex_type* out, scale s) const {
  return detail::bound_request(*impl_, "toru::fft::fft1d (persistent backward)", false, in, out, s);
}

}  // namespace toru::fft
