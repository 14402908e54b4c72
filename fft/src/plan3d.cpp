// SPDX-License-Identifier: BSD-3-Clause
#include "plan3d.hpp"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>

#include <fmt/format.h>

#include "backend_ops.hpp"
#include "common.hpp"
#include "reshape_impl.hpp"
#include "slab_direct_step.hpp"
#include "slab_vector_step.hpp"
#include "split.hpp"
#include "strategy.hpp"
#include "toru/core/agreement.hpp"
#include "toru/core/events.hpp"
#include "toru/core/mpi.hpp"
#include "wisdom.hpp"

namespace toru::fft::detail {

namespace {

bool slab_possible(std::array<std::int64_t, 3> n, std::int64_t nc, int P) { return n[0] >= P && nc >= P; }

bool pencil_possible(std::array<std::int64_t, 3> n, std::int64_t nc, int p0, int p1) {
  return p0 <= n[0] && p0 <= n[1] && p1 <= n[1] && p1 <= nc;
}

// The pencil grid closest to square among those where every rank gets points in every layout;
// {0, 0} when there is none.
std::array<int, 2> best_pencil(std::array<std::int64_t, 3> n, std::int64_t nc, int P) {
  std::array<int, 2> best{0, 0};
  for (int p0 = 1; p0 <= P; ++p0) {
    if (P % p0) continue;
    const int p1 = P / p0;
    if (!pencil_possible(n, nc, p0, p1)) continue;
    if (best[0] == 0 || std::abs(p0 - p1) < std::abs(best[0] - best[1])) best = {p0, p1};
  }
  return best;
}

box3d make_box(std::array<std::int64_t, 3> low, std::array<std::int64_t, 3> size, std::array<int, 3> ord) {
  box3d b;
  b.low = low;
  b.size = size;
  b.order = ord;
  b.row_stride = size[ord[2]];
  return b;
}

}  // namespace

layout3d make_layout3d(int P, int rank, std::array<std::int64_t, 3> n, bool r2c, const options3d& o, bool device) {
  for (int a = 0; a < 3; ++a)
    expect(n[a] >= 1 && n[a] <= INT32_MAX, fmt::format("n[{}]", a), "a size in [1, 2^31-1]", std::to_string(n[a]));
  // Element counts (and 2x for the padded real rows of r2c) stay far from int64 overflow.
  std::int64_t points = 0;
  expect(!__builtin_mul_overflow(n[0], n[1], &points) && !__builtin_mul_overflow(points, n[2], &points) &&
             points <= (std::int64_t{1} << 60),
         "n", "n0 * n1 * n2 at most 2^60 points", fmt::format("{} x {} x {}", n[0], n[1], n[2]));
  expect(o.chunks >= 0, "options.chunks", "0 (automatic) or a positive count", std::to_string(o.chunks));
  expect(static_cast<int>(o.path) >= 0 && static_cast<int>(o.path) <= 2, "options.path",
         "automatic, window or alltoall", std::to_string(static_cast<int>(o.path)));
  expect(static_cast<int>(o.rows) >= 0 && static_cast<int>(o.rows) <= 1, "options.rows", "padded or packed",
         std::to_string(static_cast<int>(o.rows)));
  layout3d L;
  L.n = n;
  L.r2c = r2c;
  L.nc = r2c ? n[2] / 2 + 1 : n[2];
  const std::int64_t nc = L.nc;
  const std::string sizes = fmt::format("{}x{}x{}{}", n[0], n[1], n[2], r2c ? " (r2c)" : "");

  switch (o.decomp) {
    case decomposition::slab:
      if (!slab_possible(n, nc, P))
        throw error(errc::invalid_argument,
                    fmt::format("decomposition: a slab over {} ranks needs n0 >= {} and {} >= {}; got {}; use "
                                "decomposition::pencil or automatic",
                                P, P, r2c ? "n2/2+1" : "n2", P, sizes));
      L.decomp = decomposition::slab;
      break;
    case decomposition::pencil: {
      std::array<int, 2> g = o.grid;
      if (g[0] == 0 && g[1] == 0) {
        g = best_pencil(n, nc, P);
        if (g[0] == 0)
          throw error(
              errc::invalid_argument,
              fmt::format("decomposition: no pencil grid over {} ranks gives every rank points of {}", P, sizes));
      }
      expect(g[0] >= 1 && g[1] >= 1 && g[0] * g[1] == P, "options.grid", fmt::format("p0 x p1 = {} ranks", P),
             fmt::format("{} x {}", g[0], g[1]));
      if (!pencil_possible(n, nc, g[0], g[1]))
        throw error(errc::invalid_argument,
                    fmt::format("options.grid: a {} x {} pencil grid needs n0 >= p0, n1 >= max(p0, p1) and {} >= p1; "
                                "got {}",
                                g[0], g[1], r2c ? "n2/2+1" : "n2", sizes));
      L.decomp = decomposition::pencil;
      L.p0 = g[0];
      L.p1 = g[1];
      break;
    }
    case decomposition::automatic: {
      if (slab_possible(n, nc, P)) {
        L.decomp = decomposition::slab;
      } else if (auto g = best_pencil(n, nc, P); g[0] != 0) {
        L.decomp = decomposition::pencil;
        L.p0 = g[0];
        L.p1 = g[1];
      } else {
        // Too small for every rank to get work: a slab with idle ranks still computes correctly.
        L.decomp = decomposition::slab;
      }
      break;
    }
  }
  if (L.decomp == decomposition::slab) {
    L.p0 = P;
    L.p1 = 1;
  }
  L.r0 = rank / L.p1;
  L.r1 = rank % L.p1;
  const int p0 = L.p0, p1 = L.p1, r0 = L.r0, r1 = L.r1;
  if (L.decomp == decomposition::slab) {
    L.s0 = make_box({part_start(n[0], P, rank), 0, 0}, {part_count(n[0], P, rank), n[1], nc}, {0, 1, 2});
    L.s2 = make_box({0, 0, part_start(nc, P, rank)}, {n[0], n[1], part_count(nc, P, rank)}, {1, 2, 0});
    L.s1 = L.s0;
  } else {
    L.s0 = make_box({part_start(n[0], p0, r0), part_start(n[1], p1, r1), 0},
                    {part_count(n[0], p0, r0), part_count(n[1], p1, r1), nc}, {0, 1, 2});
    L.s1 = make_box({part_start(n[0], p0, r0), 0, part_start(nc, p1, r1)},
                    {part_count(n[0], p0, r0), n[1], part_count(nc, p1, r1)}, {0, 2, 1});
    L.s2 = make_box({0, part_start(n[1], p0, r0), part_start(nc, p1, r1)},
                    {n[0], part_count(n[1], p0, r0), part_count(nc, p1, r1)}, {2, 1, 0});
  }
  // Slabs on the host: FFTW-MPI's transposed layout M = [i1 part][i0][i2]. M moves whole rows of
  // axis 2 (no element-wise transpose) and costs a strided axis-0 FFT, which column_fft runs in
  // L1 tiles at about the contiguous transform's speed for any n0 (docs/fft.md: FFTW_ESTIMATE's
  // own strided plan was 1.5x the contiguous one at 128 points and 17x at 256, hence an earlier
  // bound of n0 <= 128). n1 >= P keeps every rank busy in M. Transposed output stops in M (one
  // all-to-all, exactly FFTW_MPI_TRANSPOSED_OUT's layout). The cufft backend keeps the
  // transposing path (its kernels cover that geometry), so its transposed layout differs here.
  if (L.decomp == decomposition::slab && !device && n[1] >= P) {
    L.vector_mid = true;
    L.mid = make_box({0, part_start(n[1], P, rank), 0}, {n[0], part_count(n[1], P, rank), nc}, {1, 0, 2});
  }
  L.out = o.output == order::natural ? L.s0 : L.vector_mid ? L.mid : L.s2;
  L.real_in = L.s0;
  if (r2c) {
    L.real_in.size[2] = n[2];
    L.real_in.row_stride = 2 * nc;
  }
  L.alloc = std::max({L.s0.extent(), L.s1.extent(), L.s2.extent(), L.mid.extent(), std::int64_t{1}});
  return L;
}

template <class T>
plan3d<T>::plan3d(MPI_Comm comm, std::array<std::int64_t, 3> n, bool r2c, const options3d& opts, bool device)
    : opts_(opts) {
  expect_intracommunicator(comm, "comm");
  const int P = mpi_size(comm), rank = mpi_rank(comm);
  validate_collectively(comm, r2c ? "the toru::fft::fft3d_r2c constructor" : "the toru::fft::fft3d constructor",
                        {{"n[0]", n[0]},
                         {"n[1]", n[1]},
                         {"n[2]", n[2]},
                         {"transform (c2c or r2c)", r2c},
                         {"precision (sizeof of the real type)", static_cast<std::int64_t>(sizeof(T))},
                         {"backend (fftw or cufft)", device},
                         {"options.decomp", static_cast<std::int64_t>(opts.decomp)},
                         {"options.grid[0]", opts.grid[0]},
                         {"options.grid[1]", opts.grid[1]},
                         {"options.output", static_cast<std::int64_t>(opts.output)},
                         {"options.planner", static_cast<std::int64_t>(opts.planner)},
                         {"options.overlap", opts.overlap},
                         {"options.chunks", opts.chunks},
                         {"options.algorithm", static_cast<std::int64_t>(opts.algorithm)},
                         {"options.path", static_cast<std::int64_t>(opts.path)},
                         {"options.rows", static_cast<std::int64_t>(opts.rows)}},
                        [&] { lay_ = make_layout3d(P, rank, n, r2c, opts, device); });
  ops_ = make_backend_ops<T>(comm, device, fftw_flags(opts.planner));

  const layout3d& L = lay_;
  comms_ = L.decomp == decomposition::pencil ? communicators(comm, L.p0, L.p1, opts.comm)
                                             : communicators(comm, 0, 0, opts.comm);
  agree_ = agreement_comm(comm);

  using cpx = std::complex<T>;
  // Regions also serve as planning scratch, so they hold at least one unit of every local FFT.
  const std::int64_t region = std::max({L.alloc, n[0], n[1], n[1] * L.nc});
  // One rank short of memory fails on every rank, not in the next exchange.
  validate_collectively(comm, [&] { regions_ = make_work_regions(region, sizeof(cpx), *ops_); });
  void* scratch_a = regions_.scratch_a();
  void* scratch_b = regions_.scratch_b();
  ops_->plan_on(scratch_a, scratch_b);
  const unsigned flags = fftw_flags(opts.planner);
  const MPI_Datatype type = mpi_type<cpx>();
  const auto [n0, n1, n2] = n;
  const std::int64_t nc = L.nc;
  const int P0 = L.p0, P1 = L.p1, r0 = L.r0, r1 = L.r1;
  const bool natural = opts.output == order::natural;

  // The strategy table (strategy.hpp): facts about this plan, the candidates, the choice.
  plan_facts facts = option_facts(comm, *comms_.all, opts, device, static_cast<double>(L.alloc) * sizeof(cpx));
  facts.exchanges = L.decomp == decomposition::pencil ? (natural ? 4 : 2) : (natural ? 2 : 1);
  facts.mid_exchanges = natural ? 2 : 1;
  // Pencils exchange within rows and columns of the grid: only the slab's exchange spans the torus.
  if (L.decomp == decomposition::slab) {
    const auto wires = torus_wire_seconds(*comms_.all, facts.exchange_bytes, opts.algorithm);
    facts.wire_seconds = wires.alltoall;
    facts.mid_wire_seconds = wires.alltoallw;
  }
  const double N = static_cast<double>(n0) * static_cast<double>(n1) * static_cast<double>(n2);
  facts.fft_flops = 5 * N * std::log2(std::max(N, 2.0)) / P;
  facts.mid_possible = L.vector_mid;
  facts.mid_required = L.vector_mid && !natural;
  set_3d_window_weights(facts);
  // The direct window's node array (slab_direct_step): M's parts, allocated only where that
  // candidate can be chosen (decide_direct_arrays).
  const node_array* m_array = nullptr;
  if (L.vector_mid)
    decide_direct_arrays(facts, opts.planner == effort::measure, {.window = true, .mid = true, .direct = true}, [&] {
      m_array = shared_array(comms_.all->mpi(), checked_bytes(L.mid.extent(), sizeof(cpx), "FFT node array"));
      return m_array != nullptr;
    });
  table_ = strategy_table(facts);
  if (cheapest(table_) < 0)
    throw error(errc::invalid_argument,
                fmt::format("options.path: no exchange path applies to this plan ({})", describe_table(table_)));

  const comm_ptr all = comms_.all;
  // MEASURE times forward steps only (a candidate's backward FFTW plans would cost as much
  // planning again for a transform that is never run) and keeps the winner's for the plan.
  auto build = [&](const strategy& st, std::vector<std::unique_ptr<step<T>>>& fwd_out,
                   std::vector<std::unique_ptr<step<T>>>& bwd_out, directions d) {
    const bool with_forward = d != directions::backward, with_backward = d != directions::forward;
    const auto push_fwd = [&](auto&& make) {
      if (with_forward) fwd_out.push_back(make());
    };
    const auto push_bwd = [&](auto&& make) {
      if (with_backward) bwd_out.push_back(make());
    };
    const int C = st.chunks;
    const bool overlap = st.overlap;

    auto whole = [&](fft_kind kind, std::vector<int> dims, std::int64_t units) {
      return ops_->fft_step(kind, std::move(dims), units);
    };
    auto lines = [&](fft_kind kind, std::vector<int> dims, std::int64_t units) {
      return ops_->fft_lines(kind, std::move(dims), chunk_batches(units, C), st.window && !st.mid);
    };
    const exchange_settings x{C, overlap, type, opts.algorithm, st.window};
    auto transpose = [&](const comm_ptr& c, transpose_geometry g, std::unique_ptr<line_op<T>> op) {
      return ops_->transpose(c, std::move(g), std::move(op), x, ws_bytes_);
    };
    const auto fwd = fft_kind::c2c_forward, bwd = fft_kind::c2c_backward;
    const auto first_fwd = r2c ? fft_kind::r2c : fwd;
    const auto last_bwd = r2c ? fft_kind::c2r : bwd;
    const int in0 = static_cast<int>(n0), in1 = static_cast<int>(n1), in2 = static_cast<int>(n2);

    if (L.decomp == decomposition::slab) {
      const comm_ptr& c = all;
      const int me = rank;
      const std::int64_t planes = L.s0.size[0], rows2 = L.s2.size[1] * L.s2.size[2];
      auto x02 = [&](std::unique_ptr<line_op<T>> op) {
        return transpose(c, balanced_geometry(n1, nc, n0, P, me, false, true, 1), std::move(op));
      };
      auto x20 = [&](std::unique_ptr<line_op<T>> op) {
        const std::int64_t group = op ? n1 : 1;  // whole planes for the 2D FFTs
        return transpose(c, balanced_geometry(n1, n0, nc, P, me, true, false, group), std::move(op));
      };
      // Host plans only: device plans keep the transposing steps (their kernels cover that geometry).
      if (st.mid && st.direct) {
        // FFTW plans on the node arrays: a rank that cannot plan fails on every rank.
        std::unique_ptr<step<T>> f, b;
        validate_collectively(c->mpi(), [&] {
          if (with_forward)
            f = std::make_unique<slab_direct_step<T>>(P, me, n0, n1, n2, r2c, true, natural, flags, m_array, scratch_a,
                                                      scratch_b);
          if (with_backward)
            b = std::make_unique<slab_direct_step<T>>(P, me, n0, n1, n2, r2c, false, natural, flags, m_array, scratch_a,
                                                      scratch_b);
        });
        push_fwd([&] { return std::move(f); });
        push_bwd([&] { return std::move(b); });
      } else if (st.mid) {
        auto mid = [&](bool forward, std::unique_ptr<line_op<T>> op) {
          const node_window* win =
              st.window ? shared_window(c->mpi(), checked_bytes(slab_vector_step<T>::window_elems(P, me, n0, n1, nc),
                                                                sizeof(cpx), "FFT window"))
                        : nullptr;
          auto vs = std::make_unique<slab_vector_step<T>>(c, me, n0, n1, nc, forward, natural, flags, scratch_a,
                                                          scratch_b, std::move(op), type, opts.algorithm, win);
          ws_bytes_ = std::max(ws_bytes_, vs->workspace_size());
          return vs;
        };
        push_fwd([&] { return whole(first_fwd, {in1, in2}, planes); });
        push_fwd([&] { return mid(true, nullptr); });
        push_bwd([&] { return mid(false, lines(last_bwd, {in1, in2}, planes)); });
      } else {
        push_fwd([&] { return whole(first_fwd, {in1, in2}, planes); });
        push_fwd([&] { return x02(lines(fwd, {in0}, rows2)); });
        if (natural) push_fwd([&] { return x20(nullptr); });
        if (natural)
          push_bwd([&] { return x02(lines(bwd, {in0}, rows2)); });
        else
          push_bwd([&] { return whole(bwd, {in0}, rows2); });
        push_bwd([&] { return x20(lines(last_bwd, {in1, in2}, planes)); });
      }
    } else {
      const comm_ptr &row = comms_.row, &col = comms_.col;
      const std::int64_t rows0 = L.s0.size[0] * L.s0.size[1], rows1 = L.s1.size[0] * L.s1.size[2],
                         rows2 = L.s2.size[1] * L.s2.size[2];
      const std::int64_t t01 = L.s0.size[0], t12 = L.s1.size[2];
      auto x01 = [&](std::unique_ptr<line_op<T>> op) {
        return transpose(row, balanced_geometry(t01, nc, n1, P1, r1, true, true, 1), std::move(op));
      };
      auto x12 = [&](std::unique_ptr<line_op<T>> op) {
        return transpose(col, balanced_geometry(t12, n1, n0, P0, r0, false, true, 1), std::move(op));
      };
      auto x21 = [&](std::unique_ptr<line_op<T>> op) {
        return transpose(col, balanced_geometry(t12, n0, n1, P0, r0, true, false, 1), std::move(op));
      };
      auto x10 = [&](std::unique_ptr<line_op<T>> op) {
        return transpose(row, balanced_geometry(t01, n1, nc, P1, r1, true, true, 1), std::move(op));
      };
      push_fwd([&] { return whole(first_fwd, {in2}, rows0); });
      push_fwd([&] { return x01(lines(fwd, {in1}, rows1)); });
      push_fwd([&] { return x12(lines(fwd, {in0}, rows2)); });
      if (natural) {
        push_fwd([&] { return x21(nullptr); });
        push_fwd([&] { return x10(nullptr); });
        push_bwd([&] { return x01(lines(bwd, {in1}, rows1)); });
        push_bwd([&] { return x12(lines(bwd, {in0}, rows2)); });
        push_bwd([&] { return x21(nullptr); });
      } else {
        push_bwd([&] { return whole(bwd, {in0}, rows2); });
      }
      if (!natural) push_bwd([&] { return x21(lines(bwd, {in1}, rows1)); });
      push_bwd([&] { return x10(lines(last_bwd, {in2}, rows0)); });
    }
  };

  int choice = cheapest(table_);
  if (opts.planner == effort::measure && !device) {
    // Time every applicable candidate's forward on scratch buffers (time_steps, timed_choice's
    // protocol: strategy.hpp), max over ranks; rank 0's choice holds everywhere. Cached in the
    // wisdom file.
    const std::size_t bytes = checked_bytes(L.alloc, sizeof(cpx), "FFT planning buffer");
    const work_buffers wb = buffers(nullptr);
    const std::string key =
        fmt::format("fft3d {} {} {}x{}x{} ranks {} {} {}x{} {} overlap {} chunks {} path {} algorithm {} torus {}",
                    r2c ? "r2c" : "c2c", sizeof(T) == 4 ? "float" : "double", n0, n1, n2, P, to_string(L.decomp), L.p0,
                    L.p1, to_string(opts.output), opts.overlap, opts.chunks, to_string(opts.path),
                    static_cast<int>(opts.algorithm), facts.torus_described);
    choice = measured_plan_choice<T>(all->mpi(), key, table_, bytes, wb, build, fwd_, &measured_);
  }
  strategy_ = table_[choice].s;
  build(strategy_, fwd_, bwd_, fwd_.empty() ? directions::both : directions::backward);
  ws_bytes_ += 2 * regions_.bytes;
}

template <class T>
plan3d<T>::~plan3d() {
  if (shared_busy_) shared_busy_->store(false);  // local: the window goes back to the cache
}

// The caller's complex side in node memory: on the direct window in natural order the axis-0 FFTs
// write (forward) or read (backward) every rank's buffer straight, sparing the pass that gathers
// the planes out of M (or scatters them in): three passes over the array become two, FFTW's own
// count (docs/fft.md, "Shared output"). Elsewhere plain memory, which every path takes.
template <class T>
std::complex<T>* plan3d<T>::shared_out() {
  if (shared_out_) return shared_out_;
  // The backend is agreed on every rank, so this refusal is too.
  if (ops_->device_memory())
    throw error(errc::unsupported, "toru::fft: shared_out() needs a host backend (fftw), not cufft");
  using cpx = std::complex<T>;
  const std::int64_t elems = alloc_size();
  const auto bytes = checked_bytes(elems, sizeof(cpx), "FFT shared output");
  const bool natural = opts_.output == order::natural;
  // The same on every rank: the strategy, boxes and sizes are agreed.
  const bool rows = strategy_.direct && natural && (!io_ || io_->direct) && fwd_.size() == 1 && bwd_.size() == 1 &&
                    slab_direct_step<T>::can_share(lay_.n[0], lay_.n[2], lay_.r2c);
  // Set only once every rank succeeded: a later call after a failure is collective again.
  cpx* mine = nullptr;
  validate_collectively(comm(), [&] {
    if (!rows) {
      shared_plain_ = aligned_buffer(bytes);
      mine = static_cast<cpx*>(shared_plain_.get());
      return;
    }
    const lent_window lent = lend_window(comm(), bytes);
    shared_busy_ = lent.busy;
    const int P = mpi_size(comm());
    std::vector<cpx*> parts(static_cast<std::size_t>(P));
    for (int r = 0; r < P; ++r) parts[r] = reinterpret_cast<cpx*>(lent.window->buffer(r, 0));
    const int me = mpi_rank(comm());
    for (auto* steps : {&fwd_, &bwd_}) {
      auto* d = dynamic_cast<slab_direct_step<T>*>(steps->front().get());
      if (!d) throw error(errc::internal, "fft: the direct window's steps are not slab_direct_step");
      d->use_shared(parts, me);
    }
    mine = parts[static_cast<std::size_t>(me)];
  });
  shared_out_ = mine;
  return shared_out_;
}

template <class T>
std::string plan3d<T>::strategy_name() const {
  return strategy_.name();
}

template <class T>
work_buffers plan3d<T>::buffers(void* ws) const {
  char* base = ws ? static_cast<char*>(ws) : regions_.base();
  const std::size_t bytes = regions_.bytes;
  // Without a caller workspace the exchange uses its own (null tells it so).
  return {base, base + bytes, ops_->exchange_workspace(ws ? base + 2 * bytes : nullptr)};
}

// The caller's boxes: reshapes between them and the plan's own layout, and the two buffers of
// the plan's layout the transform runs between.
template <class T>
struct plan3d<T>::boxed_io {
  // The input side (real for r2c, complex for c2c) and the complex output side, each way. Their
  // engines only: execute agrees on the caller's buffers once for the whole transform.
  std::unique_ptr<reshape_impl> in_to_plan, in_from_plan, out_from_plan, out_to_plan;
  aligned_buffer a, b;
  // The boxes are the plan's own on every rank and the strategy is the direct window: the
  // transform runs straight between the caller's buffers (no reshape, none of the above), r2c's
  // real planes packed when `packed`.
  bool direct = false;
  bool packed = false;
};

template <class T>
std::int64_t plan3d<T>::alloc_size() const {
  if (!io_) return lay_.alloc;
  // Complex elements; a real in box (r2c) takes half as many.
  const std::int64_t in = lay_.r2c ? (user_in_.extent() + 1) / 2 : user_in_.extent();
  return std::max({in, user_out_.extent(), std::int64_t{1}});
}

// The direct window's step touches nothing of the caller's buffers beyond the plan's own in and
// out boxes (its exchange goes through the node array), so a caller passing exactly those boxes,
// with r2c's real rows packed as in its own arrays or padded as the plan's, needs no reshape: its
// buffers are the step's. The other strategies exchange through the out buffer, which must then
// hold alloc() elements, and read padded real rows: they keep the reshapes. Agreed across ranks,
// since a rank that skipped the reshapes would leave the others in them.
template <class T>
bool plan3d<T>::use_own_boxes(MPI_Comm comm, const box3d& in, const box3d& out, boxed_io& io) {
  const auto same_points = [](const box3d& a, const box3d& b) {
    return a.low == b.low && a.size == b.size && a.order == b.order;
  };
  const box3d& own_in = plan_inbox();
  const std::int64_t row = own_in.size[own_in.order[2]];
  const std::int64_t in_stride = in.row_stride == 0 ? in.size[in.order[2]] : in.row_stride;
  const std::int64_t out_stride = out.row_stride == 0 ? out.size[out.order[2]] : out.row_stride;
  const bool packed = lay_.r2c && in_stride == row && in_stride != own_in.row_stride;
  int mine = strategy_.direct && !ops_->device_memory() && fwd_.size() == 1 && bwd_.size() == 1 &&
             same_points(in, own_in) && same_points(out, plan_outbox()) && (in_stride == own_in.row_stride || packed) &&
             out_stride == plan_outbox().row_stride;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &mine, 1, MPI_INT, MPI_LAND, comm), "MPI_Allreduce");
  if (!mine) return false;
  int any_packed = packed;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &any_packed, 1, MPI_INT, MPI_LOR, comm), "MPI_Allreduce");
  if (any_packed) {
    // Replanning the plane FFTs may fail on one rank: on every rank then.
    validate_collectively(comm, [&] {
      auto* f = dynamic_cast<slab_direct_step<T>*>(fwd_.front().get());
      auto* b = dynamic_cast<slab_direct_step<T>*>(bwd_.front().get());
      if (!f || !b) throw error(errc::internal, "fft: the direct window's steps are not slab_direct_step");
      if (packed) {
        f->use_packed_real();
        b->use_packed_real();
      }
    });
  }
  io.direct = true;
  io.packed = packed;
  user_in_ = own_in;
  user_in_.row_stride = in_stride;
  user_out_ = plan_outbox();
  return true;
}

template <class T>
void plan3d<T>::use_boxes(MPI_Comm comm, const box3d& in, const box3d& out) {
  // The backend is agreed on every rank, so this refusal is too.
  if (ops_->device_memory())
    throw error(errc::unsupported, "toru::fft: caller-defined boxes need a host backend (fftw), not cufft");
  using cpx = std::complex<T>;
  auto io = std::make_unique<boxed_io>();
  if (use_own_boxes(comm, in, out, *io)) {
    io_ = std::move(io);
    return;
  }
  const std::array<std::int64_t, 3> nc{lay_.n[0], lay_.n[1], lay_.nc};
  const reshape_options ro{.algorithm = opts_.algorithm, .comm = opts_.comm};
  if (lay_.r2c) {
    io->in_to_plan = make_reshape<T>(comm, lay_.n, in, plan_inbox(), ro);
    io->in_from_plan = make_reshape<T>(comm, lay_.n, plan_inbox(), in, ro);
  } else {
    io->in_to_plan = make_reshape<cpx>(comm, lay_.n, in, plan_inbox(), ro);
    io->in_from_plan = make_reshape<cpx>(comm, lay_.n, plan_inbox(), in, ro);
  }
  user_in_ = io->in_to_plan->inbox();
  io->out_from_plan = make_reshape<cpx>(comm, nc, plan_outbox(), out, ro);
  io->out_to_plan = make_reshape<cpx>(comm, nc, out, plan_outbox(), ro);
  user_out_ = io->out_from_plan->outbox();
  validate_collectively(comm, [&] {
    const std::size_t bytes = checked_bytes(lay_.alloc, sizeof(cpx), "FFT box buffers");
    io->a = aligned_buffer(bytes);
    io->b = aligned_buffer(bytes);
  });
  io_ = std::move(io);
}

template <class T>
std::array<std::int64_t, 2> plan3d<T>::buffer_elems(bool forward) const {
  // The caller's own boxes (through the reshapes, or straight: use_own_boxes); a real box takes
  // half as many complex elements.
  if (io_) {
    const std::int64_t user_real = lay_.r2c ? (user_in_.extent() + 1) / 2 : user_in_.extent();
    return forward ? std::array{user_real, user_out_.extent()} : std::array{user_out_.extent(), user_real};
  }
  return {(forward ? plan_inbox() : plan_outbox()).extent(), lay_.alloc};
}

template <class T>
void plan3d<T>::check(bool forward, const void* in, const void* out, const void* ws, scale s) const {
  const auto [in_elems, out_elems] = buffer_elems(forward);
  // The shared path writes (reads) every rank's buffer: all ranks take it or none.
  const void* complex_side = forward ? out : in;
  const std::int64_t shared = shared_out_ && complex_side == static_cast<const void*>(shared_out_);
  validate_collectively(*agree_, "a toru::fft 3D forward/backward",
                        {{"direction", forward ? -1 : 1},
                         {"scale", static_cast<std::int64_t>(s)},
                         {forward ? "out is the plan's shared_out() (on every rank or none)"
                                  : "in is the plan's shared_out() (on every rank or none)",
                          shared}},
                        [&] {
                          check_scale(s);
                          ops_->check_buffers_local(in, in_elems, out, out_elems);
                        });
  ops_->check_buffers_collective(comm(), in, in_elems, out, out_elems, ws);
}

template <class T>
void plan3d<T>::perform(bool forward, const void* in, void* out, void* ws, scale s) const {
  if (!io_ || io_->direct) return run(forward, in, out, ws, s);
  // The caller's buffers were agreed on by check(); the plan's own (a, b) need no agreement.
  void* a = io_->a.get();
  void* b = io_->b.get();
  (forward ? io_->in_to_plan : io_->out_to_plan)->move(in, a);
  run(forward, a, b, ws, s);
  (forward ? io_->out_from_plan : io_->in_from_plan)->move(b, out);
}

template <class T>
void plan3d<T>::run(bool forward, const void* in, void* out, void* ws, scale s) const {
  const events::scope ev("fft.execute", 0, forward ? "forward" : "backward");
  const box3d& dst_box = forward ? plan_outbox() : lay_.s0;
  const double N = static_cast<double>(lay_.n[0]) * static_cast<double>(lay_.n[1]) * static_cast<double>(lay_.n[2]);
  const bool direct = io_ && io_->direct;
  const work_buffers wb = buffers(ws);
  const auto& steps = forward ? fwd_ : bwd_;
  const void* src = in;
  for (const auto& st : steps) {
    st->run(src, out, wb);
    src = out;
  }
  if (s != scale::none && !forward && direct && io_->packed) {
    // Packed real rows: their count may be odd, no whole number of complex elements.
    auto* r = static_cast<T*>(out);
    const T f = static_cast<T>(scale_factor(s, N));
    for (std::int64_t i = 0, n = user_in_.count(); i < n; ++i) r[i] *= f;
  } else if (s != scale::none) {
    ops_->scale(static_cast<std::complex<T>*>(out), dst_box.extent(), static_cast<T>(scale_factor(s, N)));
  }
  ops_->finish();  // blocking on every backend: out is complete on return
}

template <class T>
double time_steps(MPI_Comm comm, const std::vector<std::unique_ptr<step<T>>>& steps, const void* in, void* out,
                  const work_buffers& wb, bool warm) {
  const auto run = [&] {
    check_mpi(MPI_Barrier(comm), "MPI_Barrier");
    const auto t0 = std::chrono::steady_clock::now();
    const void* src = in;
    for (const auto& st : steps) {
      st->run(src, out, wb);
      src = out;
    }
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  // Every rank runs as many as the slowest rank's first run asks for (each run is collective).
  const double first = run();
  double slowest = first;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm), "MPI_Allreduce");
  if (slowest >= single_run_seconds) return first;
  const double timed = warm ? first : run();  // cold: the first was the untimed run
  return std::min(timed, run());
}

template double time_steps<float>(MPI_Comm, const std::vector<std::unique_ptr<step<float>>>&, const void*, void*,
                                  const work_buffers&, bool);
template double time_steps<double>(MPI_Comm, const std::vector<std::unique_ptr<step<double>>>&, const void*, void*,
                                   const work_buffers&, bool);

template class plan3d<float>;
template class plan3d<double>;

}  // namespace toru::fft::detail
