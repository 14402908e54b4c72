// SPDX-License-Identifier: BSD-3-Clause
#include "toru/fft/fft1d.hpp"

#include "fft1d_members.hpp"

namespace toru::fft {

local_layout1d local_size_1d(int nranks, int rank, std::int64_t n, const options1d& opts) {
  expect(nranks >= 1 && rank >= 0 && rank < nranks, "rank", "in [0, nranks)", std::to_string(rank));
  return detail::make_layout1d(nranks, rank, n, opts);
}

template class fft1d<float, fftw>;
template class fft1d<double, fftw>;

}  // namespace toru::fft
