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
// backward_vector. Batched (transform_options::batched), the three components are interleaved
// and each transpose moves all three in one exchange: toru's fft3d_batch_r2c, FFTW-MPI's
// plan_many with howmany = 3. Unbatched (the default, faster on toru today: docs/dns.md), they
// are planar and transformed one at a time by the scalar plan.
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
  bool batched = false;  // vector fields in one batched transform (toru: fft3d_batch_r2c) instead of three
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
  /// Whether the vector transforms run their three components through one batched plan.
  virtual bool batched() const { return false; }
  /// Where the vector transforms keep component c of the field's offset i (of the real or the
  /// spectral box): batched, interleaved at 3 i + c; otherwise planar, at c * component_stride() + i
  /// (spectral) or c * 2 component_stride() + i (real), each component 64-byte aligned as FFTW's
  /// new-array execute needs. Vector buffers hold 3 component_stride() modes or twice as many reals.
  std::int64_t component_stride() const { return (alloc() + 3) / 4 * 4; }
  /// Collective: the three components of a vector field (layout above). `in` may be overwritten.
  /// Unless overridden, one component at a time through forward / backward.
  virtual void forward_vector(double* in, cpx* out) const;
  virtual void backward_vector(cpx* in, double* out) const;
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
std::unique_ptr<transform> make_fftw_mpi_transform(MPI_Comm comm, std::int64_t n, bool batched);

}  // namespace toru::dns
