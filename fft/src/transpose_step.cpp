// SPDX-License-Identifier: BSD-3-Clause
// The transposes of the FFT plans: transpose_step (element-wise, chunked, overlapped) and
// slab_vector_step (whole rows, FFTW-MPI's slab layout).
#include <algorithm>
#include <climits>
#include <cstring>

#include <fmt/format.h>

#include "slab_vector_step.hpp"
#include "split.hpp"
#include "steps.hpp"
#include "tiled_transpose.hpp"
#include "toru/core/error.hpp"

namespace toru::fft::detail {

namespace {
int to_int(std::int64_t v, const char* what) {
  if (v > INT_MAX)
    throw error(errc::unsupported,
                fmt::format("{}: {} elements exceed the 2^31-1 an MPI count can hold; use more ranks", what, v));
  return static_cast<int>(v);
}
}  // namespace

transpose_geometry balanced_geometry(std::int64_t T, std::int64_t na, std::int64_t nb, int q, int me, bool src_t_outer,
                                     bool dst_t_outer, std::int64_t group) {
  transpose_geometry g;
  g.T = T;
  g.na = na;
  g.nb = nb;
  g.me = me;
  g.src_t_outer = src_t_outer;
  g.dst_t_outer = dst_t_outer;
  g.group = group;
  for (int r = 0; r < q; ++r) {
    g.a_start.push_back(part_start(na, q, r));
    g.a_count.push_back(part_count(na, q, r));
    g.b_start.push_back(part_start(nb, q, r));
    g.b_count.push_back(part_count(nb, q, r));
  }
  return g;
}

template <class T>
transpose_step<T>::transpose_step(comm_ptr comm, transpose_geometry g, std::unique_ptr<line_op<T>> op, int chunks,
                                  bool overlap, MPI_Datatype type, comm::alltoall_algorithm algorithm,
                                  const node_window* window)
    : g_(std::move(g)), window_(window), chunks_(std::max(1, chunks)), op_(std::move(op)) {
  const int q = static_cast<int>(g_.a_count.size());
  std::vector<int> sc(q), sd(q), rc(q), rd(q);
  sdispl_.resize(q);
  rdispl_.resize(q);
  const std::int64_t B = g_.b_count[g_.me], A = g_.a_count[g_.me];
  for (int d = 0; d < q; ++d) {
    sdispl_[d] = send_total_;
    sd[d] = to_int(send_total_, "send displacement");
    sc[d] = to_int(g_.T * g_.a_count[d] * B, "send count");
    send_total_ += g_.T * g_.a_count[d] * B;
    rdispl_[d] = recv_total_;
    rd[d] = to_int(recv_total_, "receive displacement");
    rc[d] = to_int(g_.T * A * g_.b_count[d], "receive count");
    recv_total_ += g_.T * A * g_.b_count[d];
  }
  units_ = g_.T * A / g_.group;
  if (window_) {
    (void)type;
    (void)algorithm;
    (void)overlap;
    if (static_cast<std::size_t>(recv_total_) * sizeof(cpx) > window_->bytes())
      throw error(errc::internal, "fft: node window smaller than the transpose's destination");
    return;
  }
  // This rank's own block is packed straight into the receive buffer: MPI need not copy it.
  sc[g_.me] = 0;
  rc[g_.me] = 0;
  ex_ = std::make_unique<exchange>(std::move(comm), std::move(sc), std::move(sd), std::move(rc), std::move(rd), type,
                                   chunks, overlap, algorithm);  // unpacking alone also overlaps
}

template <class T>
void transpose_step<T>::pack(const cpx* src, cpx* send, cpx* recv) const {
  const std::int64_t B = g_.b_count[g_.me], T_ = g_.T, na = g_.na;
  const int q = static_cast<int>(g_.a_count.size());
  // Source row (t, j) starts at (src_t_outer ? t*B + j : j*T + t) * na; destination line (t, a)
  // of block d is (dst_t_outer ? t*A + a : a*T + t), holding B elements.
  const std::int64_t src_j_stride = (g_.src_t_outer ? 1 : T_) * na;
  const std::int64_t src_t_stride = (g_.src_t_outer ? B : 1) * na;
  for (int d = 0; d < q; ++d) {
    const std::int64_t A = g_.a_count[d], a0 = g_.a_start[d];
    cpx* out = d == g_.me ? recv + rdispl_[d] : send + sdispl_[d];
    const std::int64_t line_a_stride = (g_.dst_t_outer ? 1 : T_) * B;
    const std::int64_t line_t_stride = (g_.dst_t_outer ? A : 1) * B;
    for (std::int64_t t = 0; t < T_; ++t)
      transpose_tiled(src + t * src_t_stride + a0, src_j_stride, out + t * line_t_stride, line_a_stride, B, A);
  }
}

template <class T>
void transpose_step<T>::unpack(const cpx* recv, cpx* dst, std::int64_t u0, std::int64_t u1) const {
  const int q = static_cast<int>(g_.b_count.size());
  const std::int64_t l0 = u0 * g_.group, l1 = u1 * g_.group;
  for (int s = 0; s < q; ++s) {
    const std::int64_t B = g_.b_count[s], b0 = g_.b_start[s];
    if (B == 0) continue;
    const cpx* in = recv + rdispl_[s];
    for (std::int64_t l = l0; l < l1; ++l)
      std::memcpy(static_cast<void*>(dst + l * g_.nb + b0), in + l * B, static_cast<std::size_t>(B) * sizeof(cpx));
  }
}

template <class T>
std::string transpose_step<T>::describe() const {
  return window_ ? fmt::format("node window x{}", chunks_) : ex_->describe();
}

template <class T>
void transpose_step<T>::run_window(const cpx* src, cpx* dst) const {
  const int parity = window_->next_use();
  const int q = static_cast<int>(g_.a_count.size());
  const std::int64_t B = g_.b_count[g_.me], T_ = g_.T, na = g_.na, nb = g_.nb, b0 = g_.b_start[g_.me];
  const std::int64_t src_j_stride = (g_.src_t_outer ? 1 : T_) * na;
  const std::int64_t src_t_stride = (g_.src_t_outer ? B : 1) * na;
  // Destination d's buffer holds its next-stage rows (nb elements each) in its memory order; this
  // rank fills columns [b0, b0 + B) of every row. Start with the next rank so that ranks write to
  // different peers at a time.
  for (int k = 0; k < q && B > 0; ++k) {
    const int d = (g_.me + 1 + k) % q;
    const std::int64_t A = g_.a_count[d], a0 = g_.a_start[d];
    if (A == 0) continue;
    auto* out = reinterpret_cast<cpx*>(window_->buffer(d, parity)) + b0;
    const std::int64_t line_a_stride = (g_.dst_t_outer ? 1 : T_) * nb;
    const std::int64_t line_t_stride = (g_.dst_t_outer ? A : 1) * nb;
    const events::scope ev("fft.window.write", static_cast<std::uint64_t>(T_ * A * B) * sizeof(cpx));
    for (std::int64_t t = 0; t < T_; ++t)
      transpose_tiled(src + t * src_t_stride + a0, src_j_stride, out + t * line_t_stride, line_a_stride, B, A);
  }
  {
    const events::scope ev("fft.window.fence");
    window_->fence();
  }
  // The own buffer is exactly the destination stage. With a line op, its FFTs read the buffer and
  // write dst (no copy: the element moved once, in the write above); without one, it is copied out.
  // Blocks of units keep each FFT's input in cache.
  const events::scope ev("fft.window.out");
  auto* mine = reinterpret_cast<cpx*>(window_->buffer(g_.me, parity));
  const std::int64_t unit = g_.group * nb;
  for (int c = 0; c < chunks_; ++c) {
    const std::int64_t u0 = c * units_ / chunks_, u1 = (c + 1) * units_ / chunks_;
    if (u1 <= u0) continue;
    if (op_)
      op_->apply_from(mine, dst, u0, u1, unit);
    else
      std::memcpy(static_cast<void*>(dst + u0 * unit), mine + u0 * unit,
                  static_cast<std::size_t>((u1 - u0) * unit) * sizeof(cpx));
  }
}

template <class T>
void transpose_step<T>::run(const void* src, void* dst, const work_buffers& ws) const {
  const events::scope ev("fft.transpose");
  if (window_) {
    run_window(static_cast<const cpx*>(src), static_cast<cpx*>(dst));
    return;
  }
  auto* send = static_cast<cpx*>(ws.send);
  auto* recv = static_cast<cpx*>(ws.recv);
  auto* out = static_cast<cpx*>(dst);
  pack(static_cast<const cpx*>(src), send, recv);
  ex_->execute(send, recv, ws.comm, [&](int c, int nchunks) {
    // Units [c*U/C, (c+1)*U/C) are complete once chunk c arrived from every source: a source's
    // block holds U*group*B_s elements and floor((c+1)*U*group*B_s/C) >= floor((c+1)*U/C)*group*B_s.
    const std::int64_t u0 = c * units_ / nchunks, u1 = (c + 1) * units_ / nchunks;
    if (u1 <= u0) return;
    unpack(recv, out, u0, u1);
    if (op_) op_->apply(out, u0, u1);
  });
}

template class transpose_step<float>;
template class transpose_step<double>;

// slab_vector_step (slab_vector_step.hpp) lives here too: it is the other kind of transpose.

template <class T>
slab_vector_step<T>::slab_vector_step(comm_ptr comm, int me, std::int64_t n0, std::int64_t n1, std::int64_t w,
                                      bool forward, bool natural, unsigned flags, void* scratch_a, void* scratch_b,
                                      std::unique_ptr<line_op<T>> op, MPI_Datatype type,
                                      comm::alltoall_algorithm algorithm, const node_window* window)
    : n0_(n0), n1_(n1), w_(w), forward_(forward), natural_(natural), op_(std::move(op)), window_(window) {
  const int P = comm->size();
  for (int r = 0; r < P; ++r) {
    a_start_.push_back(part_start(n1, P, r));
    a_count_.push_back(part_count(n1, P, r));
    b_start_.push_back(part_start(n0, P, r));
    b_count_.push_back(part_count(n0, P, r));
  }
  me_ = me;
  B_ = b_count_[me];  // i0 planes of S0 here
  A_ = a_count_[me];  // i1 rows of M here
  // S0 -> M moves, between this rank and r, the runs (i0 of the S0 side, i1 of the M side) of w
  // points; M -> S0 the same runs back. Packed, the S0 side's block is [i1][i0][w] and the M
  // side's too, so the counts are equal both ways.
  std::vector<int> s0_count(P), s0_displ(P), m_count(P), m_displ(P);
  std::int64_t s0_total = 0, m_total = 0;
  for (int r = 0; r < P; ++r) {
    s0_displ_.push_back(s0_total);
    s0_displ[r] = to_int(s0_total, "send displacement");
    s0_count[r] = to_int(a_count_[r] * B_ * w, "send count");
    s0_total += a_count_[r] * B_ * w;
    m_displ_.push_back(m_total);
    m_displ[r] = to_int(m_total, "receive displacement");
    m_count[r] = to_int(A_ * b_count_[r] * w, "receive count");
    m_total += A_ * b_count_[r] * w;
  }
  if (window_) {
    if (static_cast<std::size_t>(window_elems(P, me, n0, n1, w)) * sizeof(cpx) > window_->bytes())
      throw error(errc::internal, "fft: node window smaller than the slab's M or S0 stage");
  } else {
    build_exchanges(std::move(comm), s0_count, s0_displ, m_count, m_displ, type, algorithm);
  }
  plan_fft0(flags, scratch_a, scratch_b);
}

template <class T>
std::int64_t slab_vector_step<T>::window_elems(int P, int me, std::int64_t n0, std::int64_t n1, std::int64_t w) {
  return std::max(part_count(n1, P, me) * n0 * w, part_count(n0, P, me) * n1 * w);
}

template <class T>
void slab_vector_step<T>::build_exchanges(comm_ptr comm, const std::vector<int>& s0_count,
                                          const std::vector<int>& s0_displ, const std::vector<int>& m_count,
                                          const std::vector<int>& m_displ, MPI_Datatype type,
                                          comm::alltoall_algorithm algorithm) {
  const int P = comm->size();
  const std::int64_t n0 = n0_, n1 = n1_, w = w_;
  // Both exchanges are built (collectively) on every rank whatever the order needs; toru::comm
  // resolves the algorithm once, the same everywhere.
  to_mid_ = std::make_unique<exchange>(comm, s0_count, s0_displ, m_count, m_displ, type, 1, false, algorithm);
  if (to_mid_->algorithm() == comm::alltoall_algorithm::direct) {
    // S0 side: for each i0 here, the run of r's i1 part (one row piece of a_count * w points).
    // M side: for each i0 of r, for each i1 here, w points. Same order on both sides.
    std::vector<strided_block> s0_side(P), m_side(P);
    for (int r = 0; r < P; ++r) {
      s0_side[r] = {.offset = a_start_[r] * w, .outer = B_, .outer_stride = n1 * w, .run = a_count_[r] * w};
      m_side[r] = {.offset = b_start_[r] * w,
                   .outer = b_count_[r],
                   .outer_stride = w,
                   .inner = A_,
                   .inner_stride = n0 * w,
                   .run = w};
    }
    to_mid_.reset();
    to_mid_w_ = std::make_unique<typed_exchange>(comm, s0_side, m_side, type);
    to_slab_w_ = std::make_unique<typed_exchange>(std::move(comm), m_side, s0_side, type);
  } else {
    to_slab_ =
        std::make_unique<exchange>(std::move(comm), m_count, m_displ, s0_count, s0_displ, type, 1, false, algorithm);
  }
}

template <class T>
void slab_vector_step<T>::plan_fft0(unsigned flags, void* scratch_a, void* scratch_b) {
  if (A_ == 0) return;
  auto* a = static_cast<cpx*>(scratch_a);
  auto* b = static_cast<cpx*>(scratch_b);
  const int sign = forward_ ? FFTW_FORWARD : FFTW_BACKWARD;
  in_place_ = std::make_unique<column_fft<T>>(n0_, w_, A_, sign, true, flags, a, a);
  if (!natural_) out_of_place_ = std::make_unique<column_fft<T>>(n0_, w_, A_, sign, false, flags, a, b);
}

template <class T>
slab_vector_step<T>::~slab_vector_step() = default;

template <class T>
std::size_t slab_vector_step<T>::workspace_size() const {
  return to_mid_ ? std::max(to_mid_->workspace_size(), to_slab_->workspace_size()) : 0;
}

template <class T>
template <class F>
void slab_vector_step<T>::for_s0_runs(F&& f) const {
  // Packed block of rank r: [i1 of r][i0 here][w], one run of w points per (i1, i0).
  for (int r = 0; r < static_cast<int>(a_count_.size()); ++r)
    for (std::int64_t i1 = 0; i1 < a_count_[r]; ++i1)
      for (std::int64_t i0 = 0; i0 < B_; ++i0)
        f((i0 * n1_ + a_start_[r] + i1) * w_, s0_displ_[r] + (i1 * B_ + i0) * w_, w_);
}

template <class T>
template <class F>
void slab_vector_step<T>::for_m_runs(F&& f) const {
  // Packed block of rank r: [i1 here][i0 of r][w], one run of b_count * w points per i1.
  for (int r = 0; r < static_cast<int>(b_count_.size()); ++r)
    for (std::int64_t i1 = 0; i1 < A_ && b_count_[r] > 0; ++i1)
      f((i1 * n0_ + b_start_[r]) * w_, m_displ_[r] + i1 * b_count_[r] * w_, b_count_[r] * w_);
}

template <class T>
void slab_vector_step<T>::to_mid(const cpx* s0, cpx* m, const work_buffers& ws) const {
  if (to_mid_w_) {
    to_mid_w_->execute(s0, m);
    return;
  }
  auto* send = static_cast<cpx*>(ws.send);
  auto* recv = static_cast<cpx*>(ws.recv);
  for_s0_runs([&](std::int64_t at, std::int64_t packed, std::int64_t n) { copy_run(send + packed, s0 + at, n); });
  to_mid_->execute(send, recv, ws.comm, [](int, int) {});
  for_m_runs([&](std::int64_t at, std::int64_t packed, std::int64_t n) { copy_run(m + at, recv + packed, n); });
}

template <class T>
void slab_vector_step<T>::to_slab(const cpx* m, cpx* s0, const work_buffers& ws) const {
  if (to_slab_w_) {
    to_slab_w_->execute(m, s0);
    return;
  }
  auto* send = static_cast<cpx*>(ws.send);
  auto* recv = static_cast<cpx*>(ws.recv);
  for_m_runs([&](std::int64_t at, std::int64_t packed, std::int64_t n) { copy_run(send + packed, m + at, n); });
  to_slab_->execute(send, recv, ws.comm, [](int, int) {});
  for_s0_runs([&](std::int64_t at, std::int64_t packed, std::int64_t n) { copy_run(s0 + at, recv + packed, n); });
}

template <class T>
auto slab_vector_step<T>::to_mid_window(const cpx* s0) const -> const cpx* {
  const int parity = window_->next_use();
  const int P = static_cast<int>(a_count_.size());
  // S0 run (i0 here, i1 of r) goes to r's M at [i1 - a_start(r)][b_start(me) + i0][w].
  for (int k = 0; k < P; ++k) {
    const events::scope write("fft.window.write");
    const int r = (me_ + 1 + k) % P;
    auto* m = reinterpret_cast<cpx*>(window_->buffer(r, parity));
    for (std::int64_t i1 = 0; i1 < a_count_[r]; ++i1)
      for (std::int64_t i0 = 0; i0 < B_; ++i0)
        copy_run(m + (i1 * n0_ + b_start_[me_] + i0) * w_, s0 + (i0 * n1_ + a_start_[r] + i1) * w_, w_);
  }
  {
    const events::scope ev("fft.window.fence");
    window_->fence();
  }
  return reinterpret_cast<const cpx*>(window_->buffer(me_, parity));
}

template <class T>
void slab_vector_step<T>::to_slab_window(const cpx* m, cpx* s0) const {
  const int parity = window_->next_use();
  const int P = static_cast<int>(b_count_.size());
  // M run (i1 here, i0 of r) goes to r's S0 at [i0 - b_start(r)][a_start(me) + i1][w].
  for (int k = 0; k < P; ++k) {
    const events::scope write("fft.window.write");
    const int r = (me_ + 1 + k) % P;
    auto* out = reinterpret_cast<cpx*>(window_->buffer(r, parity));
    for (std::int64_t i0 = 0; i0 < b_count_[r]; ++i0)
      for (std::int64_t i1 = 0; i1 < A_; ++i1)
        copy_run(out + (i0 * n1_ + a_start_[me_] + i1) * w_, m + (i1 * n0_ + b_start_[r] + i0) * w_, w_);
  }
  {
    const events::scope ev("fft.window.fence");
    window_->fence();
  }
  const events::scope out_ev("fft.window.out");
  std::memcpy(static_cast<void*>(s0), window_->buffer(me_, parity),
              static_cast<std::size_t>(B_ * n1_ * w_) * sizeof(cpx));
}

template <class T>
void slab_vector_step<T>::fft0(const cpx* in, cpx* out) const {
  const events::scope ev(in == out ? "fft.axis0" : forward_ ? "fft.axis0.fwd_oop" : "fft.axis0.bwd_oop");
  if (A_ == 0) return;
  (in == out ? in_place_ : out_of_place_)->execute(in, out);
}

template <class T>
void slab_vector_step<T>::run(const void* src_v, void* dst_v, const work_buffers& ws) const {
  const events::scope ev("fft.transpose", 0, "slab");
  const auto* src = static_cast<const cpx*>(src_v);
  auto* dst = static_cast<cpx*>(dst_v);
  if (window_) {
    // M arrives in this rank's window buffer (fenced); the axis-0 FFT runs there in place or out
    // of place into dst. Backward transposed: M is the input, transformed into the private
    // receive region, then sent through the window.
    if (forward_) {
      const cpx* m = to_mid_window(src);
      auto* mm = const_cast<cpx*>(m);
      if (natural_) {
        fft0(mm, mm);
        to_slab_window(mm, dst);
      } else {
        fft0(mm, dst);
      }
      return;
    }
    const cpx* m = nullptr;
    if (natural_) {
      auto* mm = const_cast<cpx*>(to_mid_window(src));
      fft0(mm, mm);
      m = mm;
    } else {
      auto* mm = static_cast<cpx*>(ws.recv);
      fft0(src, mm);
      m = mm;
    }
    to_slab_window(m, dst);
    if (op_) op_->apply(dst, 0, B_);
    return;
  }
  // Where M lives: the typed exchanges cannot send from and receive into one buffer, so M takes
  // the receive region; the packed path uses both regions itself, so M takes dst.
  cpx* m = to_mid_w_ ? static_cast<cpx*>(ws.recv) : dst;
  if (forward_) {
    to_mid(src, m, ws);
    if (natural_) {
      fft0(m, m);
      to_slab(m, dst, ws);
    } else {
      fft0(m, dst);
    }
    return;
  }
  if (natural_) {
    to_mid(src, m, ws);
    fft0(m, m);
  } else {
    fft0(src, m);
  }
  to_slab(m, dst, ws);
  if (op_) op_->apply(dst, 0, B_);
}

template class slab_vector_step<float>;
template class slab_vector_step<double>;

}  // namespace toru::fft::detail
