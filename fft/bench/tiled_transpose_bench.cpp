// SPDX-License-Identifier: BSD-3-Clause
// toru's element transpose (fft/src/tiled_transpose.hpp, the kernel of every transpose_step and
// of the node window's write) against FFTW's own rank-0 transposes (a guru plan of rank 0 and two
// loop dimensions, planned with FFTW_ESTIMATE and FFTW_MEASURE: what FFTW-MPI's local transposes
// are made of) and memcpy of the same bytes (the bandwidth ceiling), on one rank's block of a
// distributed plan: rows x cols complex<double>, source rows src_stride apart, destination rows
// dst_stride apart. The default shapes are the 1D 2^22 plan's block on 2 ranks (1024 x 1024 out of
// 2048-point rows, power-of-two strides) and the same with strides one line off a power of two.
// Bytes/s counts each element read once and written once. A benchmark, not a test:
//   build/fft/fft_transpose_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>
#include <fftw3.h>

#include <complex>
#include <cstdint>
#include <cstring>

#include "tiled_transpose.hpp"

namespace {

using cpx = std::complex<double>;

struct block {
  std::int64_t rows, cols, src_stride, dst_stride;
  cpx* src;
  cpx* dst;
  explicit block(const benchmark::State& state)
      : rows(state.range(0)), cols(state.range(1)), src_stride(state.range(2)), dst_stride(state.range(3)) {
    src = static_cast<cpx*>(fftw_malloc(sizeof(cpx) * static_cast<std::size_t>(rows * src_stride)));
    dst = static_cast<cpx*>(fftw_malloc(sizeof(cpx) * static_cast<std::size_t>(cols * dst_stride)));
    for (std::int64_t i = 0; i < rows * src_stride; ++i) src[i] = cpx(static_cast<double>(i), 1.0);
    std::memset(static_cast<void*>(dst), 0, sizeof(cpx) * static_cast<std::size_t>(cols * dst_stride));
  }
  ~block() {
    fftw_free(src);
    fftw_free(dst);
  }
  block(const block&) = delete;
  block& operator=(const block&) = delete;
  // A wrong transpose must not be timed as a fast one.
  bool correct() const {
    for (std::int64_t a = 0; a < cols; a += 7)
      for (std::int64_t j = 0; j < rows; j += 5)
        if (dst[a * dst_stride + j] != src[j * src_stride + a]) return false;
    return true;
  }
  void finish(benchmark::State& state) const {
    if (!correct()) state.SkipWithError("the transpose is wrong");
    state.SetBytesProcessed(state.iterations() * 2 * rows * cols * static_cast<std::int64_t>(sizeof(cpx)));
  }
};

void toru_tiled(benchmark::State& state) {
  block b(state);
  for (auto _ : state) {
    toru::fft::detail::transpose_tiled(b.src, b.src_stride, b.dst, b.dst_stride, b.rows, b.cols);
    benchmark::ClobberMemory();
  }
  b.finish(state);
}

void fftw_rank0(benchmark::State& state, unsigned flags) {
  block b(state);
  fftw_iodim dims[2] = {{static_cast<int>(b.cols), 1, static_cast<int>(b.dst_stride)},
                        {static_cast<int>(b.rows), static_cast<int>(b.src_stride), 1}};
  // MEASURE overwrites the arrays while planning: plan first, then fill them again.
  fftw_plan p = fftw_plan_guru_dft(0, nullptr, 2, dims, reinterpret_cast<fftw_complex*>(b.src),
                                   reinterpret_cast<fftw_complex*>(b.dst), FFTW_FORWARD, flags);
  if (!p) {
    state.SkipWithError("FFTW made no rank-0 plan");
    return;
  }
  for (std::int64_t i = 0; i < b.rows * b.src_stride; ++i) b.src[i] = cpx(static_cast<double>(i), 1.0);
  for (auto _ : state) {
    fftw_execute(p);
    benchmark::ClobberMemory();
  }
  fftw_destroy_plan(p);
  b.finish(state);
}

void fftw_estimate(benchmark::State& state) { fftw_rank0(state, FFTW_ESTIMATE); }
void fftw_measure(benchmark::State& state) { fftw_rank0(state, FFTW_MEASURE); }

void memcpy_ceiling(benchmark::State& state) {
  block b(state);
  const std::size_t bytes = sizeof(cpx) * static_cast<std::size_t>(b.rows * b.cols);
  for (auto _ : state) {
    std::memcpy(static_cast<void*>(b.dst), b.src, bytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * 2 * static_cast<std::int64_t>(bytes));
}

void shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"rows", "cols", "src_stride", "dst_stride"});
  b->Args({1024, 1024, 2048, 2048});  // 1D 2^22 on 2 ranks: n1 = n2 = 2048
  b->Args({1024, 1024, 2052, 2052});  // the same, strides off a power of two
  b->Args({512, 512, 1024, 1024});    // 1D 2^20 on 2 ranks
  b->Args({2048, 2048, 4096, 4096});  // 1D 2^24 on 2 ranks
  b->Unit(benchmark::kMillisecond);
}

BENCHMARK(toru_tiled)->Apply(shapes);
BENCHMARK(fftw_estimate)->Apply(shapes);
BENCHMARK(fftw_measure)->Apply(shapes);
BENCHMARK(memcpy_ceiling)->Apply(shapes);

}  // namespace

BENCHMARK_MAIN();
