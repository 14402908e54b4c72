// SPDX-License-Identifier: BSD-3-Clause
// The public plans for the cufft tag; built only when toru is built with CUDA (the tag's
// backend_traits::enabled is false otherwise, and the classes refuse to instantiate).
#include "fft1d_members.hpp"
#include "fft3d_members.hpp"

namespace toru::fft {

template class fft1d<float, cufft>;
template class fft1d<double, cufft>;
template class fft3d<float, cufft>;
template class fft3d<double, cufft>;
template class fft3d_r2c<float, cufft>;
template class fft3d_r2c<double, cufft>;

}  // namespace toru::fft
