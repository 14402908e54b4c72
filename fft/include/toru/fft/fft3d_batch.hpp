// SPDX-License-Identifier: BSD-3-Clause
// toru::fft::fft3d_batch: the same 3D c2c transform of `howmany` fields at once (velocity
// components, species), each transpose moving every field in one exchange instead of one exchange
// per field.
//
//   toru::fft::fft3d_batch<double> plan(MPI_COMM_WORLD, {n, n, n}, 3);   // u, v, w interleaved
//   std::vector<std::complex<double>> in(plan.alloc_size()), out(plan.alloc_size());
//   plan.forward(in.data(), out.data());   // point p of plan.inbox(), field f at in[p * 3 + f]
#pragma once

#include <mpi.h>

#include <array>
#include <complex>
#include <cstdint>
#include <memory>

#include "toru/fft/backend.hpp"
#include "toru/fft/options.hpp"

namespace toru::fft {

/// How the fields share one array: interleaved (field f of point p at p * howmany + f) or planar
/// (field f's box at f * box.extent(), as howmany separate arrays end to end).
enum class fields { interleaved, planar };

namespace detail {
class batch_plan;
}

/// Collective plans with fft3d's agreement rules (n, howmany, layout, precision and options equal
/// on every rank). Pencils: input with axis 2 whole on a p0 x p1 grid; output in the same pencils
/// (order::natural) or with axis 0 whole (order::transposed, one exchange fewer). Host (FFTW) only.
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

 private:
  std::unique_ptr<detail::batch_plan> impl_;
};

}  // namespace toru::fft
