// SPDX-License-Identifier: BSD-3-Clause
// The middle of a slab transform in FFTW-MPI's transposed layout [i1 part][i0][i2]: the
// all-to-alls move whole rows of axis 2, and the axis-0 FFTs run strided, vectorised across the
// contiguous rows. No element-wise transpose anywhere (docs/fft.md).
#pragma once

#include <mpi.h>

#include <complex>
#include <cstdint>
#include <memory>
#include <vector>

#include "column_fft.hpp"
#include "exchange.hpp"
#include "exchange_typed.hpp"
#include "fftw_api.hpp"
#include "local_fft.hpp"
#include "steps.hpp"

namespace toru::fft::detail {

/// S0 = [i0 part][i1][w] -> M = [i1 part][i0][w] (one all-to-all), FFT along i0 in M (stride w,
/// per i1 row a block of n0 * w elements), then for natural order M -> S0 (one all-to-all) and
/// the line op on the planes of S0 (unit = one i0 plane of n1 * w elements); transposed order
/// ends (forward) or starts (backward) in M. w = complex points along axis 2.
/// The axis-0 FFTs need every source's whole block, so nothing overlaps the exchanges.
/// Where toru::comm picks MPI's own all-to-all (direct) for these exchanges, they run as
/// MPI_Alltoallw with datatypes that pick the runs of w points out of S0 and M: nothing is packed
/// or unpacked by hand. Otherwise the runs are packed into contiguous blocks for toru::comm.
template <class T>
class slab_vector_step final : public step<T> {
 public:
  using cpx = std::complex<T>;
  /// natural: the forward output (backward input) is S0, else M. scratch_a/b: planning buffers
  /// of at least M's size each.
  slab_vector_step(comm_ptr comm, int me, std::int64_t n0, std::int64_t n1, std::int64_t w, bool forward, bool natural,
                   unsigned flags, void* scratch_a, void* scratch_b, std::unique_ptr<line_op<T>> op, MPI_Datatype type,
                   comm::alltoall_algorithm algorithm, const node_window* window = nullptr);
  /// Elements of the window buffer a window step needs on this rank (M or S0, the larger).
  static std::int64_t window_elems(int P, int me, std::int64_t n0, std::int64_t n1, std::int64_t w);
  ~slab_vector_step() override;
  void run(const void* src, void* dst, const work_buffers& ws) const override;
  std::size_t workspace_size() const;

 private:
  using api = fftw_api<T>;
  // S0 -> M and M -> S0; m != s0 (the packed path also allows m == s0).
  void to_mid(const cpx* s0, cpx* m, const work_buffers& ws) const;
  void to_slab(const cpx* m, cpx* s0, const work_buffers& ws) const;
  // f(offset in S0 / M, offset in the packed region, points) for every run the packed path copies.
  template <class F>
  void for_s0_runs(F&& f) const;
  template <class F>
  void for_m_runs(F&& f) const;
  // Window path (all ranks on one node): every rank copies its runs straight into the peers'
  // window buffers in the other layout; returns this rank's buffer after the fence.
  const cpx* to_mid_window(const cpx* s0) const;
  void build_exchanges(comm_ptr comm, const std::vector<int>& s0_count, const std::vector<int>& s0_displ,
                       const std::vector<int>& m_count, const std::vector<int>& m_displ, MPI_Datatype type,
                       comm::alltoall_algorithm algorithm);
  void plan_fft0(unsigned flags, void* scratch_a, void* scratch_b);
  void to_slab_window(const cpx* m, cpx* s0) const;
  // The axis-0 FFTs of M, from in to out (in place when equal).
  void fft0(const cpx* in, cpx* out) const;

  std::int64_t n0_, n1_, w_, B_ = 0, A_ = 0;
  int me_ = 0;
  bool forward_, natural_;
  std::vector<std::int64_t> a_start_, a_count_, b_start_, b_count_;
  // Packed path: offsets of the blocks [i1 of r][i0 here][w] (S0 side) and [i1 here][i0 of r][w]
  // (M side) in the send and receive regions.
  std::vector<std::int64_t> s0_displ_, m_displ_;
  std::unique_ptr<line_op<T>> op_;
  const node_window* window_ = nullptr;
  std::unique_ptr<exchange> to_mid_, to_slab_;            // packed blocks through toru::comm
  std::unique_ptr<typed_exchange> to_mid_w_, to_slab_w_;  // or strided rows through MPI_Alltoallw
  // Axis-0 FFTs over this rank's i1 rows of M (w transforms of stride w per row): in place, and
  // out of place where the transposed order starts or ends in M. Null where A_ == 0.
  std::unique_ptr<column_fft<T>> in_place_, out_of_place_;
};

}  // namespace toru::fft::detail
