#include "common.hpp"

#include <array>
#include <climits>
#include <cmath>
#include <cstdint>
#include <exception>
#include <functional>
#include <string>
#include <utility>

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

void expect_usable_comm(MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) throw error(errc::invalid_argument, "comm: expected a communicator, got MPI_COMM_NULL");
  int inter = 0;
  check_mpi(MPI_Comm_test_inter(comm, &inter), "MPI_Comm_test_inter");
  if (inter)
    throw error(errc::invalid_argument,
                "comm: expected an intracommunicator, got an intercommunicator (use MPI_Intercomm_merge)");
}

namespace {
thread_local std::exception_ptr deferred;
}  // namespace

defer_error::defer_error(std::exception_ptr e) { deferred = std::move(e); }
defer_error::~defer_error() { deferred = nullptr; }

void agree_and_validate(MPI_Comm comm, std::string_view call, std::initializer_list<agreed> values,
                        const std::function<void()>& validate) {
  if (values.size() > max_agreed)
    throw error(errc::internal,
                fmt::format("{}: {} arguments to agree on, at most {}", call, values.size(), max_agreed));
  std::exception_ptr mine = std::exchange(deferred, nullptr);
  if (!mine) {
    try {
      validate();
    } catch (...) {
      mine = std::current_exception();
    }
  }
  const int rank = mpi_rank(comm);
  const auto call_id = static_cast<std::int64_t>(std::hash<std::string_view>{}(call) >> 1);
  // The common path is one MPI_MIN reduction of three words: the lowest failing rank, and min(h)
  // and min(~h) = ~max(h) of a hash h of the call and every value. Equal hashes mean agreement
  // (a collision would have to be between the values of two ranks in one call).
  std::uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&h](std::int64_t v) {
    h ^= static_cast<std::uint64_t>(v) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 0x100000001b3ull;
  };
  mix(call_id);
  for (const auto& v : values) mix(v.second);
  const auto hash = static_cast<std::int64_t>(h >> 1);
  std::array<std::int64_t, 3> small{mine ? rank : INT64_MAX, hash, ~hash}, small_lo{};
  check_mpi(MPI_Allreduce(small.data(), small_lo.data(), 3, MPI_INT64_T, MPI_MIN, comm), "MPI_Allreduce");
  if (small_lo[0] == INT64_MAX && small_lo[1] == ~small_lo[2]) return;

  // Rare path from here on, taken by every rank alike since it depends on reduced values only.
  // The call and each value side by side, min(v) and min(~v) (unused slots 0), so the error can
  // name what differs. The fixed size keeps ranks in different fft calls in one matching allreduce.
  constexpr std::size_t words = 3 + 2 * max_agreed;
  std::array<std::int64_t, words> word{}, lo{};
  word[0] = small[0];
  word[1] = call_id;
  word[2] = ~call_id;
  std::size_t at = 3;
  for (const auto& v : values) {
    word[at++] = v.second;
    word[at++] = ~v.second;
  }
  for (; at < words; at += 2) word[at + 1] = ~std::int64_t{0};
  check_mpi(MPI_Allreduce(word.data(), lo.data(), static_cast<int>(words), MPI_INT64_T, MPI_MIN, comm),
            "MPI_Allreduce");

  auto lowest_differing_from_rank0 = [&](std::int64_t mine_value) {
    std::int64_t v0 = mine_value;
    check_mpi(MPI_Bcast(&v0, 1, MPI_INT64_T, 0, comm), "MPI_Bcast");
    int differs = mine_value != v0 ? rank : INT_MAX, culprit = INT_MAX;
    check_mpi(MPI_Allreduce(&differs, &culprit, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
    return std::pair{v0, culprit};
  };
  if (lo[1] != ~lo[2]) {
    const int culprit = lowest_differing_from_rank0(call_id).second;
    validate_collectively(comm, [&] {
      if (rank == culprit)
        throw error(errc::mismatch,
                    fmt::format("rank {} calls {} while rank 0 makes another toru::fft collective call; "
                                "every rank must make the same calls in the same order",
                                rank, call));
    });
  }
  // A rank's own invalid argument says more than the disagreement it causes, so it wins.
  if (lo[0] != INT64_MAX)
    validate_collectively(comm, [&] {
      if (mine) std::rethrow_exception(mine);
    });
  std::size_t i = 3;
  for (const auto& v : values) {
    if (lo[i] != ~lo[i + 1]) {
      const auto [v0, culprit] = lowest_differing_from_rank0(v.second);
      validate_collectively(comm, [&] {
        if (rank == culprit)
          throw error(errc::mismatch,
                      fmt::format("{}: {} differs across ranks (rank 0 passes {}, rank {} passes {}); every rank "
                                  "must pass the same value",
                                  call, v.first, v0, culprit, v.second));
      });
    }
    i += 2;
  }
}

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
  r.bytes = (checked_bytes(elems, elem_bytes, "FFT workspace") + 63) / 64 * 64;
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
