// SPDX-License-Identifier: BSD-3-Clause
// toru::fft::reshape3d: moves a 3D array from one distribution over the ranks (one box per rank,
// in any memory order) to another, in one all-to-all. The exchange on its own, for solvers that
// transpose between their own computations: x <-> y <-> z pencils (as 2DECOMP&FFT's
// transpose_x_to_y), slab <-> pencil, or any box -> box (as heFFTe's reshape3d).
//
//   // x-pencils (axis 0 whole on every rank) to z-pencils, on a p0 x p1 grid of ranks:
//   toru::fft::reshape3d<double> r(comm, {nx, ny, nz}, my_x_pencil, my_z_pencil);
//   std::vector<double> in(r.in_size()), out(r.out_size());
//   r.execute(in.data(), out.data());
#pragma once

#include <mpi.h>

#include <array>
#include <complex>
#include <concepts>
#include <cstdint>
#include <memory>

#include "toru/fft/options.hpp"

namespace toru::fft {

namespace detail {
class reshape_impl;
}

/// The element types a reshape moves.
template <class T>
concept reshape_element = std::same_as<T, float> || std::same_as<T, double> || std::same_as<T, std::complex<float>> ||
    std::same_as<T, std::complex<double>>;

/// Options of a reshape.
struct reshape_options {
  comm::alltoall_algorithm algorithm = comm::alltoall_algorithm::automatic;
  comm::communicator_options comm{};  // torus, mapping and threads of the exchange's communicator
};

/// Rules, checked collectively at construction (every rank throws the same toru::error, naming
/// the rank and the box at fault; nothing is exchanged):
/// - n is the same on every rank, each axis >= 1;
/// - every box lies inside the grid (0 <= low, low + size <= n on each axis, size >= 0), its order
///   is a permutation of {0, 1, 2} (order[2] the contiguous axis) and its row_stride is 0 (packed)
///   or at least size[order[2]] (padded rows, as r2c layouts have);
/// - the in boxes of all ranks cover the grid exactly once (no overlap, no gap); the out boxes too.
/// A rank may own an empty box (a size of 0).
template <reshape_element T>
class reshape3d {
 public:
  using element_type = T;

  /// Collective over comm.
  reshape3d(MPI_Comm comm, std::array<std::int64_t, 3> n, box3d in, box3d out, reshape_options opts = {});
  ~reshape3d();
  reshape3d(reshape3d&&) noexcept;
  reshape3d& operator=(reshape3d&&) noexcept;

  /// This rank's boxes, with row_stride filled in.
  const box3d& inbox() const;
  const box3d& outbox() const;
  /// Elements of this rank's in and out arrays (padding included).
  std::int64_t in_size() const;
  std::int64_t out_size() const;

  /// Collective: reads this rank's in box from `in` and writes its out box into `out` (padding
  /// untouched). in and out must not overlap; either may be null where its box is empty.
  void execute(const T* in, T* out) const;

 private:
  std::unique_ptr<detail::reshape_impl> impl_;
};

}  // namespace toru::fft
