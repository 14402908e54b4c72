// SPDX-License-Identifier: BSD-3-Clause
#include "slab_direct_step.hpp"

#include <cstring>
#include <type_traits>

#include <fmt/format.h>

#include "split.hpp"
#include "toru/core/error.hpp"
#include "toru/core/events.hpp"

namespace toru::fft::detail {

template <class T>
slab_direct_step<T>::slab_direct_step(int P, int me, std::int64_t n0, std::int64_t n1, std::int64_t n2, bool r2c,
                                      bool forward, bool natural, unsigned flags, const node_array* m, void* scratch_a,
                                      void* scratch_b)
    : n0_(n0),
      n1_(n1),
      n2_(n2),
      w_(r2c ? n2 / 2 + 1 : n2),
      r2c_(r2c),
      flags_(flags),
      scratch_a_(scratch_a),
      forward_(forward),
      natural_(natural),
      m_(m) {
  if (!m_) throw error(errc::internal, "fft: the direct window needs its node array");
  const std::int64_t w = w_;
  const std::int64_t a0 = part_start(n1, P, me), A = part_count(n1, P, me);  // i1 rows of M here
  const std::int64_t b0 = part_start(n0, P, me), B = part_count(n0, P, me);  // i0 planes of S0 here
  planes_here_ = B;
  a0_ = a0;
  rows_here_ = A;
  m_offset_ = a0 * n0 * w;
  plane_offset_ = b0 * w;
  plane_bytes_ = n1 * w * static_cast<std::int64_t>(sizeof(cpx));  // r2c: 2w padded reals per row
  real_plane_bytes_ = plane_bytes_;
  plane_ = static_cast<cpx*>(api::malloc(static_cast<std::size_t>(plane_bytes_)));
  if (!plane_) throw error(errc::out_of_memory, fmt::format("fft: {} bytes of plane scratch", plane_bytes_));
  // One plane between the caller's rows (complex rows of w, or r2c's real rows padded to 2w
  // reals: local_fft's unit) and the contiguous scratch [n1][w].
  const int sign = forward ? FFTW_FORWARD : FFTW_BACKWARD;
  if (B > 0) {
    const fft_kind kind =
        r2c ? (forward ? fft_kind::r2c : fft_kind::c2r) : (forward ? fft_kind::c2c_forward : fft_kind::c2c_backward);
    const std::vector<int> dims{static_cast<int>(n1), static_cast<int>(n2)};  // sizes checked by plan3d
    if (forward)
      planes_ =
          std::make_unique<local_fft<T>>(kind, dims, std::vector<std::int64_t>{1}, false, flags, scratch_a, plane_);
    else
      planes_ =
          std::make_unique<local_fft<T>>(kind, dims, std::vector<std::int64_t>{1}, false, flags, plane_, scratch_a);
  }
  // Along i0 of each M row here: w transforms of stride w per row, rows n0*w apart.
  if (A > 0) {
    cpx* mine = m_at(0, m_offset_);
    auto* a = static_cast<cpx*>(scratch_a);
    if (natural)
      axis0_ = std::make_unique<column_fft<T>>(n0, w, A, sign, true, flags, mine, mine);
    else if (forward)
      axis0_ = std::make_unique<column_fft<T>>(n0, w, A, sign, false, flags, mine, a);
    else
      axis0_ = std::make_unique<column_fft<T>>(n0, w, A, sign, false, flags, a, mine);
  }
  (void)scratch_b;
}

template <class T>
void slab_direct_step<T>::use_packed_real() {
  if (!r2c_) return;
  real_plane_bytes_ = n1_ * n2_ * static_cast<std::int64_t>(sizeof(T));
  if (!planes_) return;
  const std::vector<int> dims{static_cast<int>(n1_), static_cast<int>(n2_)};
  const std::vector<std::int64_t> one{1};
  if (forward_)
    planes_ = std::make_unique<local_fft<T>>(fft_kind::r2c, dims, one, false, flags_, scratch_a_, plane_, true);
  else
    planes_ = std::make_unique<local_fft<T>>(fft_kind::c2r, dims, one, false, flags_, plane_, scratch_a_, true);
}

template <class T>
bool slab_direct_step<T>::can_share(std::int64_t n0, std::int64_t n2, bool r2c) {
  return column_fft<T>::tiles(n0, r2c ? n2 / 2 + 1 : n2);
}

template <class T>
void slab_direct_step<T>::use_shared(const std::vector<cpx*>& parts, int me) {
  if (!natural_ || !can_share(n0_, n2_, r2c_))
    throw error(errc::internal, "fft: the direct window shares the caller's array in natural order, tiled, only");
  const auto P = static_cast<int>(parts.size());
  shared_ = parts[static_cast<std::size_t>(me)];
  shared_rows_.assign(static_cast<std::size_t>(n0_), nullptr);
  for (int r = 0; r < P; ++r) {
    const std::int64_t b0 = part_start(n0_, P, r), B = part_count(n0_, P, r);
    for (std::int64_t i = 0; i < B; ++i)
      shared_rows_[static_cast<std::size_t>(b0 + i)] = parts[r] + (i * n1_ + a0_) * w_;
  }
  // Allocated now, in the plan's collective call, not by one rank in a transform.
  if (forward_ && real_plane_bytes_ != plane_bytes_ && planes_here_ > 0) {
    const auto bytes = static_cast<std::size_t>(planes_here_ * real_plane_bytes_);
    packed_copy_.reset(static_cast<char*>(api::malloc(bytes)));
    if (!packed_copy_) throw error(errc::out_of_memory, fmt::format("fft: {} bytes for in-place packed r2c", bytes));
  }
  if (rows_here_ == 0) return;
  // The columns run in tiles between the rows and M (in place in the rows forward), the tile timed
  // on a sample of this rank's own rows (their contents are the caller's to set yet), zeroed.
  cpx* mine = m_at(0, m_offset_);
  const std::int64_t sample = (flags_ & FFTW_ESTIMATE) ? 0 : column_fft<T>::sample_blocks(n0_, w_, rows_here_);
  for (std::int64_t b = 0; b < sample; ++b)
    for (std::int64_t i = 0; i < n0_; ++i)
      std::memset(static_cast<void*>(shared_rows_[static_cast<std::size_t>(i)] + b * w_), 0,
                  static_cast<std::size_t>(w_) * sizeof(cpx));
  if (!forward_) std::memset(static_cast<void*>(mine), 0, static_cast<std::size_t>(sample * n0_ * w_) * sizeof(cpx));
  axis0_shared_ = column_fft<T>::for_rows(n0_, w_, rows_here_, forward_ ? FFTW_FORWARD : FFTW_BACKWARD, flags_, mine,
                                          [&](const column_fft<T>& c, std::int64_t blocks) {
                                            if (forward_)
                                              c.execute_in_rows(shared_rows_.data(), blocks);
                                            else
                                              c.execute_from_rows(shared_rows_.data(), mine, blocks);
                                          });
}

template <class T>
slab_direct_step<T>::~slab_direct_step() {
  api::free(plane_);
}

template <class T>
void slab_direct_step<T>::scatter_plane(const cpx* plane, std::int64_t i0, int parity) const {
  cpx* m = m_at(parity, plane_offset_ + i0 * w_);
  for (std::int64_t i1 = 0; i1 < n1_; ++i1) copy_run(m + i1 * n0_ * w_, plane + i1 * w_, w_);
}

template <class T>
void slab_direct_step<T>::gather_plane(cpx* plane, std::int64_t i0, int parity) const {
  const cpx* m = m_at(parity, plane_offset_ + i0 * w_);
  for (std::int64_t i1 = 0; i1 < n1_; ++i1) copy_run(plane + i1 * w_, m + i1 * n0_ * w_, w_);
}

template <class T>
void slab_direct_step<T>::run(const void* src, void* dst, const work_buffers&) const {
  const events::scope ev("fft.transpose", 0, "direct window");
  auto fft = [this](const void* in, void* out) {
    const events::scope e("fft.local_fft");
    planes_->execute(1, const_cast<void*>(in), out);  // read only (c2r: the plane scratch)
  };
  auto fft0 = [this](const void* in, void* out) {
    if (!axis0_) return;
    const events::scope e("fft.local_fft");
    const events::scope e0(in == out ? "fft.axis0" : forward_ ? "fft.axis0.fwd_oop" : "fft.axis0.bwd_oop");
    axis0_->execute(static_cast<const cpx*>(in), static_cast<cpx*>(out));
  };
  auto fence = [](const node_array* a, int parity) {
    const events::scope e("fft.window.fence");
    a->fence(parity);
  };
  // Plane i0 of the caller's buffer: complex planes are plane_bytes_ apart, real ones (r2c's
  // forward input, backward output) real_plane_bytes_.
  auto plane = [&](auto* base, std::int64_t i0, bool real = false) {
    using byte = std::conditional_t<std::is_const_v<std::remove_pointer_t<decltype(base)>>, const char, char>;
    return reinterpret_cast<byte*>(base) + i0 * (real ? real_plane_bytes_ : plane_bytes_);
  };
  // Each use of the node array: this rank writes, fence(s), reads; so two parities suffice, as for
  // node_window: a rank writes parity p again (two uses later) only after every rank passed the
  // next use's fence, which each enters after its reads of this one. Natural order fences twice
  // per use: once before the axis-0 FFTs read the rows the others wrote, once before the others
  // read the rows those FFTs wrote.
  const int p = m_->next_use();
  if (forward_ && natural_ && shared_ && dst == static_cast<const void*>(shared_)) {
    // FFTW's threaded plan, over the ranks: the plane FFTs write straight into this rank's part of
    // the caller's array, then each rank's axis-0 FFTs run in place down its i1 rows of the whole
    // array. M is not touched. The first fence also means every rank is done with its buffer from
    // before this call, the second that every rank's buffer is complete.
    // In place (each rank's own choice; the path must not depend on it): the plane plan is out of
    // place, so through the plane scratch. Packed real planes are shorter than the complex ones
    // they become, so the output would overrun input not yet read: those are copied first.
    const void* in = src;
    if (src == dst && real_plane_bytes_ != plane_bytes_ && planes_here_ > 0) {
      std::memcpy(packed_copy_.get(), src, static_cast<std::size_t>(planes_here_ * real_plane_bytes_));
      in = packed_copy_.get();
    }
    for (std::int64_t i0 = 0; i0 < planes_here_; ++i0) {
      void* out = plane(dst, i0);
      if (out == static_cast<const void*>(plane(in, i0, true))) {
        fft(out, plane_);
        std::memcpy(out, plane_, static_cast<std::size_t>(plane_bytes_));
      } else {
        fft(plane(in, i0, true), out);
      }
    }
    fence(m_, p);
    if (axis0_shared_) {
      const events::scope e0("fft.axis0.in_rows");
      axis0_shared_->execute_in_rows(shared_rows_.data());
    }
    fence(m_, p);
    return;
  }
  if (forward_) {
    for (std::int64_t i0 = 0; i0 < planes_here_; ++i0) {
      fft(plane(src, i0, true), plane_);
      const events::scope e("fft.window.write");
      scatter_plane(plane_, i0, p);
    }
    fence(m_, p);
    if (!natural_) {
      fft0(m_at(p, m_offset_), dst);
      return;
    }
    fft0(m_at(p, m_offset_), m_at(p, m_offset_));
    fence(m_, p);
    const events::scope e("fft.window.out");
    for (std::int64_t i0 = 0; i0 < planes_here_; ++i0) gather_plane(reinterpret_cast<cpx*>(plane(dst, i0)), i0, p);
    return;
  }
  if (natural_ && shared_ && src == static_cast<const void*>(shared_)) {
    // The first fence: every rank's caller has finished writing its buffer (the input), so the
    // FFTs may read its rows.
    fence(m_, p);
    if (axis0_shared_) {
      const events::scope e0("fft.axis0.from_rows");
      axis0_shared_->execute_from_rows(shared_rows_.data(), m_at(p, m_offset_));
    }
  } else if (natural_) {
    {
      const events::scope e("fft.window.write");
      for (std::int64_t i0 = 0; i0 < planes_here_; ++i0)
        scatter_plane(reinterpret_cast<const cpx*>(plane(src, i0)), i0, p);
    }
    fence(m_, p);
    fft0(m_at(p, m_offset_), m_at(p, m_offset_));
  } else {
    fft0(src, m_at(p, m_offset_));
  }
  fence(m_, p);
  for (std::int64_t i0 = 0; i0 < planes_here_; ++i0) {
    {
      const events::scope e("fft.window.out");
      gather_plane(plane_, i0, p);
    }
    fft(plane_, plane(dst, i0, true));
  }
}

template class slab_direct_step<float>;
template class slab_direct_step<double>;

}  // namespace toru::fft::detail
