// SPDX-License-Identifier: BSD-3-Clause
#include "toru/fft/fft1d.hpp"

#include "plan1d.hpp"
#include "toru/core/error.hpp"

namespace toru::fft {

local_layout1d local_size_1d(int nranks, int rank, std::int64_t n, const options1d& opts) {
  expect(nranks >= 1 && rank >= 0 && rank < nranks, "rank", "in [0, nranks)", std::to_string(rank));
  return detail::make_layout1d(nranks, rank, n, opts);
}

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

template class fft1d<float, fftw>;
template class fft1d<double, fftw>;
#if TORU_ENABLE_CUDA
template class fft1d<float, cufft>;
template class fft1d<double, cufft>;
#endif

}  // namespace toru::fft
