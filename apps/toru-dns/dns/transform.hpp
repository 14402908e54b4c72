// SPDX-License-Identifier: BSD-3-Clause
// The real-to-complex 3D FFT the solver runs on, behind one small interface so that toru's FFT and
// FFTW-MPI do exactly the same work around them (same layouts, same copies, same scaling): the
// comparison of --fft toru and --fft fftw-mpi is then a comparison of the transforms alone.
//
// Both backends keep the forward output in transposed order (no transposes back), as a spectral
// solver never needs the natural order: toru with order::transposed, FFTW-MPI with
// FFTW_MPI_TRANSPOSED_OUT / _IN. The spectral box (low, size, memory order) says where each mode is.
//
// Vector fields (the velocity, the vorticity, u x omega) go through forward_vector /
// backward_vector: the three components at once, interleaved. Batched (the default), each
// transpose moves all three in one exchange: toru's fft3d_batch_r2c, FFTW-MPI's plan_many with
// howmany = 3. Unbatched (toru only): fft3d_r2c per component.
#pragma once

#include <mpi.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "dns/aligned.hpp"
#include "toru/fft/options.hpp"

namespace toru::dns {

enum class fft_backend { toru, fftw_mpi };

struct transform_options {
  fft_backend backend = fft_backend::toru;
  fft::decomposition decomp = fft::decomposition::automatic;  // fftw_mpi: slab only
  bool batched = true;  // toru: vector fields through fft3d_batch_r2c; false: fft3d_r2c per component
};

/// An n x n x n r2c/c2r transform over a communicator. Unnormalized both ways.
class transform {
 public:
  virtual ~transform() = default;
  /// Real (physical) box: rows along axis 2 padded to 2*(n/2+1) doubles, as FFTW-MPI.
  virtual const fft::box3d& real_box() const = 0;
  /// Spectral box: n x n x (n/2+1) modes, in the backend's transposed memory order.
  virtual const fft::box3d& spec_box() const = 0;
  /// Complex elements every spectral buffer holds; real buffers hold twice as many doubles.
  virtual std::int64_t alloc() const = 0;
  /// Collective. `in` may be overwritten.
  virtual void forward(double* in, cpx* out) const = 0;
  /// Collective. `in` may be overwritten.
  virtual void backward(cpx* in, double* out) const = 0;
  /// Collective: the three components of a vector field, interleaved (component c of real offset m
  /// at in[3 m + c], of spectral offset i at out[3 i + c]); buffers hold three times a single
  /// field's. `in` may be overwritten.
  virtual void forward_vector(double* in, cpx* out) const = 0;
  virtual void backward_vector(cpx* in, double* out) const = 0;
  /// Whether the vector transforms move their three components in one exchange per transpose.
  virtual bool batched() const = 0;
  /// "toru", "fftw-mpi"
  virtual std::string backend_name() const = 0;
  virtual fft::decomposition decomp() const = 0;
  virtual std::array<int, 2> grid() const = 0;
};

/// Collective over comm; throws toru::error on every rank for a size or option the backend
/// cannot do (n < 1, FFTW-MPI with a pencil decomposition).
std::unique_ptr<transform> make_transform(MPI_Comm comm, std::int64_t n, const transform_options& opts);

std::unique_ptr<transform> make_toru_transform(MPI_Comm comm, std::int64_t n, fft::decomposition decomp);
std::unique_ptr<transform> make_toru_batch_transform(MPI_Comm comm, std::int64_t n, fft::decomposition decomp);
std::unique_ptr<transform> make_fftw_mpi_transform(MPI_Comm comm, std::int64_t n);

}  // namespace toru::dns
