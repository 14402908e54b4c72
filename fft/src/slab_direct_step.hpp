// The slab through FFTW-MPI's middle layout M without an exchange (docs/fft.md, "Direct
// window"): on one node the ranks' parts of M, placed end to end in a node_array, are the whole M
// array [i1][i0][w], and the ranks' parts of S0 the whole S0 array [i0][i1][w]. So the local FFTs'
// own passes do the redistribution: each 2D FFT of a plane here runs into a plane-sized scratch
// (in cache) and its rows go straight from there to their places in every rank's part of M; for
// natural order, the axis-0 FFTs run in place in this rank's part of M and its runs go straight to
// every rank's part of S0. Backward gathers the same way. Nothing is packed, sent or copied through
// memory between the stages; only natural order copies S0 between the node array and the caller's
// buffer (which MPI cannot make visible to the peers). The FFTs never write the node arrays with
// their large power-of-two strides (n0 * w apart for M's i1): measured, that made FFTW's passes
// miss the cache on every line (docs/fft.md).
#pragma once

#include <complex>
#include <cstdint>

#include "fftw_api.hpp"
#include "node_window.hpp"
#include "steps.hpp"

namespace toru::fft::detail {

/// Replaces a slab plan's whole forward (or backward): 2D FFTs over (i1, i2) of this rank's
/// planes and 1D FFTs along i0 of this rank's i1 rows. w = complex points along axis 2 (n2, or
/// n2/2+1 for r2c); real rows of r2c are padded to 2w reals (the plan's real layout).
template <class T>
class slab_direct_step final : public step<T> {
 public:
  /// m: the node array of M parts (this rank's = its i1 rows x n0 x w); s0: of S0 parts (its i0
  /// planes x n1 x w), needed for natural order only. scratch_a/b: planning buffers of the
  /// caller's stage size.
  slab_direct_step(int P, int me, std::int64_t n0, std::int64_t n1, std::int64_t n2, bool r2c, bool forward,
                   bool natural, unsigned flags, const node_array* m, const node_array* s0, void* scratch_a,
                   void* scratch_b);
  ~slab_direct_step() override;
  slab_direct_step(const slab_direct_step&) = delete;
  slab_direct_step& operator=(const slab_direct_step&) = delete;
  void run(const void* src, void* dst, const work_buffers& ws) const override;

 private:
  using api = fftw_api<T>;
  using cpx = std::complex<T>;
  // One FFTW plan, planned aligned on the arrays it was made for and again with FFTW_UNALIGNED:
  // new-array execution needs the planned arrays' alignment.
  struct planned {
    typename api::plan aligned = nullptr, unaligned = nullptr;
    int in_align = 0, out_align = 0;
    // kind: 0 c2c, 1 r2c, 2 c2r.
    void run(int kind, const void* in, void* out) const;
  };
  cpx* m_at(int parity, std::int64_t offset) const { return reinterpret_cast<cpx*>(m_->base(parity)) + offset; }
  cpx* s0_at(int parity, std::int64_t offset) const { return reinterpret_cast<cpx*>(s0_->base(parity)) + offset; }

  // Rows of plane i0 (here) between the plane scratch and every rank's part of M.
  void scatter_plane(std::int64_t i0, int parity) const;
  void gather_plane(std::int64_t i0, int parity) const;
  // This rank's M rows (all i0) to or from every rank's part of S0, in runs of w.
  void scatter_rows(int m_parity, int s0_parity) const;
  void gather_rows(int m_parity, int s0_parity) const;

  std::int64_t n0_, n1_, w_;
  std::int64_t rows_here_ = 0;    // i1 rows of M on this rank
  std::int64_t plane_bytes_ = 0;  // one plane of the caller's S0 (complex, or r2c's padded reals)
  cpx* plane_ = nullptr;          // one plane [n1][w], FFTW-aligned
  bool forward_, natural_;
  std::int64_t planes_here_ = 0;                    // i0 planes of S0 on this rank
  std::int64_t m_offset_ = 0, s0_offset_ = 0;       // this rank's part in the whole M and S0, elements
  std::int64_t plane_offset_ = 0, row_offset_ = 0;  // b_start * w and a_start * w
  const node_array* m_;
  const node_array* s0_;
  // planes: the 2D FFT of one plane (the caller's buffer <-> plane_); axis0: the 1D FFTs along i0
  // of this rank's M part (out of place to or from the caller's M in transposed order, in place
  // in natural order). Planned on parity 0.
  planned planes_, axis0_;
  bool r2c_;
};

}  // namespace toru::fft::detail
