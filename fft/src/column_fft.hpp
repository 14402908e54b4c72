// SPDX-License-Identifier: BSD-3-Clause
// FFTs down the columns of row-major blocks [n0][w]: w transforms of n0 points at stride w per
// block, `blocks` blocks n0 * w apart (the axis-0 FFTs of the slab's middle layout M).
//
// Why not one strided FFTW plan: the column stride is w points (2 KiB at w = 128), a power of two
// in the usual sizes, so the n0 points of a column fall into a few L1 sets and FFTW_ESTIMATE's
// plan (a codelet straight over the strided data) runs on conflict misses. FFTW_MEASURE finds
// buffered plans, FFTW_ESTIMATE does not. So a tile of c columns (n0 x c points, about half of
// L1; 64 KiB, in L2, for blocks past the caches) is copied into a contiguous buffer, transformed
// there and copied out: 128 x 128 blocks 2.1x faster than the strided ESTIMATE plan, 256 x 256 9x
// (fft_layout_bench, docs/history/benchmarks-2026-12.md). Under FFTW_MEASURE (or PATIENT) both tile widths and
// FFTW's strided plan are timed at plan time and the fastest kept, like FFTW's own choices, and the
// choice is kept for the process, like FFTW's wisdom (either sign).
#pragma once

#include <complex>
#include <cstdint>
#include <functional>
#include <memory>

#include "fftw_api.hpp"

namespace toru::fft::detail {

template <class T>
class column_fft {
 public:
  using cpx = std::complex<T>;
  /// sign: FFTW_FORWARD or FFTW_BACKWARD. scratch_in / scratch_out: planning buffers of
  /// blocks * n0 * w points each (the same buffer when in_place); FFTW_MEASURE overwrites them.
  /// tile_bytes: 0 chooses the tile (by the block's size under ESTIMATE, by timing under MEASURE);
  /// tests and benchmarks may fix it, or ask with -1 for FFTW's strided plan of one block run per
  /// block (MEASURE's third candidate), where the blocks are worth tiling.
  column_fft(std::int64_t n0, std::int64_t w, std::int64_t blocks, int sign, bool in_place, unsigned flags,
             cpx* scratch_in, cpx* scratch_out, std::int64_t tile_bytes = 0);
  ~column_fft();
  column_fft(const column_fft&) = delete;
  column_fft& operator=(const column_fft&) = delete;

  /// All blocks from in to out (in == out iff planned in place).
  void execute(const cpx* in, cpx* out) const;
  /// Tiled plans only (tile_columns() > 0): the same transforms with one side (or both)
  /// spread over rows that lie elsewhere, row i (of n0) of block b at rows[i] + b * w. That side
  /// is then a caller's natural-order array, each row i0 in the buffer of the rank that owns the
  /// plane (slab_direct_step's shared path).
  /// The first `blocks` blocks only where blocks >= 0 (MEASURE's samples).
  void execute_in_rows(cpx* const* rows, std::int64_t blocks = -1) const;  // in place
  void execute_from_rows(const cpx* const* rows, cpx* out, std::int64_t blocks = -1) const;
  /// Columns per tile, or 0 where one strided FFTW plan runs.
  std::int64_t tile_columns() const { return tiled_ ? c_ : 0; }
  /// Whether blocks [n0][w] are worth tiling (they outgrow L1 and hold more than one tile); under
  /// FFTW_ESTIMATE exactly where the constructor tiles.
  static bool tiles(std::int64_t n0, std::int64_t w);
  /// The tile ESTIMATE takes for `blocks` such blocks, in bytes (a tile_bytes argument).
  static std::int64_t estimate_tile_bytes(std::int64_t n0, std::int64_t w, std::int64_t blocks);
  /// MEASURE's sample of such blocks: as many as make 64 MiB, at least one, at most `blocks`.
  static std::int64_t sample_blocks(std::int64_t n0, std::int64_t w, std::int64_t blocks);
  /// A tiled plan for columns with a side in rows elsewhere (execute_in_rows, execute_from_rows):
  /// under FFTW_ESTIMATE the tile of estimate_tile_bytes; under MEASURE the fastest of 64 KiB,
  /// 256 KiB and 1 MiB tiles, each timed as the best of two `run(plan, sample_blocks(...))` on data
  /// the caller has zeroed. scratch: the tile plans' planning buffer (untouched by tiles).
  static std::unique_ptr<column_fft> for_rows(std::int64_t n0, std::int64_t w, std::int64_t blocks, int sign,
                                              unsigned flags, cpx* scratch,
                                              const std::function<void(const column_fft&, std::int64_t)>& run);
  /// Column problems whose tilings MEASURE timed in this process, either precision (for the test
  /// that the same columns, either sign, are timed once).
  static long tilings_timed();

 private:
  using api = fftw_api<T>;
  // The first `blocks` blocks (MEASURE times a sample of them).
  void run_tiled(const cpx* in, cpx* out, std::int64_t blocks) const;
  // The tile loop, with row i of block b of each side at in_row(b, i) and out_row(b, i).
  template <class InRow, class OutRow>
  void tile_loop(InRow in_row, OutRow out_row, std::int64_t blocks) const;
  void run_strided(const cpx* in, cpx* out, std::int64_t blocks) const;
  typename api::plan plan_tile(std::int64_t c, unsigned flags) const;

  std::int64_t n0_, w_, blocks_, c_ = 0;
  int sign_;
  bool tiled_ = false;
  cpx* tile_ = nullptr;                                           // n0 x c points, SIMD-aligned (fftw_malloc)
  typename api::plan tile_plan_ = nullptr, rest_plan_ = nullptr;  // c columns; the last w % c
  typename api::plan strided_ = nullptr, strided_unaligned_ = nullptr;
  std::int64_t strided_blocks_ = 0;  // blocks per execute of the strided plan: 1 or all
  int strided_in_align_ = 0, strided_out_align_ = 0;
};

}  // namespace toru::fft::detail
