// SPDX-License-Identifier: BSD-3-Clause
#include "plan1d.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <new>
#include <numbers>

#include <fmt/format.h>

#include "common.hpp"
#include "divisors.hpp"
#include "six_step_direct_step.hpp"
#include "split.hpp"
#include "toru/core/agreement.hpp"
#include "toru/core/mpi.hpp"
#include "wisdom.hpp"

namespace toru::fft::detail {

std::int64_t default_n1(std::int64_t n) { return largest_divisor_up_to_sqrt(n); }

void check_1d(std::int64_t n, const options1d& opts) {
  expect(n >= 1, "n", "a size >= 1", std::to_string(n));
  // n1 and n2 are FFTW int lengths, so n <= (2^31-1)^2; checked first to name the real limit.
  constexpr std::int64_t max_len = INT32_MAX;
  expect(n <= max_len * max_len, "n", "a size up to (2^31-1)^2 = 4611686014132420609 (n1 and n2 below 2^31)",
         std::to_string(n));
  expect(opts.n1 >= 0 && (opts.n1 == 0 || n % opts.n1 == 0), "options.n1",
         fmt::format("0 (automatic) or a divisor of n = {}", n), std::to_string(opts.n1));
  expect(opts.chunks >= 0, "options.chunks", "0 (automatic) or a positive count", std::to_string(opts.chunks));
  expect(static_cast<int>(opts.path) >= 0 && static_cast<int>(opts.path) <= 2, "options.path",
         "automatic, window or alltoall", std::to_string(static_cast<int>(opts.path)));
  const std::int64_t f1 = opts.n1 ? opts.n1 : default_n1(n);
  expect(f1 <= INT32_MAX && n / f1 <= INT32_MAX, "n", "n1 and n / n1 below 2^31 (FFTW's int lengths)",
         fmt::format("{} = {} x {}", n, f1, n / f1));
}

local_layout1d make_layout1d(int P, int me, std::int64_t n, const options1d& opts) {
  check_1d(n, opts);
  local_layout1d L;
  L.n1 = opts.n1 ? opts.n1 : default_n1(n);
  L.n2 = n / L.n1;
  // Layouts: A [n1 part][n2] (input), B [n2 part][n1], C [k1 part][n2] (scrambled), D [k2 part][n1].
  const std::int64_t rowsA = part_count(L.n1, P, me), rowsB = part_count(L.n2, P, me);
  L.in_start = part_start(L.n1, P, me) * L.n2;
  L.in_count = rowsA * L.n2;
  if (opts.output == order::natural) {
    L.out_start = part_start(L.n2, P, me) * L.n1;
    L.out_count = rowsB * L.n1;
  } else {
    L.out_start = L.in_start;
    L.out_count = L.in_count;
  }
  L.alloc = std::max({rowsA * L.n2, rowsB * L.n1, std::int64_t{1}});
  return L;
}

template <class T>
plan1d<T>::plan1d(MPI_Comm comm, std::int64_t n_, const options1d& opts, bool device) : opts_(opts) {
  expect_intracommunicator(comm, "comm");
  validate_collectively(comm, "the toru::fft::fft1d constructor",
                        {{"n", n_},
                         {"precision (sizeof of the real type)", static_cast<std::int64_t>(sizeof(T))},
                         {"backend (fftw or cufft)", device},
                         {"options.n1", opts.n1},
                         {"options.output", static_cast<std::int64_t>(opts.output)},
                         {"options.planner", static_cast<std::int64_t>(opts.planner)},
                         {"options.overlap", opts.overlap},
                         {"options.chunks", opts.chunks},
                         {"options.algorithm", static_cast<std::int64_t>(opts.algorithm)},
                         {"options.path", static_cast<std::int64_t>(opts.path)}},
                        [&] { check_1d(n_, opts); });
  ops_ = make_backend_ops<T>(comm, device, fftw_flags(opts.planner));
  comm_ = communicators(comm, 0, 0, opts.comm).all;
  agree_ = agreement_comm(comm);
  const int P = comm_->size(), me = comm_->rank();
  const local_layout1d L = make_layout1d(P, me, n_, opts);
  n = n_;
  n1 = L.n1;
  n2 = L.n2;
  in_start = L.in_start;
  in_count = L.in_count;
  out_start = L.out_start;
  out_count = L.out_count;
  alloc = L.alloc;
  const std::int64_t rowsA = part_count(n1, P, me), rowsB = part_count(n2, P, me);
  const bool natural = opts.output == order::natural;

  using cpx = std::complex<T>;
  const std::int64_t region = std::max({alloc, n1, n2});
  // One rank short of memory fails on every rank, not in the next exchange.
  validate_collectively(comm, [&] {
    regions_ = make_work_regions(region, sizeof(cpx), *ops_);
    const std::size_t bytes = checked_bytes(rowsB * n1, sizeof(cpx), "twiddle factors");
    try {
      twiddle_.resize(static_cast<std::size_t>(rowsB * n1));
    } catch (const std::bad_alloc&) {
      throw error(errc::out_of_memory, fmt::format("twiddle factors: could not allocate {} bytes", bytes));
    }
  });
  ops_->plan_on(regions_.scratch_a(), regions_.scratch_b());
  const MPI_Datatype type = mpi_type<cpx>();

  // Twiddles in double whatever T: the angle is reduced mod n exactly in integers first.
  const std::int64_t b0 = part_start(n2, P, me);
  for (std::int64_t r = 0; r < rowsB; ++r)
    for (std::int64_t k1 = 0; k1 < n1; ++k1) {
      const std::int64_t e = (b0 + r) * k1 % n;  // (b0 + r) * k1 < n2 * n1 = n: no overflow
      const double angle = -2.0 * std::numbers::pi * static_cast<double>(e) / static_cast<double>(n);
      twiddle_[r * n1 + k1] = cpx(static_cast<T>(std::cos(angle)), static_cast<T>(std::sin(angle)));
    }

  // The strategy table (strategy.hpp).
  plan_facts facts = option_facts(comm, *comm_, opts, device, static_cast<double>(alloc) * sizeof(cpx));
  facts.exchanges = natural ? 3 : 2;
  facts.wire_seconds = torus_wire_seconds(*comm_, facts.exchange_bytes, opts.algorithm).alltoall;
  facts.fft_flops = 5 * static_cast<double>(n) * std::log2(std::max(static_cast<double>(n), 2.0)) / P;
  // The direct window (six_step_direct_step): copy in, two tile passes, copy out in natural order
  // (2 copies of B each); the transposed order saves the copy on its side.
  facts.direct_1d_copies = natural ? 8 : 6;
  // Its node arrays, A's and B's parts, allocated only where it can be chosen (decide_direct_arrays).
  const node_array *a_array = nullptr, *b_array = nullptr;
  decide_direct_arrays(facts, opts.planner == effort::measure, {.window = true, .direct = true}, [&] {
    const auto bytes = [&](std::int64_t elems) { return checked_bytes(elems, sizeof(cpx), "FFT node array"); };
    a_array = shared_array(comm_->mpi(), bytes(rowsA * n2));
    b_array = shared_array(comm_->mpi(), bytes(rowsB * n1));
    return a_array && b_array;
  });
  table_ = strategy_table(facts);
  if (cheapest(table_) < 0)
    throw error(errc::invalid_argument,
                fmt::format("options.path: no exchange path applies to this plan ({})", describe_table(table_)));

  // Forward steps only for MEASURE's timing, backward only after it (see plan3d.cpp).
  auto build = [&](const strategy& st, std::vector<std::unique_ptr<step<T>>>& fwd_out,
                   std::vector<std::unique_ptr<step<T>>>& bwd_out, directions d) {
    const bool with_forward = d != directions::backward, with_backward = d != directions::forward;
    const int C = st.chunks;
    const bool overlap = st.overlap;
    auto geometry = [&](std::int64_t na, std::int64_t nb) { return balanced_geometry(1, na, nb, P, me); };
    const exchange_settings x{C, overlap, type, opts.algorithm, st.window};
    auto transpose = [&](std::int64_t na, std::int64_t nb, std::unique_ptr<line_op<T>> op) {
      return ops_->transpose(comm_, geometry(na, nb), std::move(op), x, ws_bytes_);
    };
    const auto fwd = fft_kind::c2c_forward, bwd = fft_kind::c2c_backward;
    const std::int64_t rowsC = rowsA;  // k1 and n1 are split alike
    const int len1 = static_cast<int>(n1);
    auto fft_rows = [&](fft_kind kind, std::int64_t len, std::int64_t rows) {
      return ops_->fft_lines(kind, {static_cast<int>(len)}, chunk_batches(rows, C), false);
    };
    auto twiddle_rows = [&](fft_kind kind, bool forward) {
      return ops_->twiddle_fft(kind, len1, chunk_batches(rowsB, C), twiddle_, forward);
    };
    auto whole_rows = [&](fft_kind kind, std::int64_t len, std::int64_t rows) {
      return ops_->fft_step(kind, {static_cast<int>(len)}, rows);
    };

    if (st.direct) {
      // FFTW plans on the tiles: a rank that cannot plan fails on every rank.
      const unsigned flags = fftw_flags(opts.planner);
      std::unique_ptr<step<T>> f, b;
      validate_collectively(comm_->mpi(), [&] {
        if (with_forward)
          f = std::make_unique<six_step_direct_step<T>>(P, me, n1, n2, true, natural, flags, twiddle_.data(), a_array,
                                                        b_array);
        if (with_backward)
          b = std::make_unique<six_step_direct_step<T>>(P, me, n1, n2, false, natural, flags, twiddle_.data(), a_array,
                                                        b_array);
      });
      if (with_forward) fwd_out.push_back(std::move(f));
      if (with_backward) bwd_out.push_back(std::move(b));
      return;
    }
    // Forward: A -> B (FFT n1, twiddle), B -> C (FFT n2), C -> D when natural.
    if (with_forward) {
      fwd_out.push_back(transpose(n2, n1, twiddle_rows(fwd, true)));
      fwd_out.push_back(transpose(n1, n2, fft_rows(fwd, n2, rowsC)));
      if (natural) fwd_out.push_back(transpose(n2, n1, nullptr));
    }
    // Backward: D -> C (FFT n2) when natural, or FFT n2 on C; C -> B (twiddle, FFT n1); B -> A.
    if (!with_backward) return;
    if (natural)
      bwd_out.push_back(transpose(n1, n2, fft_rows(bwd, n2, rowsC)));
    else
      bwd_out.push_back(whole_rows(bwd, n2, rowsC));
    bwd_out.push_back(transpose(n2, n1, twiddle_rows(bwd, false)));
    bwd_out.push_back(transpose(n1, n2, nullptr));
  };

  int choice = cheapest(table_);
  if (opts.planner == effort::measure && !device) {
    const std::size_t bytes = checked_bytes(alloc, sizeof(cpx), "FFT planning buffer");
    char* base = regions_.base();
    const work_buffers wb{base, base + regions_.bytes, nullptr};
    const std::string key =
        fmt::format("fft1d {} {} n1 {} ranks {} {} overlap {} chunks {} path {} algorithm {} torus {}",
                    sizeof(T) == 4 ? "float" : "double", n, n1, P, to_string(opts.output), opts.overlap, opts.chunks,
                    to_string(opts.path), static_cast<int>(opts.algorithm), facts.torus_described);
    choice = measured_plan_choice<T>(comm_->mpi(), key, table_, bytes, wb, build, fwd_, &measured_);
  }
  strategy_ = table_[choice].s;
  build(strategy_, fwd_, bwd_, fwd_.empty() ? directions::both : directions::backward);
  ws_bytes_ += 2 * regions_.bytes;
}

template <class T>
plan1d<T>::~plan1d() = default;

template <class T>
void plan1d<T>::check(bool forward, const void* in, const void* out, const void* ws, scale s) const {
  validate_collectively(*agree_, "a toru::fft 1D forward/backward",
                        {{"direction", forward ? -1 : 1}, {"scale", static_cast<std::int64_t>(s)}}, [&] {
                          check_scale(s);
                          ops_->check_buffers_local(in, forward ? in_count : out_count, out, alloc);
                        });
  ops_->check_buffers_collective(comm(), in, forward ? in_count : out_count, out, alloc, ws);
}

template <class T>
void plan1d<T>::perform(bool forward, const void* in, void* out, void* ws, scale s) const {
  char* base = ws ? static_cast<char*>(ws) : regions_.base();
  const work_buffers wb{base, base + regions_.bytes,
                        ops_->exchange_workspace(ws ? base + 2 * regions_.bytes : nullptr)};
  const auto& steps = forward ? fwd_ : bwd_;
  const void* src = in;
  for (const auto& st : steps) {
    st->run(src, out, wb);
    src = out;
  }
  if (s != scale::none)
    ops_->scale(static_cast<std::complex<T>*>(out), forward ? out_count : in_count,
                static_cast<T>(scale_factor(s, static_cast<double>(n))));
  ops_->finish();  // blocking on every backend: out is complete on return
}

template class plan1d<float>;
template class plan1d<double>;

}  // namespace toru::fft::detail
