#include "common.hpp"

#include <cmath>
#include <string>

#include <fmt/format.h>

#include "fftw_api.hpp"
#include "plan3d.hpp"
#include "toru/core/mpi.hpp"
#if TORU_ENABLE_CUDA
#include "backend_cufft.hpp"
#endif

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

}  // namespace toru::fft

namespace toru::fft::detail {

void expect_agreement(MPI_Comm comm, std::initializer_list<std::pair<std::string_view, std::int64_t>> values) {
  std::vector<std::int64_t> mine, lo(values.size()), hi(values.size());
  for (const auto& v : values) mine.push_back(v.second);
  const int n = static_cast<int>(mine.size());
  check_mpi(MPI_Allreduce(mine.data(), lo.data(), n, MPI_INT64_T, MPI_MIN, comm), "MPI_Allreduce");
  check_mpi(MPI_Allreduce(mine.data(), hi.data(), n, MPI_INT64_T, MPI_MAX, comm), "MPI_Allreduce");
  int i = 0;
  for (const auto& v : values) {
    if (lo[i] != hi[i])
      throw error(errc::mismatch, fmt::format("{} differs across ranks (from {} to {}); every rank must pass the same "
                                              "value",
                                              v.first, lo[i], hi[i]));
    ++i;
  }
}

void expect_buffers(MPI_Comm comm, const void* in, std::int64_t in_elems, const void* out, std::int64_t out_elems) {
  validate_collectively(comm, [&] {
    if (in == nullptr && in_elems > 0)
      throw error(errc::invalid_argument,
                  fmt::format("in: expected a buffer of {} elements on this rank, got a null pointer", in_elems));
    if (out == nullptr && out_elems > 0)
      throw error(errc::invalid_argument,
                  fmt::format("out: expected a buffer of {} elements on this rank, got a null pointer", out_elems));
  });
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
  // well above the latency knee for the sizes of docs/benchmarks.md; callers can override.
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

std::shared_ptr<gpu::context> make_device_context(MPI_Comm comm) {
#if TORU_ENABLE_CUDA
  return gpu::make_context(comm);
#else
  validate_collectively(comm, [] {
    throw error(errc::unsupported, "backend cufft: toru was built without CUDA (TORU_ENABLE_CUDA=OFF)");
  });
  return nullptr;
#endif
}

work_regions make_work_regions(std::int64_t elems, std::size_t elem_bytes, bool device) {
  work_regions r;
  r.bytes = (static_cast<std::size_t>(elems) * elem_bytes + 63) / 64 * 64;
  if (device) {
#if TORU_ENABLE_CUDA
    r.device = gpu::device_alloc(2 * r.bytes);
#endif
  } else {
    r.host = aligned_buffer(2 * r.bytes);
  }
  return r;
}

}  // namespace toru::fft::detail
