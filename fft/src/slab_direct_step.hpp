// SPDX-License-Identifier: BSD-3-Clause
// The slab through FFTW-MPI's middle layout M without an exchange (docs/fft.md, "Direct
// window"): on one node the ranks' parts of M, placed end to end in a node_array, are the whole M
// array [i1][i0][w]. So the local FFTs' own passes do the redistribution: each 2D FFT of a plane
// here runs into a plane-sized scratch (in cache) and its rows go straight from there to their
// places in every rank's part of M; for natural order, the axis-0 FFTs run in place in this rank's
// part of M and, after a second fence, each rank gathers its planes' rows from every rank's part
// straight into the caller's buffer. Backward is the reverse (natural: the caller's rows go straight
// into every rank's part). Each element crosses memory once per exchange; nothing is packed, sent
// or copied out of a node buffer. The FFTs never write the node arrays with
// their large power-of-two strides (n0 * w apart for M's i1): measured, that made FFTW's passes
// miss the cache on every line (docs/fft.md).
#pragma once

#include <complex>
#include <cstdint>

#include <memory>
#include <vector>

#include "column_fft.hpp"
#include "fftw_api.hpp"
#include "local_fft.hpp"
#include "node_window.hpp"
#include "steps.hpp"

namespace toru::fft::detail {

/// Replaces a slab plan's whole forward (or backward): 2D FFTs over (i1, i2) of this rank's
/// planes and 1D FFTs along i0 of this rank's i1 rows. w = complex points along axis 2 (n2, or
/// n2/2+1 for r2c); real rows of r2c are padded to 2w reals (the plan's real layout).
template <class T>
class slab_direct_step final : public step<T> {
 public:
  /// m: the node array of M parts (this rank's = its i1 rows x n0 x w). scratch_a/b: planning
  /// buffers of the caller's stage size.
  slab_direct_step(int P, int me, std::int64_t n0, std::int64_t n1, std::int64_t n2, bool r2c, bool forward,
                   bool natural, unsigned flags, const node_array* m, void* scratch_a, void* scratch_b);
  ~slab_direct_step() override;
  slab_direct_step(const slab_direct_step&) = delete;
  slab_direct_step& operator=(const slab_direct_step&) = delete;
  void run(const void* src, void* dst, const work_buffers& ws) const override;
  /// r2c: from now on the caller's real planes are packed (n1 x n2 reals, rows unpadded, as a
  /// caller's own array) instead of the plan's padded layout; replans the plane FFTs. Not thread-safe.
  void use_packed_real();
  /// Natural order: whether use_shared can take this transform (the same answer on every rank).
  static bool can_share(std::int64_t n0, std::int64_t n2, bool r2c);
  /// Natural order: `parts` holds every rank's buffer, as this rank addresses it, of a caller's
  /// natural-order complex array (the forward's out, the backward's in: the plan's shared_out()).
  /// From now on a run whose complex side is parts[me] runs the axis-0 FFTs straight between M and
  /// those buffers: no gather (forward) or scatter (backward) pass over the array. Not thread-safe.
  void use_shared(const std::vector<std::complex<T>*>& parts, int me);

 private:
  using api = fftw_api<T>;
  using cpx = std::complex<T>;
  cpx* m_at(int parity, std::int64_t offset) const { return reinterpret_cast<cpx*>(m_->base(parity)) + offset; }

  // The n1 rows of plane i0 (here), w points each, between `plane` (contiguous [n1][w]: the
  // scratch, or a plane of the caller's complex S0) and every rank's part of M.
  void scatter_plane(const cpx* plane, std::int64_t i0, int parity) const;
  void gather_plane(cpx* plane, std::int64_t i0, int parity) const;

  std::int64_t n0_, n1_, n2_, w_;
  std::int64_t plane_bytes_ = 0;       // one plane of the caller's complex S0 (or r2c's padded reals)
  std::int64_t real_plane_bytes_ = 0;  // one plane of the caller's real array: padded, or packed
  bool r2c_;
  unsigned flags_;
  void* scratch_a_;       // planning buffer of the plane FFTs
  cpx* plane_ = nullptr;  // one plane [n1][w], FFTW-aligned
  bool forward_, natural_;
  std::int64_t planes_here_ = 0;   // i0 planes of S0 on this rank
  std::int64_t m_offset_ = 0;      // this rank's part in the whole M, elements
  std::int64_t plane_offset_ = 0;  // b_start * w
  const node_array* m_;
  // planes: the 2D FFT of one plane (the caller's buffer <-> plane_); axis0: the 1D FFTs along i0
  // of this rank's M part (out of place to or from the caller's M in transposed order, in place
  // in natural order; null where this rank has no i1 row). Planned on parity 0.
  std::unique_ptr<local_fft<T>> planes_;
  std::unique_ptr<column_fft<T>> axis0_;
  // use_shared: this rank's buffer, the rows of the whole array (row i0 at this rank's first i1
  // row), and the axis-0 FFTs out of place between M and them.
  const cpx* shared_ = nullptr;
  std::vector<cpx*> shared_rows_;
  std::unique_ptr<column_fft<T>> axis0_shared_;
  std::int64_t a0_ = 0, rows_here_ = 0;
  // Forward, packed real planes: a copy of an in-place input (use_shared).
  std::unique_ptr<char, void (*)(void*)> packed_copy_{nullptr, api::free};
};

}  // namespace toru::fft::detail
