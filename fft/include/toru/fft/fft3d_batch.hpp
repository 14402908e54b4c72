// SPDX-License-Identifier: BSD-3-Clause
// toru::fft::fft3d_batch and fft3d_batch_r2c: the same 3D transform (c2c, or r2c / c2r) of
// `howmany` fields at once (velocity components, species) with one plan and one call. Where the
// options allow fft3d's own plan (always, unless options.grid forces a pencil grid that leaves a
// rank without points), that plan runs field by field on fft3d's boxes; otherwise a pencil
// pipeline moves every field in one exchange per transpose (docs/fft.md, Batched fields).
//
//   toru::fft::fft3d_batch<double> plan(MPI_COMM_WORLD, {n, n, n}, 3);   // u, v, w interleaved
//   std::vector<std::complex<double>> in(plan.alloc_size()), out(plan.alloc_size());
//   plan.forward(in.data(), out.data());   // point p of plan.inbox(), field f at in[p * 3 + f]
//
//   toru::fft::fft3d_batch_r2c<double> r2c(MPI_COMM_WORLD, {n, n, n}, 3);  // real u, v, w
//   std::vector<double> u(2 * r2c.alloc_size());                           // padded rows, as fft3d_r2c
//   std::vector<std::complex<double>> uh(r2c.alloc_size());
//   r2c.forward(u.data(), uh.data());      // real offset m of r2c.inbox(), field f at u[m * 3 + f]
#pragma once

#include <mpi.h>

#include <array>
#include <complex>
#include <cstdint>
#include <memory>

#include "toru/core/request.hpp"
#include "toru/fft/backend.hpp"
#include "toru/fft/options.hpp"

namespace toru::fft {

/// How the fields share one array: interleaved (field f of point p at p * howmany + f) or planar
/// (field f's box at f * box.extent(), as howmany separate arrays end to end).
enum class fields { interleaved, planar };

namespace detail {
class batch_plan;
class batch_r2c_plan;
}  // namespace detail

/// Collective plans with fft3d's agreement rules (n, howmany, layout, precision and options equal
/// on every rank). Boxes: fft3d's for the same n and options (inbox() axis 2 whole on a p0 x p1
/// grid, {P, 1} for a slab; outbox() inbox() again for order::natural, fft3d's transposed layout
/// otherwise); with a forced grid fft3d refuses, pencils with the output's axis 0 whole
/// (order::transposed). Read the boxes' order, not an assumed one. Host (FFTW) only.
template <precision T>
class fft3d_batch {
 public:
  using complex_type = std::complex<T>;

  fft3d_batch(MPI_Comm comm, std::array<std::int64_t, 3> n, int howmany, fields layout = fields::interleaved,
              options3d opts = {});
  ~fft3d_batch();
  fft3d_batch(fft3d_batch&&) noexcept;
  fft3d_batch& operator=(fft3d_batch&&) noexcept;

  /// One field's boxes.
  const box3d& inbox() const;
  const box3d& outbox() const;
  int howmany() const;
  /// Complex elements each buffer holds (all fields).
  std::int64_t alloc_size() const;
  std::array<int, 2> grid() const;

  /// Collective: every field forward. in == out is in place; otherwise in is preserved.
  void forward(const complex_type* in, complex_type* out, scale s = scale::none) const;
  /// Collective: every field backward, from outbox() to inbox().
  void backward(const complex_type* in, complex_type* out, scale s = scale::none) const;

  /// Persistent forms (toru/core/request.hpp), as fft3d::forward_init: collective, the arguments
  /// checked once here (the same errors, on every rank); each start() runs with no checks. The plan
  /// must outlive the requests.
  request forward_init(const complex_type* in, complex_type* out, scale s = scale::none) const;
  request backward_init(const complex_type* in, complex_type* out, scale s = scale::none) const;

 private:
  std::unique_ptr<detail::batch_plan> impl_;
};

/// Real-to-complex forward / complex-to-real backward of `howmany` real fields: fft3d_r2c's
/// transform (the complex side n0 x n1 x (n2/2+1), FFTW's sign and Hermitian half) in fft3d_batch's
/// boxes and field layouts (fft3d_r2c's boxes where it takes the options). Collective; the
/// agreement rules of fft3d_batch (n, howmany, layout, precision and options equal on every rank,
/// the same error everywhere otherwise). Host (FFTW) only.
/// Real side (inbox()): axis 2 whole, rows padded to row_stride = 2*(n2/2+1) reals as fft3d_r2c's;
/// interleaved: field f of the real at memory offset m of inbox() at m * howmany + f; planar: field
/// f's padded box at f * inbox().extent(). Complex side (outbox()): as fft3d_batch's, interleaved
/// or planar by outbox().extent(). Unnormalized; scale::full divides by n0 * n1 * n2.
template <precision T>
class fft3d_batch_r2c {
 public:
  using complex_type = std::complex<T>;

  fft3d_batch_r2c(MPI_Comm comm, std::array<std::int64_t, 3> n, int howmany, fields layout = fields::interleaved,
                  options3d opts = {});
  ~fft3d_batch_r2c();
  fft3d_batch_r2c(fft3d_batch_r2c&&) noexcept;
  fft3d_batch_r2c& operator=(fft3d_batch_r2c&&) noexcept;

  /// One field's boxes: the padded real input, the complex output.
  const box3d& inbox() const;
  const box3d& outbox() const;
  int howmany() const;
  /// Complex elements a complex buffer holds (all fields); a real buffer holds twice as many reals.
  std::int64_t alloc_size() const;
  std::array<int, 2> grid() const;

  /// Collective: every field forward, reals of inbox() to complex outbox(). in may alias out (in
  /// place); otherwise in is preserved. The padding of the real rows is not read.
  void forward(const T* in, complex_type* out, scale s = scale::none) const;
  /// Collective: every field backward, outbox() to the padded reals of inbox(). in is preserved
  /// unless it aliases out; the padding of out's rows is left as it was.
  void backward(const complex_type* in, T* out, scale s = scale::none) const;

  /// Persistent forms (toru/core/request.hpp), as fft3d::forward_init: collective, the arguments
  /// checked once here (the same errors, on every rank); each start() runs with no checks. The plan
  /// must outlive the requests.
  request forward_init(const T* in, complex_type* out, scale s = scale::none) const;
  request backward_init(const complex_type* in, T* out, scale s = scale::none) const;

 private:
  std::unique_ptr<detail::batch_r2c_plan> impl_;
};

}  // namespace toru::fft
