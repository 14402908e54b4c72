// The transposes of the FFT plans: transpose_step (element-wise, chunked, overlapped) and
// slab_vector_step (whole rows, FFTW-MPI's slab layout).
#include <algorithm>
#include <climits>
#include <cstring>

#include <fmt/format.h>

#include "slab_vector_step.hpp"
#include "split.hpp"
#include "steps.hpp"
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

template <class T>
transpose_step<T>::transpose_step(comm_ptr comm, transpose_geometry g, std::unique_ptr<line_op<T>> op, int chunks,
                                  bool overlap, MPI_Datatype type, comm::alltoall_algorithm algorithm)
    : g_(std::move(g)), op_(std::move(op)) {
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
  // This rank's own block is packed straight into the receive buffer: MPI need not copy it.
  sc[g_.me] = 0;
  rc[g_.me] = 0;
  ex_ = std::make_unique<exchange>(std::move(comm), std::move(sc), std::move(sd), std::move(rc), std::move(rd), type,
                                   chunks, overlap, algorithm);  // unpacking alone also overlaps
}

namespace {
// dst[a * dst_stride + j] = src[j * src_stride + a] for j < rows, a < cols, in 8 x 8 tiles so that
// both sides move whole cache lines.
template <class C>
void transpose_tiled(const C* src, std::int64_t src_stride, C* dst, std::int64_t dst_stride, std::int64_t rows,
                     std::int64_t cols) {
  constexpr std::int64_t tile = 8;
  for (std::int64_t jb = 0; jb < rows; jb += tile) {
    const std::int64_t je = std::min(rows, jb + tile);
    for (std::int64_t ab = 0; ab < cols; ab += tile) {
      const std::int64_t ae = std::min(cols, ab + tile);
      for (std::int64_t a = ab; a < ae; ++a) {
        C* d = dst + a * dst_stride;
        for (std::int64_t j = jb; j < je; ++j) d[j] = src[j * src_stride + a];
      }
    }
  }
}
}  // namespace

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
void transpose_step<T>::run(const void* src, void* dst, const work_buffers& ws) const {
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
namespace {
int as_count(std::int64_t v, const char* what) {
  if (v > INT_MAX)
    throw error(errc::unsupported,
                fmt::format("{}: {} elements exceed the 2^31-1 an MPI count can hold; use more ranks", what, v));
  return static_cast<int>(v);
}
}  // namespace

template <class T>
slab_vector_step<T>::slab_vector_step(comm_ptr comm, int me, std::int64_t n0, std::int64_t n1, std::int64_t w,
                                      bool forward, unsigned flags, void* scratch, std::unique_ptr<line_op<T>> op,
                                      MPI_Datatype type, comm::alltoall_algorithm algorithm)
    : n0_(n0), n1_(n1), w_(w), op_(std::move(op)) {
  const int P = comm->size();
  for (int r = 0; r < P; ++r) {
    a_start_.push_back(part_start(n1, P, r));
    a_count_.push_back(part_count(n1, P, r));
    b_start_.push_back(part_start(n0, P, r));
    b_count_.push_back(part_count(n0, P, r));
  }
  B_ = b_count_[me];  // i0 planes of S0 here
  A_ = a_count_[me];  // i1 rows of M here
  // S0 -> M: to d goes [i0 here][i1 of d][w], packed; from s comes [i0 of s][i1 here][w], which
  // lands at its place in M, so nothing is unpacked. M -> S0: the reverse; what goes to d is one
  // contiguous range of M, so nothing is packed.
  std::vector<int> sc(P), sd(P), rc(P), rd(P), sc2(P), sd2(P), rc2(P), rd2(P);
  std::int64_t packed = 0, back = 0;
  for (int r = 0; r < P; ++r) {
    pack_displ_.push_back(packed);
    sd[r] = as_count(packed, "send displacement");
    sc[r] = as_count(B_ * a_count_[r] * w, "send count");
    packed += B_ * a_count_[r] * w;
    rd[r] = as_count(b_start_[r] * A_ * w, "receive displacement");
    rc[r] = as_count(b_count_[r] * A_ * w, "receive count");
    sd2[r] = rd[r];
    sc2[r] = rc[r];
    rd2[r] = as_count(back, "receive displacement");
    rc2[r] = sc[r];
    back += B_ * a_count_[r] * w;
  }
  to_mid_ = std::make_unique<exchange>(comm, std::move(sc), std::move(sd), std::move(rc), std::move(rd), type, 1, false,
                                       algorithm);
  if (to_mid_->algorithm() == comm::alltoall_algorithm::direct) {
    // S0 rows of d's i1 part straight to d; M blocks are contiguous ranges; and back.
    std::vector<strided_block> rows(P), blocks(P);
    for (int r = 0; r < P; ++r) {
      rows[r] = {.offset = a_start_[r] * w, .rows = B_, .row_elems = a_count_[r] * w, .stride = n1 * w};
      blocks[r] = {.offset = b_start_[r] * A_ * w, .rows = 1, .row_elems = b_count_[r] * A_ * w, .stride = 0};
    }
    to_mid_.reset();
    to_mid_w_ = std::make_unique<typed_exchange>(comm, rows, blocks, type);
    to_slab_w_ = std::make_unique<typed_exchange>(std::move(comm), blocks, rows, type);
  } else {
    to_slab_ = std::make_unique<exchange>(std::move(comm), std::move(sc2), std::move(sd2), std::move(rc2),
                                          std::move(rd2), type, 1, false, algorithm);
  }
  const std::int64_t v = A_ * w;
  if (v > 0) {
    const int n = static_cast<int>(n0), vi = as_count(v, "axis-0 FFT vector");
    auto* s = static_cast<typename api::cpx*>(scratch);
    const int sign = forward ? FFTW_FORWARD : FFTW_BACKWARD;
    fft0_ = api::many_dft(1, &n, vi, s, nullptr, vi, 1, s, nullptr, vi, 1, sign, flags);
    fft0_unaligned_ =
        api::many_dft(1, &n, vi, s, nullptr, vi, 1, s, nullptr, vi, 1, sign, FFTW_ESTIMATE | FFTW_UNALIGNED);
    if (!fft0_ || !fft0_unaligned_)
      throw error(errc::fftw, fmt::format("FFTW could not plan {} strided transforms of size {}", v, n0));
  }
}

template <class T>
slab_vector_step<T>::~slab_vector_step() {
  if (fft0_) api::destroy(fft0_);
  if (fft0_unaligned_) api::destroy(fft0_unaligned_);
}

template <class T>
std::size_t slab_vector_step<T>::workspace_size() const {
  return to_mid_ ? std::max(to_mid_->workspace_size(), to_slab_->workspace_size()) : 0;
}

template <class T>
void slab_vector_step<T>::run(const void* src_v, void* dst_v, const work_buffers& ws) const {
  const auto* src = static_cast<const cpx*>(src_v);
  auto* dst = static_cast<cpx*>(dst_v);
  auto* send = static_cast<cpx*>(ws.send);
  auto* recv = static_cast<cpx*>(ws.recv);
  const int P = static_cast<int>(a_count_.size());
  const std::int64_t row = n1_ * w_;  // one i0 plane of S0
  auto fft0 = [&](cpx* m) {
    if (fft0_) api::execute_dft(api::alignment_of(m) == 0 ? fft0_ : fft0_unaligned_, m, m);
  };
  if (to_mid_w_) {
    to_mid_w_->execute(src, recv);
    fft0(recv);
    to_slab_w_->execute(recv, dst);
    if (op_) op_->apply(dst, 0, B_);
    return;
  }
  // Runs of a_count * w contiguous points: a copy at memory speed, no element transpose.
  for (int d = 0; d < P; ++d) {
    const std::int64_t run = a_count_[d] * w_;
    if (run == 0) continue;
    for (std::int64_t j = 0; j < B_; ++j)
      std::memcpy(static_cast<void*>(send + pack_displ_[d] + j * run), src + j * row + a_start_[d] * w_,
                  static_cast<std::size_t>(run) * sizeof(cpx));
  }
  to_mid_->execute(send, dst, ws.comm, [](int, int) {});
  fft0(dst);
  to_slab_->execute(dst, recv, ws.comm, [&](int, int) {
    std::int64_t off = 0;
    for (int s = 0; s < P; ++s) {
      const std::int64_t run = a_count_[s] * w_;
      for (std::int64_t j = 0; j < B_ && run > 0; ++j)
        std::memcpy(static_cast<void*>(dst + j * row + a_start_[s] * w_), recv + off + j * run,
                    static_cast<std::size_t>(run) * sizeof(cpx));
      off += B_ * run;
    }
    if (op_) op_->apply(dst, 0, B_);
  });
}

template class slab_vector_step<float>;
template class slab_vector_step<double>;

}  // namespace toru::fft::detail
