// SPDX-License-Identifier: BSD-3-Clause
// toru::fft::fft3d_mixed: 3D transforms of complex data that are, per axis, either the DFT (a
// periodic axis) or one of FFTW's real-to-real kinds applied to the real and the imaginary parts
// alike (an axis with walls): a channel periodic in x and y with Neumann (dct2) or Dirichlet (dst2)
// walls in z, as Poisson and Helmholtz solvers for channel flows need. Distributed over pencils as
// fft3d_r2r. toru::fft::fft3d_mixed_r2c: the same on real data, at half the work: the r2c
// transform along axis 2 (periodic), then the kinds or the DFT along axes 1 and 0.
//
//   using toru::fft::r2r_kind, toru::fft::periodic;
//   toru::fft::fft3d_mixed<double> plan(MPI_COMM_WORLD, {nx, ny, nz}, {periodic, periodic, r2r_kind::dct2});
//   std::vector<std::complex<double>> u(plan.alloc_size()), uh(plan.alloc_size());
//   plan.forward(u.data(), uh.data());                            // in plan.inbox(), out plan.outbox()
//   plan.backward(uh.data(), u.data(), toru::fft::scale::full);   // u again
//
//   // Real data, walls in y (wall-normal axis 1), periodic x and z (z last: the r2c axis):
//   toru::fft::fft3d_mixed_r2c<double> channel(MPI_COMM_WORLD, {nx, ny, nz}, {periodic, r2r_kind::dct1, periodic});
//   std::vector<std::complex<double>> ch(channel.alloc_size());     // the spectrum; also holds the reals
//   std::vector<double> f(2 * channel.alloc_size());              // rows padded as fft3d_r2c's
//   channel.forward(f.data(), ch.data());
#pragma once

#include <mpi.h>

#include <array>
#include <complex>
#include <cstdint>
#include <memory>
#include <optional>

#include "toru/fft/fft3d_r2r.hpp"

namespace toru::fft {

/// The transform along one axis of a mixed plan: an r2r kind, or `periodic` (the DFT).
using axis_transform = std::optional<r2r_kind>;
inline constexpr axis_transform periodic = std::nullopt;

/// Collective plans; the agreement rules of fft3d (n, axes and options equal on every rank, the same
/// error everywhere otherwise). Data: complex, in toru's pencils (inbox(): axis 2 whole, ranks on a
/// p0 x p1 grid over axes 0 and 1); output in the same layout (order::natural) or in x-pencils
/// (order::transposed, one exchange fewer). Host backend (FFTW) only.
/// forward: the DFT with FFTW's sign -1 on periodic axes, the kind on the others; backward: sign +1
/// and the inverse kinds. Unnormalized; scale::full divides by the product of n (periodic axes) and
/// the kinds' logical sizes, so backward(forward(x), scale::full) = x.
template <precision T>
class fft3d_mixed {
 public:
  using complex_type = std::complex<T>;

  fft3d_mixed(MPI_Comm comm, std::array<std::int64_t, 3> n, std::array<axis_transform, 3> axes, options3d opts = {});
  ~fft3d_mixed();
  fft3d_mixed(fft3d_mixed&&) noexcept;
  fft3d_mixed& operator=(fft3d_mixed&&) noexcept;

  const box3d& inbox() const;
  const box3d& outbox() const;
  /// Complex elements each buffer passed as in or out must hold.
  std::int64_t alloc_size() const;
  std::array<int, 2> grid() const;
  const std::array<axis_transform, 3>& axes() const;

  /// Collective. in == out is in place; otherwise in is preserved.
  void forward(const complex_type* in, complex_type* out, scale s = scale::none) const;
  /// Collective: from outbox() to inbox().
  void backward(const complex_type* in, complex_type* out, scale s = scale::none) const;
  /// Persistent forms (toru/core/request.hpp), as fft3d::forward_init: collective, the arguments
  /// checked once here (the same errors, on every rank); each start() runs with no checks. The plan
  /// must outlive the requests.
  request forward_init(const complex_type* in, complex_type* out, scale s = scale::none) const;
  request backward_init(const complex_type* in, complex_type* out, scale s = scale::none) const;

 private:
  std::unique_ptr<detail::r2r_plan> impl_;
};

/// Real input: forward is the r2c DFT along axis 2 (which must be periodic), then axes[1] and
/// axes[0] (the DFT or a kind) on the complex result; backward the inverse kinds, then c2r. The
/// complex side has n0 x n1 x (n2/2+1) points (Hermitian along axis 2, as fft3d_r2c); real rows
/// along axis 2 are padded to 2*(n2/2+1) reals (inbox().row_stride), so in may alias out. The
/// agreement rules, layouts and scaling of fft3d_mixed (scale::full divides by n2 times the other
/// axes' sizes). Host backend (FFTW) only.
template <precision T>
class fft3d_mixed_r2c {
 public:
  using complex_type = std::complex<T>;

  fft3d_mixed_r2c(MPI_Comm comm, std::array<std::int64_t, 3> n, std::array<axis_transform, 3> axes,
                  options3d opts = {});
  ~fft3d_mixed_r2c();
  fft3d_mixed_r2c(fft3d_mixed_r2c&&) noexcept;
  fft3d_mixed_r2c& operator=(fft3d_mixed_r2c&&) noexcept;

  /// Reals: size[2] = n2, row_stride = 2*(n2/2+1).
  const box3d& inbox() const;
  /// Complex: at most n2/2+1 along axis 2.
  const box3d& outbox() const;
  /// Complex elements each buffer holds (a real buffer: twice as many reals).
  std::int64_t alloc_size() const;
  std::array<int, 2> grid() const;
  const std::array<axis_transform, 3>& axes() const;

  /// Collective. in (reals) may alias out; otherwise in is preserved.
  void forward(const T* in, complex_type* out, scale s = scale::none) const;
  /// Collective: from outbox() to the padded real inbox(). in is preserved unless in == out.
  void backward(const complex_type* in, T* out, scale s = scale::none) const;
  /// Persistent forms, as fft3d_mixed's.
  request forward_init(const T* in, complex_type* out, scale s = scale::none) const;
  request backward_init(const complex_type* in, T* out, scale s = scale::none) const;

 private:
  std::unique_ptr<detail::r2r_plan> impl_;
};

}  // namespace toru::fft
