// SPDX-License-Identifier: BSD-3-Clause
#include "toru/fft/fft3d.hpp"

#include <fmt/format.h>

#include "fft3d_members.hpp"

namespace toru::fft {

local_layout local_size_3d(int nranks, int rank, std::array<std::int64_t, 3> n, const options3d& opts, bool r2c,
                           bool device) {
  expect(nranks >= 1 && rank >= 0 && rank < nranks, "rank", fmt::format("in [0, {})", nranks), std::to_string(rank));
  const detail::layout3d L = detail::make_layout3d(nranks, rank, n, r2c, opts, device);
  local_layout out;
  out.in = r2c ? L.real_in : L.s0;
  out.out = L.out;
  out.alloc = L.alloc;
  out.decomp = L.decomp;
  out.grid = {L.p0, L.p1};
  return out;
}

template class fft3d<float, fftw>;
template class fft3d<double, fftw>;
template class fft3d_r2c<float, fftw>;
template class fft3d_r2c<double, fftw>;

}  // namespace toru::fft
