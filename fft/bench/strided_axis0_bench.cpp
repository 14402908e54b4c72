// SPDX-License-Identifier: BSD-3-Clause
// Why the slab's middle layout is [i1 part][i0][i2] (docs/fft.md): the axis-0 FFTs of one rank's
// part of an n0 x n1 x n2 array, planned by FFTW (FFTW_ESTIMATE, as the benchmarks) in three
// layouts of the same data, A = n1 / ranks rows of i1 and w = n2 points per row:
//   contiguous  [i1][i2][i0]  (the element-transposing layout S2: unit stride),
//   i0_outer    [i0][i1][i2]  (the earlier middle layout: stride A*w, a power of two here),
//   i1_outer    [i1][i0][i2]  (FFTW_MPI_TRANSPOSED_OUT's layout: stride w inside each i1 block),
//   i1_tiled    the same layout through toru's column_fft (fft/src/column_fft.hpp): tiles of a few
//               columns copied into an L1-sized buffer, transformed there, copied back;
// and the 2D FFTs of the planes (plane_ffts): FFTW's ESTIMATE and MEASURE plans against toru's
// local_fft, which under ESTIMATE runs the rows and then the columns in tiles.
// Run: build-release/fft/fft_layout_bench   (Google Benchmark flags apply, e.g. --benchmark_repetitions=5)
#include <benchmark/benchmark.h>
#include <fftw3.h>

#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

#include <vector>

#include "column_fft.hpp"
#include "local_fft.hpp"

namespace {

enum layout { contiguous, i0_outer, i1_outer, i1_tiled };

void axis0_ffts(benchmark::State& state) {
  const auto kind = static_cast<layout>(state.range(0));
  const int n0 = static_cast<int>(state.range(1)), A = static_cast<int>(state.range(2)), w = n0;
  const std::size_t N = static_cast<std::size_t>(n0) * A * w;
  fftw_complex* a = fftw_alloc_complex(N);
  for (std::size_t i = 0; i < N; ++i) a[i][0] = a[i][1] = static_cast<double>(i % 7);
  fftw_plan p = nullptr;
  std::unique_ptr<toru::fft::detail::column_fft<double>> tiled;
  const int n = n0;
  if (kind == i1_tiled) {
    auto* c = reinterpret_cast<std::complex<double>*>(a);
    tiled = std::make_unique<toru::fft::detail::column_fft<double>>(n0, w, A, FFTW_FORWARD, true, FFTW_ESTIMATE, c, c);
    for (auto _ : state) tiled->execute(c, c);
  } else if (kind == contiguous) {
    p = fftw_plan_many_dft(1, &n, A * w, a, nullptr, 1, n0, a, nullptr, 1, n0, FFTW_FORWARD, FFTW_ESTIMATE);
  } else if (kind == i0_outer) {
    p = fftw_plan_many_dft(1, &n, A * w, a, nullptr, A * w, 1, a, nullptr, A * w, 1, FFTW_FORWARD, FFTW_ESTIMATE);
  } else {
    fftw_iodim dim{n0, w, w};
    fftw_iodim loops[2] = {{A, n0 * w, n0 * w}, {w, 1, 1}};
    p = fftw_plan_guru_dft(1, &dim, 2, loops, a, a, FFTW_FORWARD, FFTW_ESTIMATE);
  }
  if (p)
    for (auto _ : state) fftw_execute(p);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(N) * 16);
  if (p) fftw_destroy_plan(p);
  fftw_free(a);
}

// {layout, n0 (= n2), A}: 128^3 on 4 and 2 ranks, and 256^3 on 4 ranks.
BENCHMARK(axis0_ffts)
    ->ArgNames({"layout", "n0", "A"})
    ->ArgsProduct({{contiguous, i0_outer, i1_outer, i1_tiled}, {128}, {32, 64}})
    ->Args({contiguous, 256, 64})
    ->Args({i1_outer, 256, 64})
    ->Args({i1_tiled, 256, 64})
    ->Unit(benchmark::kMillisecond);

// The axis-0 pass of the direct window (fft/src/column_fft.hpp) over one rank's part of M, in
// place (natural order) and out of place (transposed order: the node array to the caller's
// buffer, here a std::vector's 16 bytes off a line), with tiles of 16 KiB (half an L1) and 64 KiB.
void axis0_tile_width(benchmark::State& state) {
  const bool in_place = state.range(0) != 0;
  const int n0 = static_cast<int>(state.range(1)), A = static_cast<int>(state.range(2)), w = n0;
  const std::int64_t tile_bytes = state.range(3) * 1024;
  using cpx = std::complex<double>;
  const std::size_t N = static_cast<std::size_t>(n0) * A * w;
  auto* a = reinterpret_cast<cpx*>(fftw_alloc_complex(N));
  auto* b = reinterpret_cast<cpx*>(fftw_alloc_complex(N + 1));
  cpx* out = in_place ? a : b + 1;
  for (std::size_t i = 0; i < N; ++i) a[i] = {static_cast<double>(i % 7), 1.0};
  std::memset(static_cast<void*>(b), 0, (N + 1) * sizeof(cpx));  // no page faults in the timing
  toru::fft::detail::column_fft<double> f(n0, w, A, FFTW_FORWARD, in_place, FFTW_ESTIMATE, a, out, tile_bytes);
  for (auto _ : state) f.execute(a, out);
  state.counters["columns"] = static_cast<double>(f.tile_columns());
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(N) * 16);
  fftw_free(a);
  fftw_free(b);
}

// {in place, n0 (= w), A, tile KiB}: one rank's part at 256^3 and at 128^3 on 2 ranks.
BENCHMARK(axis0_tile_width)
    ->ArgNames({"in_place", "n0", "A", "tile_KiB"})
    ->ArgsProduct({{1, 0}, {256}, {128}, {16, 64}})
    ->ArgsProduct({{1, 0}, {128}, {64}, {16, 64}})
    ->Unit(benchmark::kMillisecond);

// The 2D FFTs of the slab's planes (n x n, `planes` of them, out of place): FFTW_ESTIMATE's and
// FFTW_MEASURE's 2D plans, and toru's local_fft (under ESTIMATE: rows, then columns in L1 tiles).
enum plane_way { estimate_2d, measure_2d, toru_local_fft };

void plane_ffts(benchmark::State& state) {
  const auto way = static_cast<plane_way>(state.range(0));
  const int n = static_cast<int>(state.range(1)), planes = static_cast<int>(state.range(2));
  const std::size_t N = static_cast<std::size_t>(n) * n * planes;
  fftw_complex* a = fftw_alloc_complex(N);
  fftw_complex* b = fftw_alloc_complex(N);
  const int dims[2] = {n, n};
  fftw_plan p = nullptr;
  std::unique_ptr<toru::fft::detail::local_fft<double>> f;
  if (way == toru_local_fft)
    f = std::make_unique<toru::fft::detail::local_fft<double>>(
        toru::fft::detail::fft_kind::c2c_forward, std::vector<int>{n, n}, std::vector<std::int64_t>{planes}, false,
        FFTW_ESTIMATE, a, b);
  else
    p = fftw_plan_many_dft(2, dims, planes, a, nullptr, 1, n * n, b, nullptr, 1, n * n, FFTW_FORWARD,
                           way == estimate_2d ? FFTW_ESTIMATE : FFTW_MEASURE);
  for (std::size_t i = 0; i < N; ++i) a[i][0] = a[i][1] = static_cast<double>(i % 7);
  for (auto _ : state) {
    if (p)
      fftw_execute(p);
    else
      f->execute(planes, a, b);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(N) * 16);
  if (p) fftw_destroy_plan(p);
  fftw_free(a);
  fftw_free(b);
}

// {way, n, planes}: the planes of one rank at 128^3 and 256^3 on 2 ranks (fewer at 256: time).
BENCHMARK(plane_ffts)
    ->ArgNames({"way", "n", "planes"})
    ->ArgsProduct({{estimate_2d, measure_2d, toru_local_fft}, {128}, {64}})
    ->ArgsProduct({{estimate_2d, measure_2d, toru_local_fft}, {256}, {16}})
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
