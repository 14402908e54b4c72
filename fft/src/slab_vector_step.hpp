// The middle of a natural-order slab transform in FFTW-MPI's layout: the all-to-all gathers axis 0
// while axis 2 stays contiguous (whole rows move as one run), and the axis-0 FFTs run strided,
// vectorised across the contiguous rows. No element-wise transpose anywhere (docs/fft.md).
#pragma once

#include <mpi.h>

#include <complex>
#include <cstdint>
#include <memory>
#include <vector>

#include "exchange.hpp"
#include "exchange_typed.hpp"
#include "fftw_api.hpp"
#include "local_fft.hpp"
#include "steps.hpp"

namespace toru::fft::detail {

/// S0 = [i0 part][i1][w] -> M = [i0][i1 part][w] (one all-to-all, received in place into dst),
/// FFT along i0 in M (stride = i1 part * w), M -> S0 (one all-to-all), then the line op on the
/// planes of S0 (unit = one i0 plane of n1 * w elements). w = complex points along axis 2.
/// The axis-0 FFTs need every source's whole block, so nothing overlaps the first exchange; the
/// second one is run whole too, as its source (dst) is written by the unpack.
/// Where toru::comm picks MPI's own all-to-all (direct) for these exchanges, they run as
/// MPI_Alltoallw with strided-row datatypes instead: M lives in the receive region, and neither
/// the pack before the first exchange nor the unpack after the second copies anything.
template <class T>
class slab_vector_step final : public step<T> {
 public:
  using cpx = std::complex<T>;
  slab_vector_step(comm_ptr comm, int me, std::int64_t n0, std::int64_t n1, std::int64_t w, bool forward,
                   unsigned flags, void* scratch, std::unique_ptr<line_op<T>> op, MPI_Datatype type,
                   comm::alltoall_algorithm algorithm);
  ~slab_vector_step() override;
  void run(const void* src, void* dst, const work_buffers& ws) const override;
  std::size_t workspace_size() const;

 private:
  using api = fftw_api<T>;
  std::int64_t n0_, n1_, w_, B_ = 0, A_ = 0;
  std::vector<std::int64_t> a_start_, a_count_, b_start_, b_count_;
  std::vector<std::int64_t> pack_displ_;  // per destination, in the packed send region
  std::unique_ptr<line_op<T>> op_;
  std::unique_ptr<exchange> to_mid_, to_slab_;        // packed blocks through toru::comm
  std::unique_ptr<typed_exchange> to_mid_w_, to_slab_w_;  // or strided rows through MPI_Alltoallw
  typename api::plan fft0_ = nullptr, fft0_unaligned_ = nullptr;
};

}  // namespace toru::fft::detail
