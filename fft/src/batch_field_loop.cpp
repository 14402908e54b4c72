// SPDX-License-Identifier: BSD-3-Clause
#include "batch_field_loop.hpp"

#include <complex>
#include <cstring>

#include "common.hpp"
#include "toru/core/agreement.hpp"

namespace toru::fft::detail {

namespace {

// A box's rows: `rows` of `valid` elements each `stride` apart (the real side's padding is
// neither read nor written, as the batched plans promise).
struct rows_of {
  std::int64_t rows, valid, stride;
};

rows_of rows(const box3d& b) {
  const std::int64_t stride = b.row_stride;
  return {stride > 0 ? b.extent() / stride : 0, b.size[b.order[2]], stride};
}

// Interleaved (field f of element m at m * F + f) to planar (field f at planar + f * field), and
// back; one pass over the interleaved side, which is read or written in order. NF: F known at
// compile time (0: not), so the inner loop unrolls: the copies are half the batched plan's extra time.
template <int NF, class E>
void split_rows(const E* inter, E* planar, std::int64_t field, int nf, rows_of r) {
  const int F = NF > 0 ? NF : nf;
  for (std::int64_t k = 0; k < r.rows; ++k) {
    const E* in = inter + k * r.stride * F;
    E* out = planar + k * r.stride;
    for (std::int64_t i = 0; i < r.valid; ++i)
      for (int f = 0; f < F; ++f) out[f * field + i] = in[i * F + f];
  }
}
template <int NF, class E>
void interleave_rows(const E* planar, E* inter, std::int64_t field, int nf, rows_of r) {
  const int F = NF > 0 ? NF : nf;
  for (std::int64_t k = 0; k < r.rows; ++k) {
    const E* in = planar + k * r.stride;
    E* out = inter + k * r.stride * F;
    for (std::int64_t i = 0; i < r.valid; ++i)
      for (int f = 0; f < F; ++f) out[i * F + f] = in[f * field + i];
  }
}
template <class E>
void split_rows(const E* inter, E* planar, std::int64_t field, int F, rows_of r) {
  switch (F) {
    case 2:
      return split_rows<2>(inter, planar, field, F, r);
    case 3:
      return split_rows<3>(inter, planar, field, F, r);
    case 4:
      return split_rows<4>(inter, planar, field, F, r);
    default:
      return split_rows<0>(inter, planar, field, F, r);
  }
}
template <class E>
void interleave_rows(const E* planar, E* inter, std::int64_t field, int F, rows_of r) {
  switch (F) {
    case 2:
      return interleave_rows<2>(planar, inter, field, F, r);
    case 3:
      return interleave_rows<3>(planar, inter, field, F, r);
    case 4:
      return interleave_rows<4>(planar, inter, field, F, r);
    default:
      return interleave_rows<0>(planar, inter, field, F, r);
  }
}
// One field's valid elements from a plan3d output (padding untouched in `to`).
template <class E>
void copy_rows(const E* from, E* to, rows_of r) {
  if (r.rows == 0) return;  // an idle rank's `to` may be null, which memcpy may not see even for 0 bytes
  if (r.valid == r.stride) {
    std::memcpy(static_cast<void*>(to), from, static_cast<std::size_t>(r.rows * r.stride) * sizeof(E));
    return;
  }
  for (std::int64_t k = 0; k < r.rows; ++k)
    std::memcpy(static_cast<void*>(to + k * r.stride), from + k * r.stride,
                static_cast<std::size_t>(r.valid) * sizeof(E));
}

bool overlap(const void* a, std::size_t a_bytes, const void* b, std::size_t b_bytes) {
  const auto x = reinterpret_cast<std::uintptr_t>(a), y = reinterpret_cast<std::uintptr_t>(b);
  return a_bytes > 0 && b_bytes > 0 && x < y + b_bytes && y < x + a_bytes;
}

}  // namespace

template <class T>
bool field_loop<T>::applies(std::array<std::int64_t, 3> n, bool r2c, const options3d& opts) {
  const std::array<int, 2> grid = opts.grid;
  if (grid[0] == 0 && grid[1] == 0) return true;  // plan3d's own choice (a slab with idle ranks at worst)
  const std::int64_t nc = r2c ? n[2] / 2 + 1 : n[2];
  return grid[0] <= n[0] && grid[0] <= n[1] && grid[1] <= n[1] && grid[1] <= nc;
}

template <class T>
field_loop<T>::field_loop(MPI_Comm comm, std::array<std::int64_t, 3> n, bool r2c, int howmany, bool planar,
                          const options3d& opts)
    : r2c_(r2c), planar_(planar || howmany == 1), F_(howmany) {  // one field: both layouts alike
  options3d o = opts;
  if (o.grid[0] != 0 || o.grid[1] != 0) o.decomp = decomposition::pencil;  // a forced grid is a pencil grid
  plan_ = std::make_unique<plan3d<T>>(comm, n, r2c, o);
  const std::int64_t A = plan_->alloc_size();
  validate_collectively(comm, [&] {
    const std::size_t fields = checked_bytes(A * F_, sizeof(std::complex<T>), "batched staging");
    stage_ = aligned_buffer(fields);
    work_ = aligned_buffer(planar_ ? checked_bytes(A, sizeof(std::complex<T>), "batched staging") : fields);
  });
}

template <class T>
void field_loop<T>::execute(bool forward, const void* in, void* out, scale s) const {
  using cpx = std::complex<T>;
  const box3d& sb = forward ? inbox() : outbox();
  const box3d& db = forward ? outbox() : inbox();
  const bool real_in = r2c_ && forward, real_out = r2c_ && !forward;
  const std::size_t se = real_in ? sizeof(T) : sizeof(cpx), de = real_out ? sizeof(T) : sizeof(cpx);
  const std::int64_t S = sb.extent(), D = db.extent(), A = plan_->alloc_size(), F = F_;
  const auto* src = static_cast<const char*>(in);
  auto* dst = static_cast<char*>(out);
  char* stage = static_cast<char*>(stage_.get());
  char* work = static_cast<char*>(work_.get());

  if (!planar_) {
    // Split into stage, transform each field into work (field f at f * D: plan3d's run past D
    // only touches fields not yet computed), interleave into out.
    if (real_in)
      split_rows(reinterpret_cast<const T*>(src), reinterpret_cast<T*>(stage), S, F_, rows(sb));
    else
      split_rows(reinterpret_cast<const cpx*>(src), reinterpret_cast<cpx*>(stage), S, F_, rows(sb));
    for (std::int64_t f = 0; f < F; ++f) plan_->perform(forward, stage + f * S * se, work + f * D * de, nullptr, s);
    if (real_out)
      interleave_rows(reinterpret_cast<const T*>(work), reinterpret_cast<T*>(dst), D, F_, rows(db));
    else
      interleave_rows(reinterpret_cast<const cpx*>(work), reinterpret_cast<cpx*>(dst), D, F_, rows(db));
    return;
  }
  // Planar: in place (or any overlap) transforms a copy of the input.
  const std::size_t out_bytes = static_cast<std::size_t>(F * A) * sizeof(cpx);
  if (overlap(src, static_cast<std::size_t>(F * S) * se, dst, out_bytes)) {
    std::memcpy(stage, src, static_cast<std::size_t>(F * S) * se);
    src = stage;
  }
  for (std::int64_t f = 0; f < F; ++f) {
    const char* from = src + f * S * se;
    char* to = dst + f * D * de;
    // plan3d uses its out as a stage of A complex elements: straight into the caller's field when
    // that stays within the planar fields not yet written (and there is no padding to keep).
    if (!real_out && f * D + A <= F * D) {
      plan_->perform(forward, from, to, nullptr, s);
      continue;
    }
    plan_->perform(forward, from, work, nullptr, s);
    if (real_out)
      copy_rows(reinterpret_cast<const T*>(work), reinterpret_cast<T*>(to), rows(db));
    else
      copy_rows(reinterpret_cast<const cpx*>(work), reinterpret_cast<cpx*>(to), rows(db));
  }
}

template class field_loop<float>;
template class field_loop<double>;

}  // namespace toru::fft::detail
