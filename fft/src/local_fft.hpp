// SPDX-License-Identifier: BSD-3-Clause
// Batched local FFTs over consecutive "units" (a row, or a plane for the slab's 2D transforms),
// planned once per batch size with FFTW and executed on any buffer (new-array execute).
//
// Planes under FFTW_ESTIMATE run as their rows (one rank-1 batch) and then their columns in L1
// tiles (column_fft.hpp): FFTW_ESTIMATE's own 2D plan runs its column passes straight over rows a
// power of two apart, on conflict misses (256 x 256: 2.8 ms a plane against 0.4 ms for
// FFTW_MEASURE's plan; docs/history/benchmarks-2026-12.md). Under FFTW_MEASURE FFTW's 2D plan is kept.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "column_fft.hpp"
#include "fftw_api.hpp"

namespace toru::fft::detail {

enum class fft_kind { c2c_forward, c2c_backward, r2c, c2r };

template <class T>
class local_fft {
 public:
  /// dims: logical transform sizes of one unit (rank 1 or 2). Complex units hold
  /// dims[..-1] * (c2c ? last : last/2+1) points; real units of r2c/c2r are padded to
  /// 2*(last/2+1) reals per row. `batches` lists the unit counts execute() will be called with
  /// most (others are run as pieces). Plans on the scratch buffers, which must hold the largest batch.
  /// packed_real: the real rows (r2c's input, c2r's output) hold `last` reals each, unpadded, as a
  /// caller's own array; out of place only (c2r then destroys its input).
  local_fft(fft_kind kind, std::vector<int> dims, std::vector<std::int64_t> batches, bool in_place, unsigned flags,
            void* scratch_in, void* scratch_out, bool packed_real = false);
  ~local_fft();
  local_fft(const local_fft&) = delete;
  local_fft& operator=(const local_fft&) = delete;

  /// Transforms `units` consecutive units from in to out (in == out iff planned in place).
  void execute(std::int64_t units, void* in, void* out) const;

  /// Complex elements per unit.
  std::int64_t unit_complex() const { return unit_complex_; }
  /// Whether planes run as rows + tiled columns (FFTW_ESTIMATE, planes beyond L1).
  bool split_planes() const { return rows_ != nullptr; }
  /// The unit counts FFTW plans were made for, largest first (empty where planes are split).
  std::vector<std::int64_t> planned_batches() const {
    std::vector<std::int64_t> b;
    for (const entry& e : plans_) b.push_back(e.batch);
    return b;
  }

 private:
  using api = fftw_api<T>;
  struct entry {
    std::int64_t batch;
    typename api::plan aligned;
    typename api::plan unaligned;
  };
  typename api::plan make(int howmany, unsigned flags, void* in, void* out) const;
  void run(typename api::plan p, void* in, void* out) const;

  fft_kind kind_;
  std::vector<int> dims_;
  bool in_place_;
  bool packed_ = false;  // real rows unpadded
  std::int64_t unit_complex_ = 0, unit_in_bytes_ = 0, unit_out_bytes_ = 0;
  std::vector<entry> plans_;  // decreasing batch, always ending with batch 1
  // Planes as rows + tiled columns (empty plans_): the rows of one plane, and its columns (c2r:
  // from the input to the output, the rows then in place; packed c2r: in place on the input, the
  // rows then out of place; otherwise in place on the output).
  std::unique_ptr<local_fft<T>> rows_;
  std::unique_ptr<column_fft<T>> columns_;
};

}  // namespace toru::fft::detail
