// SPDX-License-Identifier: BSD-3-Clause
#include "six_step_direct_step.hpp"

#include <algorithm>
#include <complex>

#include <fmt/format.h>

#include "split.hpp"
#include "tiled_transpose.hpp"
#include "toru/core/error.hpp"
#include "toru/core/events.hpp"

namespace toru::fft::detail {

namespace {
// x[i] *= w[i] (conjugate: conj(w[i])) on interleaved re, im: the compiler vectorizes this, not
// std::complex's operator*=, whose inf/nan recovery (C Annex G) is a branch per point; twiddles are
// finite. The twiddles were 3.7-5.0 ms of a 44 ms forward at 2^22 on 2 ranks (toru-fft-bench --trace).
template <class T>
void multiply_twiddles(std::complex<T>* x, const std::complex<T>* w, std::int64_t n, bool conjugate) {
  T* __restrict a = reinterpret_cast<T*>(x);
  const T* __restrict b = reinterpret_cast<const T*>(w);
  const T s = conjugate ? T(-1) : T(1);
  for (std::int64_t i = 0; i < n; ++i) {
    const T ar = a[2 * i], ai = a[2 * i + 1], br = b[2 * i], bi = s * b[2 * i + 1];
    a[2 * i] = ar * br - ai * bi;
    a[2 * i + 1] = ar * bi + ai * br;
  }
}
}  // namespace

template <class T>
std::int64_t six_step_direct_step<T>::default_tile_lines(std::int64_t len, std::size_t point_bytes) {
  // Runs of 512 bytes per row (32 double lines): the gathers and scatters visit each row, pages
  // from the last, once per tile, and copy its run whole (transpose_gathered). 2^22 on 2 ranks,
  // double, the direct window forced (toru-fft-bench --trace, 9 reps): forward 44.9 ms with 8
  // lines, 39.8 with 16, 36.0 with 32, 37.4 with 64; the gathers 11.7, 9.3, 8.3, 9.1 ms. Fewer
  // lines only where the tile would pass 4 MiB.
  constexpr std::int64_t run_bytes = 512, tile_bytes = std::int64_t{4} << 20;
  const auto point = static_cast<std::int64_t>(point_bytes);
  std::int64_t c = std::max<std::int64_t>(8, run_bytes / point);
  while (c > 8 && c * len * point > tile_bytes) c /= 2;
  return c;
}

template <class T>
six_step_direct_step<T>::six_step_direct_step(int P, int me, std::int64_t n1, std::int64_t n2, bool forward,
                                              bool natural, unsigned flags, const cpx* twiddle, const node_array* a,
                                              const node_array* b, std::int64_t tile_lines)
    : me_(me), n1_(n1), n2_(n2), forward_(forward), natural_(natural), twiddle_(twiddle), a_(a), b_(b) {
  if (!a_ || !b_) throw error(errc::internal, "fft: the 1D direct window needs its node arrays");
  in_points_ = part_count(n1, P, me) * n2;
  out_points_ = part_count(n2, P, me) * n1;
  c_ = tile_lines > 0 ? tile_lines : default_tile_lines(std::max(n1, n2), sizeof(cpx));
  const std::int64_t tile_points = c_ * std::max(n1, n2);
  tile_.reset(static_cast<cpx*>(api::malloc(static_cast<std::size_t>(tile_points) * sizeof(cpx))));
  stage_.reset(static_cast<cpx*>(api::malloc(static_cast<std::size_t>(tile_points) * sizeof(cpx))));
  if (!tile_ || !stage_)
    throw error(errc::out_of_memory, fmt::format("fft: 2 x {} bytes of tile for the 1D direct window",
                                                 tile_points * static_cast<std::int64_t>(sizeof(cpx))));
  make_pass(n1_pass_, n1, part_start(n2, P, me), part_count(n2, P, me), flags);  // this rank's j2 lines
  make_pass(n2_pass_, n2, part_start(n1, P, me), part_count(n1, P, me), flags);  // its k1 lines
}

template <class T>
void six_step_direct_step<T>::make_pass(pass& p, std::int64_t len, std::int64_t first, std::int64_t count,
                                        unsigned flags) {
  p.len = len;
  p.first = first;
  p.count = count;
  const int sign = forward_ ? FFTW_FORWARD : FFTW_BACKWARD;
  const int n = static_cast<int>(len);  // below 2^31: check_1d
  auto plan = [&](std::int64_t lines) -> typename api::plan {
    if (lines <= 0) return nullptr;
    auto* t = reinterpret_cast<typename api::cpx*>(tile_.get());
    auto q = api::many_dft(1, &n, static_cast<int>(lines), t, nullptr, 1, n, t, nullptr, 1, n, sign, flags);
    if (!q) throw error(errc::internal, fmt::format("fft: FFTW could not plan {} lines of {} points", lines, len));
    return q;
  };
  p.full.p = plan(std::min(c_, count));
  p.rest.p = count > c_ ? plan(count % c_) : nullptr;
}

template <class T>
six_step_direct_step<T>::~six_step_direct_step() = default;

template <class T>
void six_step_direct_step<T>::sweep(const pass& p, lines_at from, lines_at to, int twiddle) const {
  const std::int64_t len = p.len;
  cpx* tile = tile_.get();
  for (std::int64_t t = 0; t < p.count; t += c_) {
    const std::int64_t k = std::min(c_, p.count - t), line = p.first + t;
    if (from.ld) {
      // Runs of k points from each of len rows, every rank's part: transposed into the tile.
      transpose_gathered(from.base + line, from.ld, tile, len, len, k, stage_.get());
    } else {
      copy_run(tile, from.base + t * len, k * len);
    }
    // The twiddle rows are this rank's j2 lines: the n1 pass's lines, t its local index.
    const cpx* w = twiddle ? twiddle_ + t * len : nullptr;
    if (twiddle < 0) multiply_twiddles(tile, w, k * len, true);
    {
      const events::scope e("fft.local_fft");
      api::execute_dft(k == std::min(c_, p.count) ? p.full.p : p.rest.p, tile, tile);
    }
    if (twiddle > 0) multiply_twiddles(tile, w, k * len, false);
    if (to.ld) {
      transpose_scattered(tile, len, to.base + line, to.ld, k, len, stage_.get());
    } else {
      copy_run(to.base + t * len, tile, k * len);
    }
  }
}

template <class T>
void six_step_direct_step<T>::run(const void* src, void* dst, const work_buffers&) const {
  const events::scope ev("fft.transpose", 0, "direct window");
  auto fence = [](const node_array* x, int parity) {
    const events::scope e("fft.window.fence");
    x->fence(parity);
  };
  auto copy_in = [&](const node_array* x, std::int64_t points) {
    const int p = x->next_use();
    const events::scope e("fft.window.write");
    copy_run(own(x, p, me_), static_cast<const cpx*>(src), points);
    return p;
  };
  auto copy_out = [&](const node_array* x, int p, std::int64_t points) {
    const events::scope e("fft.window.out");
    copy_run(static_cast<cpx*>(dst), own(x, p, me_), points);
  };
  // Each use of a node array is: writes, one fence, reads; parities from next_use, so that the
  // arrays can be shared with every other plan of the communicator (node_window's protocol).
  auto* out = static_cast<cpx*>(dst);
  if (forward_) {
    const int pa = copy_in(a_, in_points_);
    fence(a_, pa);
    const int pb = b_->next_use();
    sweep(n1_pass_, {whole(a_, pa), n2_}, {own(b_, pb, me_), 0}, +1);
    fence(b_, pb);
    if (!natural_) {
      sweep(n2_pass_, {whole(b_, pb), n1_}, {out, 0}, 0);
      return;
    }
    const int pc = b_->next_use();
    sweep(n2_pass_, {whole(b_, pb), n1_}, {whole(b_, pc), n1_}, 0);
    fence(b_, pc);
    copy_out(b_, pc, out_points_);
    return;
  }
  int pb = 0;
  if (natural_) {
    const int pc = copy_in(b_, out_points_);
    fence(b_, pc);
    pb = b_->next_use();
    sweep(n2_pass_, {whole(b_, pc), n1_}, {whole(b_, pb), n1_}, 0);
  } else {
    pb = b_->next_use();
    sweep(n2_pass_, {const_cast<cpx*>(static_cast<const cpx*>(src)), 0}, {whole(b_, pb), n1_}, 0);
  }
  fence(b_, pb);
  const int pa = a_->next_use();
  sweep(n1_pass_, {own(b_, pb, me_), 0}, {whole(a_, pa), n2_}, -1);
  fence(a_, pa);
  copy_out(a_, pa, in_points_);
}

template class six_step_direct_step<float>;
template class six_step_direct_step<double>;

}  // namespace toru::fft::detail
