// SPDX-License-Identifier: BSD-3-Clause
#include "common.hpp"

#include <climits>
#include <cmath>
#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "fftw_api.hpp"
#include "plan3d.hpp"
#include "toru/core/mpi.hpp"

namespace toru::fft {

std::string_view to_string(decomposition d) noexcept {
  switch (d) {
    case decomposition::automatic:
      return "automatic";
    case decomposition::slab:
      return "slab";
    case decomposition::pencil:
      return "pencil";
  }
  return "?";
}
std::string_view to_string(order o) noexcept { return o == order::natural ? "natural" : "transposed"; }
std::string_view to_string(exchange_path p) noexcept {
  return p == exchange_path::window ? "window" : p == exchange_path::alltoall ? "alltoall" : "automatic";
}

}  // namespace toru::fft

namespace toru::fft::detail {

void check_buffers(const void* in, std::int64_t in_elems, const void* out, std::int64_t out_elems) {
  if (in == nullptr && in_elems > 0)
    throw error(errc::invalid_argument,
                fmt::format("in: expected a buffer of {} elements on this rank, got a null pointer", in_elems));
  if (out == nullptr && out_elems > 0)
    throw error(errc::invalid_argument,
                fmt::format("out: expected a buffer of {} elements on this rank, got a null pointer", out_elems));
}

void check_scale(scale s) {
  const int v = static_cast<int>(s);
  expect(v >= static_cast<int>(scale::none) && v <= static_cast<int>(scale::symmetric), "scale",
         "none, full or symmetric", std::to_string(v));
}

std::size_t checked_bytes(std::int64_t elems, std::size_t elem_bytes, std::string_view what) {
  std::size_t bytes = 0;
  if (elems < 0 || __builtin_mul_overflow(static_cast<std::size_t>(elems), elem_bytes, &bytes) || bytes > SIZE_MAX / 4)
    throw error(errc::out_of_memory,
                fmt::format("{}: {} elements of {} bytes exceed the 64-bit address space", what, elems, elem_bytes));
  return bytes;
}

unsigned fftw_flags(effort e) { return e == effort::measure ? FFTW_MEASURE : FFTW_ESTIMATE; }

double scale_factor(scale s, double n) {
  switch (s) {
    case scale::none:
      return 1.0;
    case scale::full:
      return 1.0 / n;
    case scale::symmetric:
      return 1.0 / std::sqrt(n);
  }
  return 1.0;
}

std::vector<std::int64_t> chunk_batches(std::int64_t units, int chunks) {
  std::vector<std::int64_t> b{units};
  for (int c = 0; c < chunks; ++c) b.push_back((c + 1) * units / chunks - c * units / chunks);
  return b;
}

int chunk_count(int requested, bool overlap) {
  if (!overlap) return 1;
  // Four chunks hide most of the local FFT time behind the exchange while keeping each message
  // well above the latency knee for the sizes of docs/history/benchmarks-2026-12.md; callers can override.
  return requested > 0 ? requested : 4;
}

aligned_buffer::aligned_buffer(std::size_t bytes) {
  if (bytes == 0) return;
  p_ = fftw_malloc(bytes);
  if (!p_) throw error(errc::out_of_memory, fmt::format("could not allocate {} bytes of FFT workspace", bytes));
}
aligned_buffer::~aligned_buffer() {
  if (p_) fftw_free(p_);
}

}  // namespace toru::fft::detail
