// SPDX-License-Identifier: BSD-3-Clause
// The stages a distributed FFT plan is made of: local batched FFTs and transposes (pack,
// exchange, unpack), the latter optionally transforming received lines chunk by chunk.
#pragma once

#include <complex>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "exchange.hpp"
#include "local_fft.hpp"
#include "node_window.hpp"
#include "toru/core/events.hpp"

namespace toru::fft::detail {

/// n elements from `from` to `to` (a run of a strided layout; the arrays do not overlap).
template <class C>
void copy_run(C* to, const C* from, std::int64_t n) {
  std::memcpy(static_cast<void*>(to), from, static_cast<std::size_t>(n) * sizeof(C));
}

/// Buffers an execution needs besides in and out: packed send and receive regions and the
/// exchange's own workspace.
struct work_buffers {
  void* send;
  void* recv;
  void* comm;
};

template <class T>
class step {
 public:
  virtual ~step() = default;
  /// Reads the stage data from src and leaves the next stage's data in dst (src may equal dst).
  virtual void run(const void* src, void* dst, const work_buffers& ws) const = 0;
};

/// Work done on consecutive destination units [u0, u1) of a stage once they are complete.
template <class T>
class line_op {
 public:
  virtual ~line_op() = default;
  virtual void apply(std::complex<T>* stage, std::int64_t u0, std::int64_t u1) const = 0;
  /// The same work reading units [u0, u1) of `from` (a stage of `unit` elements per unit, scratch
  /// afterwards) and leaving the result in `stage`: the node window's transposes land in a shared
  /// buffer, and an out-of-place FFT from there saves the copy into the plan's buffer.
  virtual void apply_from(std::complex<T>* from, std::complex<T>* stage, std::int64_t u0, std::int64_t u1,
                          std::int64_t unit) const {
    if (u1 <= u0) return;
    std::memcpy(static_cast<void*>(stage + u0 * unit), from + u0 * unit,
                static_cast<std::size_t>((u1 - u0) * unit) * sizeof(std::complex<T>));
    apply(stage, u0, u1);
  }
};

/// In-place batched FFT of units (unit = local_fft unit).
template <class T>
class fft_lines final : public line_op<T> {
 public:
  /// out_of_place (optional): the same transform planned from one buffer to another, for apply_from.
  explicit fft_lines(std::unique_ptr<local_fft<T>> fft, std::unique_ptr<local_fft<T>> out_of_place = nullptr)
      : fft_(std::move(fft)), oop_(std::move(out_of_place)) {}
  void apply(std::complex<T>* stage, std::int64_t u0, std::int64_t u1) const override {
    if (u1 <= u0) return;
    auto* p = stage + u0 * fft_->unit_complex();
    fft_->execute(u1 - u0, p, p);
  }
  void apply_from(std::complex<T>* from, std::complex<T>* stage, std::int64_t u0, std::int64_t u1,
                  std::int64_t unit) const override {
    if (!oop_ || unit != oop_->unit_complex()) return line_op<T>::apply_from(from, stage, u0, u1, unit);
    if (u1 <= u0) return;
    oop_->execute(u1 - u0, from + u0 * unit, stage + u0 * unit);
  }

 private:
  std::unique_ptr<local_fft<T>> fft_, oop_;
};

/// A batched FFT over the whole stage: from src to dst (first step) or in place.
template <class T>
class fft_step final : public step<T> {
 public:
  fft_step(std::unique_ptr<local_fft<T>> in_place, std::unique_ptr<local_fft<T>> out_of_place, std::int64_t units)
      : in_place_(std::move(in_place)), out_of_place_(std::move(out_of_place)), units_(units) {}
  void run(const void* src, void* dst, const work_buffers&) const override {
    if (units_ == 0) return;
    const events::scope ev("fft.local_fft");
    if (src == dst || !out_of_place_)
      in_place_->execute(units_, dst, dst);
    else
      out_of_place_->execute(units_, const_cast<void*>(src), dst);
  }

 private:
  std::unique_ptr<local_fft<T>> in_place_, out_of_place_;
  std::int64_t units_;
};

/// Geometry of one transpose inside a sub-communicator of q ranks. The source stage holds rows
/// (t, j) of na contiguous elements (axis a, full), j running over this rank's part of axis b;
/// the destination holds rows (t, a') of nb contiguous elements (axis b, full), a' over this rank's
/// part of axis a. t (extent T) is the third axis, not redistributed.
struct transpose_geometry {
  std::int64_t T = 1;
  std::int64_t na = 1, nb = 1;
  std::vector<std::int64_t> a_start, a_count;  // per destination rank
  std::vector<std::int64_t> b_start, b_count;  // per source rank
  int me = 0;
  bool src_t_outer = true;  // source rows ordered [t][j] (else [j][t])
  bool dst_t_outer = true;  // destination rows ordered [t][a'] (else [a'][t])
  std::int64_t group = 1;   // destination rows per unit of the line op
};

/// The geometry of a transpose over q ranks in which axis a (length na, whole at the source) gets
/// split into balanced parts and axis b (length nb, split at the source) gets gathered; row orders
/// and group as given.
transpose_geometry balanced_geometry(std::int64_t T, std::int64_t na, std::int64_t nb, int q, int me,
                                     bool src_t_outer = true, bool dst_t_outer = true, std::int64_t group = 1);

/// Pack, exchange and unpack, with the line op applied to units as soon as their chunk arrived.
/// Packed block for destination d: its rows in d's memory order, each holding this rank's
/// b-part (so every chunk of every source's block ends on whole destination rows, up to one).
/// With a node window (all ranks on one node) there is no exchange: each rank transposes its rows
/// straight into every peer's window buffer in the destination layout (one copy), one barrier, then
/// each rank copies its rows out of its own buffer `chunks` units at a time (cache-blocked) and
/// runs the line op on them while they are in cache.
template <class T>
class transpose_step final : public step<T> {
 public:
  using cpx = std::complex<T>;
  transpose_step(comm_ptr comm, transpose_geometry g, std::unique_ptr<line_op<T>> op, int chunks, bool overlap,
                 MPI_Datatype type, comm::alltoall_algorithm algorithm, const node_window* window = nullptr);
  std::string describe() const;
  void run(const void* src, void* dst, const work_buffers& ws) const override;
  std::size_t workspace_size() const { return ex_ ? ex_->workspace_size() : 0; }
  std::int64_t send_elems() const { return send_total_; }
  std::int64_t recv_elems() const { return recv_total_; }

 private:
  void pack(const cpx* src, cpx* send, cpx* recv) const;
  void unpack(const cpx* recv, cpx* dst, std::int64_t u0, std::int64_t u1) const;
  void run_window(const cpx* src, cpx* dst) const;

  transpose_geometry g_;
  const node_window* window_ = nullptr;
  int chunks_ = 1;
  std::unique_ptr<line_op<T>> op_;
  std::vector<std::int64_t> sdispl_, rdispl_;
  std::int64_t send_total_ = 0, recv_total_ = 0, units_ = 0;
  std::unique_ptr<exchange> ex_;
};

/// Multiplies every element by a constant.
template <class T>
void scale_array(std::complex<T>* data, std::int64_t count, T factor) {
  T* p = reinterpret_cast<T*>(data);
  for (std::int64_t i = 0; i < 2 * count; ++i) p[i] *= factor;
}

}  // namespace toru::fft::detail
