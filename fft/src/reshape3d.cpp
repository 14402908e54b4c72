// SPDX-License-Identifier: BSD-3-Clause
// reshape3d: every rank gathers all boxes once, checks them all (so every rank reaches the same
// verdict without a further message), and plans one alltoallv of the intersections. Each block
// travels in its sender's memory order, so packing copies whole rows and only the receiver pays
// for a change of order.
#include "toru/fft/reshape3d.hpp"

#include <algorithm>
#include <climits>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "comm_cache.hpp"
#include "reshape_impl.hpp"
#include "toru/comm/alltoall_plan.hpp"
#include "toru/core/agreement.hpp"
#include "toru/core/error.hpp"
#include "toru/core/mpi.hpp"

namespace toru::fft {

namespace detail {

namespace {

using index3 = std::array<std::int64_t, 3>;

// The wire form of a box: low, size, order, row_stride.
constexpr int box_words = 10;

std::array<std::int64_t, box_words> pack_box(const box3d& b) {
  return {b.low[0],  b.low[1],   b.low[2],   b.size[0],  b.size[1],
          b.size[2], b.order[0], b.order[1], b.order[2], b.row_stride};
}

box3d unpack_box(const std::int64_t* w) {
  box3d b;
  for (int a = 0; a < 3; ++a) {
    b.low[a] = w[a];
    b.size[a] = w[3 + a];
    b.order[a] = static_cast<int>(w[6 + a]);
  }
  b.row_stride = w[9];
  return b;
}

std::string describe(const box3d& b) {
  return fmt::format("low [{}, {}, {}] size [{}, {}, {}]", b.low[0], b.low[1], b.low[2], b.size[0], b.size[1],
                     b.size[2]);
}

// The first thing wrong with one rank's box, or "".
std::string box_fault(const box3d& b, const index3& n) {
  for (int a = 0; a < 3; ++a) {
    if (b.size[a] < 0) return fmt::format("size[{}] = {} is negative", a, b.size[a]);
    if (b.low[a] < 0) return fmt::format("low[{}] = {} is negative", a, b.low[a]);
    if (b.size[a] > 0 && b.low[a] + b.size[a] > n[a])
      return fmt::format("low[{0}] + size[{0}] = {1} exceeds n[{0}] = {2}", a, b.low[a] + b.size[a], n[a]);
  }
  std::array<int, 3> o = b.order;
  std::sort(o.begin(), o.end());
  if (o != std::array<int, 3>{0, 1, 2})
    return fmt::format("order [{}, {}, {}] is not a permutation of [0, 1, 2]", b.order[0], b.order[1], b.order[2]);
  if (b.row_stride < b.size[b.order[2]])
    return fmt::format("row_stride {} is below size[order[2]] = {}", b.row_stride, b.size[b.order[2]]);
  return {};
}

bool empty(const box3d& b) { return b.size[0] == 0 || b.size[1] == 0 || b.size[2] == 0; }

// The common part of a and b (size 0 on some axis when they do not meet).
box3d intersect(const box3d& a, const box3d& b) {
  box3d r;
  for (int ax = 0; ax < 3; ++ax) {
    r.low[ax] = std::max(a.low[ax], b.low[ax]);
    const std::int64_t high = std::min(a.low[ax] + a.size[ax], b.low[ax] + b.size[ax]);
    r.size[ax] = std::max<std::int64_t>(0, high - r.low[ax]);
  }
  return r;
}

// Elements between neighbours along each global axis in a box's memory.
index3 strides(const box3d& b) {
  index3 s{};
  s[b.order[2]] = 1;
  s[b.order[1]] = b.row_stride;
  s[b.order[0]] = b.row_stride * b.size[b.order[1]];
  return s;
}

// The offset of global point p in box b's memory.
std::int64_t offset(const box3d& b, const index3& s, const index3& p) {
  return (p[0] - b.low[0]) * s[0] + (p[1] - b.low[1]) * s[1] + (p[2] - b.low[2]) * s[2];
}

// Both sides of the whole set of boxes must tile the grid: count and pairwise overlap.
void check_cover(const std::vector<box3d>& boxes, const index3& n, const char* side) {
  const std::int64_t total = n[0] * n[1] * n[2];
  std::int64_t covered = 0;
  for (const box3d& b : boxes) covered += empty(b) ? 0 : b.count();
  for (std::size_t i = 0; i < boxes.size(); ++i) {
    if (empty(boxes[i])) continue;
    for (std::size_t j = i + 1; j < boxes.size(); ++j) {
      const box3d c = intersect(boxes[i], boxes[j]);
      if (!empty(c))
        throw error(
            errc::invalid_argument,
            fmt::format("toru::fft::reshape3d: the {} boxes of ranks {} and {} overlap ({})", side, i, j, describe(c)));
    }
  }
  if (covered != total)
    throw error(errc::invalid_argument,
                fmt::format("toru::fft::reshape3d: the {} boxes cover {} of the {} points of the {}x{}x{} grid "
                            "(each point must belong to exactly one rank's box)",
                            side, covered, total, n[0], n[1], n[2]));
}

// One strided run of `run` elements, the element size a compile-time constant: the copies become
// plain loads and stores (with eb known only at run time, each element is a call to memcpy, which
// dominated the batched plans' transposes: 48-byte points of three complex fields).
template <std::size_t EB>
void strided_run(char* d, const char* s, std::int64_t run, std::int64_t dstep, std::int64_t sstep, std::size_t) {
  for (std::int64_t z = 0; z < run; ++z) std::memcpy(d + z * dstep, s + z * sstep, EB);
}
void strided_run_any(char* d, const char* s, std::int64_t run, std::int64_t dstep, std::int64_t sstep, std::size_t eb) {
  for (std::int64_t z = 0; z < run; ++z) std::memcpy(d + z * dstep, s + z * sstep, eb);
}
using strided_fn = void (*)(char*, const char*, std::int64_t, std::int64_t, std::int64_t, std::size_t);
// The sizes toru's plans move: a real or complex float or double, and up to four complex doubles.
strided_fn strided_for(std::size_t eb) {
  switch (eb) {
    case 4:
      return strided_run<4>;
    case 8:
      return strided_run<8>;
    case 16:
      return strided_run<16>;
    case 24:
      return strided_run<24>;
    case 32:
      return strided_run<32>;
    case 48:
      return strided_run<48>;
    case 64:
      return strided_run<64>;
    default:
      return strided_run_any;
  }
}

// Copies the block I from src (laid out as box sb) to dst (box db), walking I in the order `ord`
// (outer to inner axis); whole runs along ord[2] where both sides are contiguous there. Where they
// are not (a transpose), it goes in tiles of the source's and the destination's contiguous axes,
// so that both sides touch a few lines and pages at a time instead of one page per element.
void copy_block(const char* src, const box3d& sb, char* dst, const box3d& db, const box3d& I,
                const std::array<int, 3>& ord, std::size_t eb) {
  const index3 ss = strides(sb), ds = strides(db);
  const auto e = static_cast<std::int64_t>(eb);
  const int a0 = ord[0], a1 = ord[1], a2 = ord[2];
  const std::int64_t run = I.size[a2];
  index3 p = I.low;
  // Point p on either side.
  auto from = [&] { return src + offset(sb, ss, p) * e; };
  auto to = [&] { return dst + offset(db, ds, p) * e; };
  if (ss[a2] == 1 && ds[a2] == 1) {
    for (std::int64_t x = 0; x < I.size[a0]; ++x) {
      p[a0] = I.low[a0] + x;
      for (std::int64_t y = 0; y < I.size[a1]; ++y) {
        p[a1] = I.low[a1] + y;
        p[a2] = I.low[a2];
        std::memcpy(to(), from(), static_cast<std::size_t>(run) * eb);
      }
    }
    return;
  }
  const strided_fn strided = strided_for(eb);
  const std::int64_t sstep = ss[a2] * e, dstep = ds[a2] * e;
  // dc: the destination's contiguous axis (not a2 here); r: the third axis.
  const int dc = db.order[2] != a2 ? db.order[2] : a1;
  const int r = 3 - a2 - dc;
  constexpr std::int64_t tile = 16;  // 16 x 16 points of up to 64 bytes: 16 KiB, in L1 with room
  for (std::int64_t x = 0; x < I.size[r]; ++x) {
    p[r] = I.low[r] + x;
    for (std::int64_t y0 = 0; y0 < I.size[dc]; y0 += tile)
      for (std::int64_t z0 = 0; z0 < run; z0 += tile) {
        const std::int64_t ny = std::min(tile, I.size[dc] - y0), nz = std::min(tile, run - z0);
        for (std::int64_t y = y0; y < y0 + ny; ++y) {
          p[dc] = I.low[dc] + y;
          p[a2] = I.low[a2] + z0;
          strided(to(), from(), nz, dstep, sstep, eb);
        }
      }
  }
}

// The packed layout of block I in the sender's order (what travels).
box3d packed(const box3d& I, const std::array<int, 3>& ord) {
  box3d b = I;
  b.order = ord;
  b.row_stride = I.size[ord[2]];
  return b;
}

}  // namespace

reshape_impl::reshape_impl(MPI_Comm comm, std::array<std::int64_t, 3> n, box3d in, box3d out,
                           const reshape_options& opts, MPI_Datatype type, std::size_t elem_bytes, int element)
    : eb_(elem_bytes) {
  expect_intracommunicator(comm, "comm");
  validate_collectively(comm, "toru::fft::reshape3d",
                        {{"n[0]", n[0]}, {"n[1]", n[1]}, {"n[2]", n[2]}, {"element type", element}}, [&] {
                          for (int a = 0; a < 3; ++a)
                            expect(n[a] >= 1, fmt::format("n[{}]", a).c_str(), ">= 1", std::to_string(n[a]));
                        });
  for (box3d* b : {&in, &out})
    if (b->row_stride == 0) b->row_stride = b->order[2] >= 0 && b->order[2] < 3 ? b->size[b->order[2]] : 0;
  int P = 0;
  check_mpi(MPI_Comm_size(comm, &P), "MPI_Comm_size");
  check_mpi(MPI_Comm_rank(comm, &me_), "MPI_Comm_rank");
  // Every box of every rank, so every rank checks them all and reaches the same verdict.
  std::vector<std::int64_t> mine(2 * box_words), all(static_cast<std::size_t>(P) * 2 * box_words);
  const auto wi = pack_box(in), wo = pack_box(out);
  std::copy(wi.begin(), wi.end(), mine.begin());
  std::copy(wo.begin(), wo.end(), mine.begin() + box_words);
  check_mpi(MPI_Allgather(mine.data(), 2 * box_words, MPI_INT64_T, all.data(), 2 * box_words, MPI_INT64_T, comm),
            "MPI_Allgather");
  ins_.resize(static_cast<std::size_t>(P));
  outs_.resize(static_cast<std::size_t>(P));
  for (int r = 0; r < P; ++r) {
    ins_[r] = unpack_box(all.data() + static_cast<std::size_t>(r) * 2 * box_words);
    outs_[r] = unpack_box(all.data() + static_cast<std::size_t>(r) * 2 * box_words + box_words);
    for (const auto& [b, side] : {std::pair{ins_[r], "in"}, std::pair{outs_[r], "out"}}) {
      const std::string fault = box_fault(b, n);
      if (!fault.empty())
        throw error(errc::invalid_argument,
                    fmt::format("toru::fft::reshape3d: the {} box of rank {} ({}): {}", side, r, describe(b), fault));
    }
  }
  check_cover(ins_, n, "in");
  check_cover(outs_, n, "out");
  in_ = ins_[me_];
  out_ = outs_[me_];

  // One block per pair of ranks; the self block is copied directly, not exchanged.
  std::vector<std::int64_t> sc(P), rc(P);
  for (int r = 0; r < P; ++r) {
    sc[r] = r == me_ ? 0 : intersect(in_, outs_[r]).count();
    rc[r] = r == me_ ? 0 : intersect(ins_[r], out_).count();
  }
  std::vector<int> send_counts(P), send_displs(P), recv_counts(P), recv_displs(P);
  validate_collectively(comm, [&] {
    std::int64_t s = 0, r = 0;
    for (int q = 0; q < P; ++q) {
      if (sc[q] > INT_MAX || rc[q] > INT_MAX || s > INT_MAX || r > INT_MAX)
        throw error(errc::invalid_argument,
                    fmt::format("toru::fft::reshape3d: a block of more than {} elements (MPI's int counts)", INT_MAX));
      send_counts[q] = static_cast<int>(sc[q]);
      recv_counts[q] = static_cast<int>(rc[q]);
      send_displs[q] = static_cast<int>(s);
      recv_displs[q] = static_cast<int>(r);
      s += sc[q];
      r += rc[q];
    }
    // Never empty: two null buffers would read as an in-place exchange on this rank alone.
    send_.resize(static_cast<std::size_t>(std::max<std::int64_t>(s, 1)) * eb_);
    recv_.resize(static_cast<std::size_t>(std::max<std::int64_t>(r, 1)) * eb_);
  });
  send_displs_.assign(send_displs.begin(), send_displs.end());
  recv_displs_.assign(recv_displs.begin(), recv_displs.end());
  comm_ = communicators(comm, 0, 0, opts.comm).all;
  agree_ = agreement_comm(comm);
  exchange_ = std::make_unique<comm::alltoallv_plan>(*comm_, send_counts, send_displs, recv_counts, recv_displs, type,
                                                     comm::alltoall_options{.algorithm = opts.algorithm});
}

void reshape_impl::execute(const void* in, void* out) const {
  const std::size_t in_bytes = static_cast<std::size_t>(in_.extent()) * eb_;
  const std::size_t out_bytes = static_cast<std::size_t>(out_.extent()) * eb_;
  validate_collectively(*agree_, "toru::fft::reshape3d::execute", std::span<const same_on_all_ranks>{}, [&] {
    if (!empty(in_) && !in) throw error(errc::invalid_argument, "toru::fft::reshape3d::execute: in is null");
    if (!empty(out_) && !out) throw error(errc::invalid_argument, "toru::fft::reshape3d::execute: out is null");
    const char* i0 = static_cast<const char*>(in);
    const char* o0 = static_cast<const char*>(out);
    if (in && out && in_bytes && out_bytes && i0 < o0 + out_bytes && o0 < i0 + in_bytes)
      throw error(errc::invalid_argument, "toru::fft::reshape3d::execute: in and out overlap");
  });
  move(in, out);
}

void reshape_impl::move(const void* in, void* out) const {
  const char* src = static_cast<const char*>(in);
  char* dst = static_cast<char*>(out);
  const int P = static_cast<int>(ins_.size());
  for (int r = 0; r < P; ++r) {
    if (r == me_) continue;
    const box3d I = intersect(in_, outs_[r]);
    if (empty(I)) continue;
    copy_block(src, in_, send_.data() + send_displs_[r] * eb_, packed(I, in_.order), I, in_.order, eb_);
  }
  exchange_->execute(send_.data(), recv_.data());
  const box3d self = intersect(in_, out_);
  if (!empty(self)) copy_block(src, in_, dst, out_, self, in_.order, eb_);
  for (int r = 0; r < P; ++r) {
    if (r == me_) continue;
    const box3d I = intersect(ins_[r], out_);
    if (empty(I)) continue;
    // Walk the block in its sender's order: the packed side is read in sequence.
    copy_block(recv_.data() + recv_displs_[r] * eb_, packed(I, ins_[r].order), dst, out_, I, ins_[r].order, eb_);
  }
}

}  // namespace detail

template <reshape_element T>
reshape3d<T>::reshape3d(MPI_Comm comm, std::array<std::int64_t, 3> n, box3d in, box3d out, reshape_options opts)
    : impl_(detail::make_reshape<T>(comm, n, in, out, opts)) {}
template <reshape_element T>
reshape3d<T>::~reshape3d() = default;
template <reshape_element T>
reshape3d<T>::reshape3d(reshape3d&&) noexcept = default;
template <reshape_element T>
reshape3d<T>& reshape3d<T>::operator=(reshape3d&&) noexcept = default;
template <reshape_element T>
const box3d& reshape3d<T>::inbox() const {
  return impl_->inbox();
}
template <reshape_element T>
const box3d& reshape3d<T>::outbox() const {
  return impl_->outbox();
}
template <reshape_element T>
std::int64_t reshape3d<T>::in_size() const {
  return impl_->inbox().extent();
}
template <reshape_element T>
std::int64_t reshape3d<T>::out_size() const {
  return impl_->outbox().extent();
}
template <reshape_element T>
void reshape3d<T>::execute(const T* in, T* out) const {
  impl_->execute(in, out);
}

template class reshape3d<float>;
template class reshape3d<double>;
template class reshape3d<std::complex<float>>;
template class reshape3d<std::complex<double>>;

}  // namespace toru::fft
