// SPDX-License-Identifier: BSD-3-Clause
// What the batched plans (fft3d_batch, fft3d_batch_r2c) share: the collective agreement on their
// arguments, a point's fields as one MPI element, the planar <-> interleaved copies and the FFTW
// guru plans of complex lines over (lines x fields).
#pragma once

#include <mpi.h>

#include <array>
#include <complex>
#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "fftw_api.hpp"
#include "toru/core/error.hpp"
#include "toru/fft/fft3d_batch.hpp"

namespace toru::fft::detail {

/// Collective: n, howmany, layout, precision, kind and options equal on every rank and valid, or
/// the same toru::error on every rank. kind: 0 c2c, 1 r2c (plans of both kinds on one
/// communicator at once are a mismatch, not a hang).
void agree_on_batch(MPI_Comm comm, const char* call, std::array<std::int64_t, 3> n, int howmany, fields layout,
                    std::size_t real_bytes, int kind, const options3d& opts);

/// A point's `howmany` complex values as one committed MPI datatype, freed with its owner (unless
/// MPI is finalized by then).
class fields_type {
 public:
  fields_type(int howmany, MPI_Datatype complex_type);
  ~fields_type();
  fields_type(const fields_type&) = delete;
  fields_type& operator=(const fields_type&) = delete;
  MPI_Datatype get() const { return t_; }

 private:
  MPI_Datatype t_ = MPI_DATATYPE_NULL;
};

/// Planar (field-major, field f's `points` at f * points) to interleaved (point-major) and back.
template <class E>
void interleave(const E* planar, E* inter, std::int64_t points, std::int64_t howmany) {
  for (std::int64_t f = 0; f < howmany; ++f)
    for (std::int64_t p = 0; p < points; ++p) inter[p * howmany + f] = planar[f * points + p];
}
template <class E>
void split(const E* inter, E* planar, std::int64_t points, std::int64_t howmany) {
  for (std::int64_t f = 0; f < howmany; ++f)
    for (std::int64_t p = 0; p < points; ++p) planar[f * points + p] = inter[p * howmany + f];
}

/// Every field of every complex line along `axis` of the interleaved box bx (axis whole and
/// contiguous: `len` points a line, a point's fields adjacent); null plan when bx is empty.
template <class T>
void plan_batch_lines(owned_fftw_plan<T>& l, const box3d& bx, int axis, std::int64_t howmany, int sign, void* in,
                      void* out, unsigned flags) {
  using api = fftw_api<T>;
  const std::int64_t len = bx.size[axis], F = howmany;
  const std::int64_t count = len > 0 ? bx.count() / len : 0;
  if (count == 0) return;
  const typename api::iodim dim{len, F, F};
  const typename api::iodim many[2] = {{count, len * F, len * F}, {F, 1, 1}};
  l.p = api::guru_dft(1, &dim, 2, many, in, out, sign, flags);
  if (!l.p) throw error(errc::fftw, fmt::format("FFTW could not plan {} batched lines of {}", count * F, len));
}

}  // namespace toru::fft::detail
