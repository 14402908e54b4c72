// SPDX-License-Identifier: BSD-3-Clause
// The distributed 1D six-step transform on one node without a transpose (docs/fft.md,
// "Distributed 1D FFT (six-step)", direct window). The element index is j = j1 n2 + j2 and the output index k = k1 + n1
// k2; the length-n1 FFTs run down the columns j2 of the input [j1][j2] and the length-n2 FFTs down the columns k1 of
// the middle array [j2][k1], so both need rows that other ranks hold. Here those arrays are node arrays (every rank's
// part end to end, each rank addressing the whole), and each FFT gathers its columns straight from every rank's part
// into an in-cache tile of c lines, transforms them there and stores them where the next stage reads them:
//
//   forward:  in -> A (copy)            A columns -> FFT n1, twiddle -> B rows (this rank's j2)
//             B columns -> FFT n2 -> C columns [k2][k1] (natural) or the caller's rows (transposed)
//             C -> out (copy, natural)
//   backward: the same in reverse, twiddles conjugated.
//
// Against the element-wise window (a transposing copy into the peers' buffers, then row FFTs), it
// moves each element through memory 4 times instead of 6 in natural order (docs/fft.md, same
// section, for what that bought when measured).
#pragma once

#include <complex>
#include <cstdint>
#include <memory>

#include "fftw_api.hpp"
#include "node_window.hpp"
#include "steps.hpp"

namespace toru::fft::detail {

/// Replaces a 1D plan's whole forward (or backward). natural: the caller's output (forward) or
/// input (backward) is in natural order, [k2 part][k1]; otherwise it is the transposed order
/// [k1 part][k2] and no copy is made on that side.
template <class T>
class six_step_direct_step final : public step<T> {
 public:
  using cpx = std::complex<T>;
  /// twiddle: this rank's rows of the twiddle table, [j2 - first j2 here][k1] = exp(-2 pi i j2 k1 / n)
  /// (kept alive by the caller). a: the node array whose parts are the input layout's [n1 part][n2];
  /// b: the one whose parts are [n2 part][n1] (may be the same array when the parts match).
  /// tile_lines: lines per tile, 0 for the default (default_tile_lines).
  six_step_direct_step(int P, int me, std::int64_t n1, std::int64_t n2, bool forward, bool natural, unsigned flags,
                       const cpx* twiddle, const node_array* a, const node_array* b, std::int64_t tile_lines = 0);
  ~six_step_direct_step() override;
  six_step_direct_step(const six_step_direct_step&) = delete;
  six_step_direct_step& operator=(const six_step_direct_step&) = delete;
  void run(const void* src, void* dst, const work_buffers& ws) const override;
  std::int64_t tile_lines() const { return c_; }
  /// The default tile: runs of 512 bytes per row (32 lines in double, 64 in float), halved down to 8
  /// lines while the tile passes 4 MiB.
  static std::int64_t default_tile_lines(std::int64_t len, std::size_t point_bytes);

 private:
  using api = fftw_api<T>;
  // The FFTs of one pass: `count` lines of `len` points from line `first` of the whole array.
  struct pass {
    std::int64_t len = 0, first = 0, count = 0;
    owned_fftw_plan<T> full, rest;  // c lines, count % c lines; in place on the tile
  };
  // Where a pass reads or writes its lines: columns of a whole [len][ld] array (the lines are its
  // columns, every rank's part), or rows (`len` apart) of an array holding this pass's lines only.
  struct lines_at {
    cpx* base;
    std::int64_t ld;  // 0: rows
  };
  void make_pass(pass& p, std::int64_t len, std::int64_t first, std::int64_t count, unsigned flags);
  void sweep(const pass& p, lines_at from, lines_at to, int twiddle) const;  // twiddle: +1 after, -1 before (conj)
  cpx* whole(const node_array* a, int parity) const { return reinterpret_cast<cpx*>(a->base(parity)); }
  cpx* own(const node_array* a, int parity, int rank) const { return reinterpret_cast<cpx*>(a->part(rank, parity)); }

  int me_;
  std::int64_t n1_, n2_, c_ = 0;
  bool forward_, natural_;
  std::int64_t in_points_ = 0, out_points_ = 0;  // this rank's part of A ([n1 part][n2]) and of B ([n2 part][n1])
  const cpx* twiddle_;
  const node_array *a_, *b_;
  std::unique_ptr<cpx, void (*)(void*)> tile_{nullptr, &api::free};  // fftw_malloc'ed: SIMD-aligned
  std::unique_ptr<cpx, void (*)(void*)> stage_{nullptr,
                                               &api::free};  // the tile's runs, row by row (transpose_gathered)
  pass n1_pass_, n2_pass_;  // FFTs of length n1 (this rank's j2 lines), of length n2 (its k1 lines)
};

}  // namespace toru::fft::detail
