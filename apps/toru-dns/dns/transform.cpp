// SPDX-License-Identifier: BSD-3-Clause
#include "dns/transform.hpp"

#include <string>

#include "toru/core/error.hpp"

namespace toru::dns {

std::unique_ptr<transform> make_transform(MPI_Comm comm, std::int64_t n, const transform_options& opts) {
  // Arguments are the same on every rank (they come from the command line), so these checks
  // fail everywhere or nowhere.
  expect(n >= 1, "n", "a grid size >= 1", std::to_string(n));
  if (opts.backend == fft_backend::fftw_mpi) {
    expect(opts.decomp != fft::decomposition::pencil, "decomposition", "slab or auto with FFTW-MPI (slab only)",
           "pencil");
    return make_fftw_mpi_transform(comm, n, opts.batched);
  }
  return opts.batched ? make_toru_batch_transform(comm, n, opts.decomp) : make_toru_transform(comm, n, opts.decomp);
}

void transform::forward_vector(double* in, cpx* out) const {
  const std::int64_t s = component_stride();
  for (int c = 0; c < 3; ++c) forward(in + c * 2 * s, out + c * s);
}

void transform::backward_vector(cpx* in, double* out) const {
  const std::int64_t s = component_stride();
  for (int c = 0; c < 3; ++c) backward(in + c * s, out + c * 2 * s);
}

}  // namespace toru::dns
