#include <algorithm>
#include <climits>

#include <fmt/format.h>

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

}  // namespace toru::fft::detail
