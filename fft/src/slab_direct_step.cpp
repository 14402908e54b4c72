#include "slab_direct_step.hpp"

#include <cstring>

#include <fmt/format.h>

#include "split.hpp"
#include "toru/core/error.hpp"
#include "toru/core/events.hpp"

namespace toru::fft::detail {

template <class T>
void slab_direct_step<T>::planned::run(int kind, const void* in, void* out) const {
  const bool same = api::alignment_of(in) == in_align && api::alignment_of(out) == out_align;
  const auto p = same && aligned ? aligned : unaligned;
  auto* i = const_cast<void*>(in);  // read only, but for c2r (which may destroy its node-array input)
  if (kind == 1)
    api::execute_r2c(p, i, out);
  else if (kind == 2)
    api::execute_c2r(p, i, out);
  else
    api::execute_dft(p, i, out);
}

template <class T>
slab_direct_step<T>::slab_direct_step(int P, int me, std::int64_t n0, std::int64_t n1, std::int64_t n2, bool r2c,
                                      bool forward, bool natural, unsigned flags, const node_array* m,
                                      const node_array* s0, void* scratch_a, void* scratch_b)
    : n0_(n0), n1_(n1), w_(r2c ? n2 / 2 + 1 : n2), forward_(forward), natural_(natural), m_(m), s0_(s0), r2c_(r2c) {
  (void)scratch_b;
  if (!m_ || (natural_ && !s0_)) throw error(errc::internal, "fft: the direct window needs its node arrays");
  const std::int64_t w = w_;
  const std::int64_t a0 = part_start(n1, P, me), A = part_count(n1, P, me);  // i1 rows of M here
  const std::int64_t b0 = part_start(n0, P, me), B = part_count(n0, P, me);  // i0 planes of S0 here
  planes_here_ = B;
  m_offset_ = a0 * n0 * w;
  s0_offset_ = b0 * n1 * w;
  plane_offset_ = b0 * w;
  row_offset_ = a0 * w;
  // The caller's side of the 2D FFTs: complex rows of w, or r2c's real rows padded to 2w reals.
  const std::int64_t row = r2c ? 2 * w : w;
  using iodim = typename api::iodim;
  const int kind2d = r2c ? (forward ? 1 : 2) : 0;
  const int sign = forward ? FFTW_FORWARD : FFTW_BACKWARD;
  auto make = [&](int kind, int rank, const iodim* dims, int hr, const iodim* how, void* in, void* out, unsigned f) {
    if (kind == 1) return api::guru_r2c(rank, dims, hr, how, in, out, f);
    if (kind == 2) return api::guru_c2r(rank, dims, hr, how, in, out, f);
    return api::guru_dft(rank, dims, hr, how, in, out, sign, f);
  };
  auto plan = [&](planned& p, int kind, int rank, const iodim* dims, int hr, const iodim* how, void* in, void* out) {
    p.in_align = api::alignment_of(in);
    p.out_align = api::alignment_of(out);
    p.aligned = make(kind, rank, dims, hr, how, in, out, flags);
    p.unaligned = make(kind, rank, dims, hr, how, in, out, FFTW_ESTIMATE | FFTW_UNALIGNED);
    if (!p.aligned || !p.unaligned)
      throw error(errc::fftw, fmt::format("FFTW could not plan the direct window's {} FFTs ({}x{}x{}{})",
                                          rank == 2 ? "plane" : "axis-0", n0, n1, n2, r2c ? " r2c" : ""));
  };
  // 2D over (i1, i2) of each plane here; M side: i1 stride n0*w, planes w apart (interleaved).
  if (B > 0) {
    const iodim mside[2] = {{n1, 0, 0}, {n2, 1, 1}};
    iodim dims[2] = {mside[0], mside[1]};
    iodim how[1] = {{B, 0, 0}};
    if (forward) {
      dims[0].is = row, dims[0].os = n0 * w;
      how[0].is = n1 * row, how[0].os = w;
      plan(planes_, kind2d, 2, dims, 1, how, scratch_a, m_at(0, plane_offset_));
    } else {
      dims[0].is = n0 * w, dims[0].os = row;
      how[0].is = w, how[0].os = n1 * row;
      plan(planes_, kind2d, 2, dims, 1, how, m_at(0, plane_offset_), scratch_a);
    }
  }
  // 1D along i0 of each M row here, vectorised over the row's w points. M side: i0 stride w,
  // rows n0*w apart. The other side: the caller's M (same strides) or the whole S0 (i0 stride
  // n1*w, rows w apart).
  if (A > 0) {
    const std::int64_t other_i0 = natural ? n1 * w : w, other_row = natural ? w : n0 * w;
    iodim dims[1] = {{n0, w, w}};
    iodim how[2] = {{A, n0 * w, n0 * w}, {w, 1, 1}};
    // M and S0 may be one cached array (equal part sizes); at run time their uses alternate
    // parities, so plan them on different ones (FFTW refuses overlapping out-of-place arrays).
    void* other = natural ? static_cast<void*>(s0_at(s0_ == m_ ? 1 : 0, row_offset_)) : scratch_a;
    if (forward) {
      dims[0].os = other_i0, how[0].os = other_row;
      plan(axis0_, 0, 1, dims, 2, how, m_at(0, m_offset_), other);
    } else {
      dims[0].is = other_i0, how[0].is = other_row;
      plan(axis0_, 0, 1, dims, 2, how, other, m_at(0, m_offset_));
    }
  }
}

template <class T>
slab_direct_step<T>::~slab_direct_step() {
  for (const planned* p : {&planes_, &axis0_})
    for (auto q : {p->aligned, p->unaligned})
      if (q) api::destroy(q);
}

template <class T>
void slab_direct_step<T>::run(const void* src, void* dst, const work_buffers&) const {
  const events::scope ev("fft.transpose", 0, "direct window");
  const int kind2d = r2c_ ? (forward_ ? 1 : 2) : 0;
  const std::size_t s0_bytes = static_cast<std::size_t>(planes_here_ * n1_ * w_) * sizeof(cpx);
  auto fft = [](const planned& p, int kind, const void* in, void* out) {
    if (!p.unaligned) return;  // nothing of this stage on this rank
    const events::scope e("fft.local_fft");
    p.run(kind, in, out);
  };
  auto fence = [](const node_array* a, int parity) {
    const events::scope e("fft.window.fence");
    a->fence(parity);
  };
  // Each node array's use: this rank writes (the FFT's output into the parts), fence, reads; so
  // two parities suffice, as for node_window, even when M and S0 are one array.
  if (forward_) {
    const int p = m_->next_use();
    fft(planes_, kind2d, src, m_at(p, plane_offset_));
    fence(m_, p);
    if (!natural_) {
      fft(axis0_, 0, m_at(p, m_offset_), dst);
      return;
    }
    const int q = s0_->next_use();
    fft(axis0_, 0, m_at(p, m_offset_), s0_at(q, row_offset_));
    fence(s0_, q);
    const events::scope e("fft.window.out");
    std::memcpy(dst, s0_at(q, s0_offset_), s0_bytes);
    return;
  }
  const void* axis0_in = src;
  if (natural_) {
    const int q = s0_->next_use();
    {
      const events::scope e("fft.window.write");
      std::memcpy(static_cast<void*>(s0_at(q, s0_offset_)), src, s0_bytes);
    }
    fence(s0_, q);
    axis0_in = s0_at(q, row_offset_);
  }
  const int p = m_->next_use();
  fft(axis0_, 0, axis0_in, m_at(p, m_offset_));
  fence(m_, p);
  fft(planes_, kind2d, m_at(p, plane_offset_), dst);
}

template class slab_direct_step<float>;
template class slab_direct_step<double>;

}  // namespace toru::fft::detail
