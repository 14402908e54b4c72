// SPDX-License-Identifier: BSD-3-Clause
#include "column_fft.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <vector>

#include <fmt/format.h>

#include "toru/core/error.hpp"

namespace toru::fft::detail {

namespace {

// A tile of about half an L1 data cache (32-48 KiB on current x86 cores), so that the tile and
// the codelet's twiddles stay there; a block that fits L1 as a whole has no conflict misses to
// avoid.
constexpr std::int64_t narrow_tile_bytes = 16 * 1024;
constexpr std::int64_t l1_bytes = 32 * 1024;
// Blocks past the caches: each tile row is then a separate trip to memory, n0 rows a whole
// power-of-two stride apart, and at 16 KiB a row of 256 doubles' tile is one 64-byte line. Tiles
// of 64 KiB (in L2) make it 4 lines, which DRAM pages and the prefetchers serve far better: 256^3
// on 2 ranks (128 MiB blocks), out of place 51 -> 32 ms, in place 32 -> 29; at 16 MiB (128^3 on 2
// ranks, in a large L3) the narrow tile still wins in place, 1.69 against 2.00 ms
// (fft_layout_bench axis0_tile_width, docs/history/benchmarks-2026-12.md). MEASURE times both.
constexpr std::int64_t wide_tile_bytes = 64 * 1024;
constexpr std::int64_t wide_tile_min_block_bytes = std::int64_t{32} << 20;
// MEASURE times the tilings on the first blocks only, as many as make this many bytes (past the
// caches, as the whole is): every block is one independent pass, so a sample streams as the whole
// does. Timing all blocks cost 9 passes over 453 MB per direction at 384^3 on 2 ranks, 1.2 s of
// the direct window's 1.5 s build.
constexpr std::int64_t measure_sample_bytes = std::int64_t{64} << 20;

// Columns per tile: a power of two from 2 (FFTW's SIMD codelets take columns in pairs) while the
// tile stays within `bytes`, at most w.
std::int64_t tile_width(std::int64_t n0, std::int64_t w, std::int64_t point, std::int64_t bytes = narrow_tile_bytes) {
  std::int64_t c = 2;
  while (2 * c * n0 * point <= bytes && 2 * c <= w) c *= 2;
  return std::min(c, w);
}

// MEASURE's tiling of each column problem in this process: tile columns, 0 for FFTW's strided
// plan. The same columns come back in the other direction and in every candidate of a plan's
// strategy table that has them (at 256^3 on 4 ranks three candidates and the backward, 0.3-0.6 s
// each); they take the first choice instead of timing three tilings again. What the choice weighs
// is memory traffic, tile copies against FFTW's strided loops, which the sign does not change;
// FFTW's own wisdom, which replanning the chosen tiling reuses, does not carry across the sign.
struct tiling_key {
  std::int64_t point, n0, w, blocks;
  bool in_place;
  auto operator<=>(const tiling_key&) const = default;
};
std::mutex tilings_mutex;
std::map<tiling_key, std::int64_t> tilings;
long tilings_measured = 0;

template <class F>
double best_of(int runs, F&& f) {
  double best = std::numeric_limits<double>::infinity();
  for (int r = 0; r < runs; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

}  // namespace

template <class T>
bool column_fft<T>::tiles(std::int64_t n0, std::int64_t w) {
  const auto point = static_cast<std::int64_t>(sizeof(cpx));
  return w > tile_width(n0, w, point) && n0 >= 8 && n0 * w * point > l1_bytes;
}

template <class T>
std::int64_t column_fft<T>::estimate_tile_bytes(std::int64_t n0, std::int64_t w, std::int64_t blocks) {
  const auto point = static_cast<std::int64_t>(sizeof(cpx));
  return blocks * n0 * w * point >= wide_tile_min_block_bytes ? wide_tile_bytes : narrow_tile_bytes;
}

template <class T>
std::int64_t column_fft<T>::sample_blocks(std::int64_t n0, std::int64_t w, std::int64_t blocks) {
  const std::int64_t block_bytes = n0 * w * static_cast<std::int64_t>(sizeof(cpx));
  return std::min(blocks, std::max<std::int64_t>(1, measure_sample_bytes / block_bytes));
}

// Rows of a whole natural-order array lie n1 * w points apart, a multiple of a large power of two
// in the usual sizes (384^3 c2c: 9 * 2^18 bytes), so every row of a tile falls into the same cache
// sets, and wider tiles (more bytes per row) measured up to 0.77x the time of the 64 KiB tile that
// M's columns take (2 ranks, 384^3, docs/fft.md "Shared output"). Best of two, not three: this is
// shared_out()'s setup, on top of the plan's.
template <class T>
std::unique_ptr<column_fft<T>> column_fft<T>::for_rows(
    std::int64_t n0, std::int64_t w, std::int64_t blocks, int sign, unsigned flags, cpx* scratch,
    const std::function<void(const column_fft&, std::int64_t)>& run) {
  const auto make = [&](std::int64_t tile_bytes) {
    return std::make_unique<column_fft>(n0, w, blocks, sign, false, flags, scratch, scratch, tile_bytes);
  };
  if ((flags & FFTW_ESTIMATE) != 0) return make(estimate_tile_bytes(n0, w, blocks));
  const std::int64_t sample = sample_blocks(n0, w, blocks);
  std::unique_ptr<column_fft> best;
  double best_s = 0;
  for (std::int64_t tile_bytes = std::int64_t{64} << 10; tile_bytes <= std::int64_t{1} << 20; tile_bytes *= 4) {
    auto c = make(tile_bytes);
    if (best && c->tile_columns() == best->tile_columns()) continue;  // capped by w: no wider tile
    const double t = best_of(2, [&] { run(*c, sample); });
    if (!best || t < best_s) best_s = t, best = std::move(c);
  }
  return best;
}

template <class T>
column_fft<T>::column_fft(std::int64_t n0, std::int64_t w, std::int64_t blocks, int sign, bool in_place, unsigned flags,
                          cpx* scratch_in, cpx* scratch_out, std::int64_t tile_bytes)
    : n0_(n0), w_(w), blocks_(blocks), sign_(sign) {
  if (blocks <= 0) return;  // nothing on this rank: execute() does nothing
  if (in_place) scratch_out = scratch_in;
  const auto point = static_cast<std::int64_t>(sizeof(cpx));
  const bool may_tile = tiles(n0, w);
  const bool estimate = (flags & FFTW_ESTIMATE) != 0;
  const std::int64_t narrow = tile_width(n0, w, point), wide = tile_width(n0, w, point, wide_tile_bytes);
  const bool out_of_cache = blocks * n0 * w * point >= wide_tile_min_block_bytes;

  // per_block: one block's plan, run once per block. FFTW_MEASURE times its candidates on the
  // whole problem it is given, so a plan of all blocks (128 MiB at 256^3 on 2 ranks) took 2.2 s
  // to plan per direction, most of toru's plan time; the blocks are independent, so FFTW's own
  // plan loops over them just the same.
  auto plan_strided = [&](bool per_block) {
    using iodim = typename api::iodim;
    strided_blocks_ = per_block ? 1 : blocks;
    const iodim dims[1] = {{n0, w, w}};
    const iodim how[2] = {{strided_blocks_, n0 * w, n0 * w}, {w, 1, 1}};
    strided_in_align_ = api::alignment_of(scratch_in);
    strided_out_align_ = api::alignment_of(scratch_out);
    strided_ = api::guru_dft(1, dims, 2, how, scratch_in, scratch_out, sign, flags);
    strided_unaligned_ = api::guru_dft(1, dims, 2, how, scratch_in, scratch_out, sign, FFTW_ESTIMATE | FFTW_UNALIGNED);
    if (!strided_ || !strided_unaligned_)
      throw error(errc::fftw, fmt::format("FFTW could not plan {} strided transforms of size {}", w, n0));
  };
  auto plan_tiles = [&](std::int64_t c) {
    c_ = c;
    tile_ = static_cast<cpx*>(api::malloc(static_cast<std::size_t>(n0 * c_ * point)));
    if (!tile_) throw error(errc::out_of_memory, fmt::format("fft: {} bytes of column tile", n0 * c_ * point));
    tile_plan_ = plan_tile(c_, flags);
    if (w % c_ != 0) rest_plan_ = plan_tile(w % c_, flags);
    tiled_ = true;
  };
  auto drop_tiles = [&] {
    for (auto p : {tile_plan_, rest_plan_})
      if (p) api::destroy(p);
    tile_plan_ = rest_plan_ = nullptr;
    api::free(tile_);
    tile_ = nullptr;
    tiled_ = false;
  };

  if (!may_tile) {
    plan_strided(false);
    return;
  }
  if (tile_bytes < 0) {
    plan_strided(true);
    return;
  }
  if (tile_bytes > 0) {
    plan_tiles(tile_width(n0, w, point, tile_bytes));
    return;
  }
  if (estimate) {
    plan_tiles(out_of_cache ? wide : narrow);
    return;
  }
  // FFTW_MEASURE: FFTW's own strided plan may be buffered as well, and either tile width may win
  // on this machine; keep whichever runs fastest here (planning overwrites the scratch: each
  // timing starts from zeros, no denormals). Replanning the winner reuses FFTW's wisdom.
  const tiling_key key{point, n0, w, blocks, in_place};
  {
    const std::lock_guard lock(tilings_mutex);
    if (auto it = tilings.find(key); it != tilings.end()) {
      if (it->second > 0)
        plan_tiles(it->second);
      else
        plan_strided(true);
      return;
    }
  }
  const std::int64_t block_bytes = n0 * w * point;
  const std::int64_t sample = std::min(blocks, std::max<std::int64_t>(1, measure_sample_bytes / block_bytes));
  const auto zero = [&] {
    std::memset(static_cast<void*>(scratch_in), 0, static_cast<std::size_t>(sample * block_bytes));
  };
  std::vector<std::int64_t> widths{narrow};
  if (wide != narrow) widths.push_back(wide);
  double best = std::numeric_limits<double>::infinity();
  std::int64_t best_c = narrow;
  for (std::int64_t c : widths) {
    plan_tiles(c);
    zero();
    const double t = best_of(3, [&] { run_tiled(scratch_in, scratch_out, sample); });
    if (t < best) best = t, best_c = c;
    drop_tiles();
  }
  plan_strided(true);
  zero();
  const double strided = best_of(3, [&] { run_strided(scratch_in, scratch_out, sample); });
  if (best <= strided) {
    for (auto p : {strided_, strided_unaligned_}) api::destroy(p);
    strided_ = strided_unaligned_ = nullptr;
    plan_tiles(best_c);
  }
  const std::lock_guard lock(tilings_mutex);
  tilings.emplace(key, tiled_ ? c_ : 0);
  ++tilings_measured;
}

template <class T>
long column_fft<T>::tilings_timed() {
  const std::lock_guard lock(tilings_mutex);
  return tilings_measured;
}

template <class T>
typename column_fft<T>::api::plan column_fft<T>::plan_tile(std::int64_t c, unsigned flags) const {
  using iodim = typename api::iodim;
  const iodim dims[1] = {{n0_, c, c}};
  const iodim how[1] = {{c, 1, 1}};
  auto p = api::guru_dft(1, dims, 1, how, tile_, tile_, sign_, flags);
  if (!p) throw error(errc::fftw, fmt::format("FFTW could not plan a tile of {} transforms of size {}", c, n0_));
  return p;
}

template <class T>
column_fft<T>::~column_fft() {
  for (auto p : {tile_plan_, rest_plan_, strided_, strided_unaligned_})
    if (p) api::destroy(p);
  api::free(tile_);
}

template <class T>
void column_fft<T>::execute(const cpx* in, cpx* out) const {
  if (blocks_ <= 0) return;
  if (tiled_)
    run_tiled(in, out, blocks_);
  else
    run_strided(in, out, blocks_);
}

template <class T>
void column_fft<T>::run_strided(const cpx* in, cpx* out, std::int64_t blocks) const {
  for (std::int64_t b = 0; b < blocks; b += strided_blocks_) {
    const cpx* x = in + b * n0_ * w_;
    cpx* y = out + b * n0_ * w_;
    const bool same = api::alignment_of(x) == strided_in_align_ && api::alignment_of(y) == strided_out_align_;
    api::execute_dft(same ? strided_ : strided_unaligned_, const_cast<cpx*>(x), y);  // read only out of place
  }
}

template <class T>
template <class InRow, class OutRow>
void column_fft<T>::tile_loop(InRow in_row, OutRow out_row, std::int64_t blocks) const {
  const std::int64_t n0 = n0_, w = w_;
  for (std::int64_t b = 0; b < blocks; ++b) {
    for (std::int64_t j = 0; j < w; j += c_) {
      const std::int64_t c = std::min(c_, w - j);
      const auto bytes = static_cast<std::size_t>(c) * sizeof(cpx);
      for (std::int64_t i = 0; i < n0; ++i) std::memcpy(static_cast<void*>(tile_ + i * c), in_row(b, i) + j, bytes);
      api::execute_dft(c == c_ ? tile_plan_ : rest_plan_, tile_, tile_);
      for (std::int64_t i = 0; i < n0; ++i) std::memcpy(static_cast<void*>(out_row(b, i) + j), tile_ + i * c, bytes);
    }
  }
}

template <class T>
void column_fft<T>::run_tiled(const cpx* in, cpx* out, std::int64_t blocks) const {
  const std::int64_t n0 = n0_, w = w_;
  tile_loop([&](std::int64_t b, std::int64_t i) { return in + (b * n0 + i) * w; },
            [&](std::int64_t b, std::int64_t i) { return out + (b * n0 + i) * w; }, blocks);
}

template <class T>
void column_fft<T>::execute_in_rows(cpx* const* rows, std::int64_t blocks) const {
  blocks = blocks < 0 ? blocks_ : std::min(blocks, blocks_);
  if (blocks <= 0) return;
  if (!tiled_) throw error(errc::internal, "fft: column_fft::execute_in_rows needs a tiled plan");
  const std::int64_t w = w_;
  const auto row = [&](std::int64_t b, std::int64_t i) { return rows[i] + b * w; };
  tile_loop(row, row, blocks);
}

template <class T>
void column_fft<T>::execute_from_rows(const cpx* const* rows, cpx* out, std::int64_t blocks) const {
  blocks = blocks < 0 ? blocks_ : std::min(blocks, blocks_);
  if (blocks <= 0) return;
  if (!tiled_) throw error(errc::internal, "fft: column_fft::execute_from_rows needs a tiled plan");
  const std::int64_t n0 = n0_, w = w_;
  tile_loop([&](std::int64_t b, std::int64_t i) { return rows[i] + b * w; },
            [&](std::int64_t b, std::int64_t i) { return out + (b * n0 + i) * w; }, blocks);
}

template class column_fft<float>;
template class column_fft<double>;

}  // namespace toru::fft::detail
