// SPDX-License-Identifier: BSD-3-Clause
// A plane of the velocity for watching a run (toru-dns --stream-*): u_i(x, y, z = 0) on the n x n
// grid, computed from the spectral field without a 3-D inverse transform. Summing u_hat over k_z
// with the Hermitian weights (1 on k_z = 0 and n/2, 2 between) gives the 2-D spectrum of the
// plane z = 0; one 2-D inverse FFT on the root turns it into the plane. Cost per call: one pass
// over the local modes, an MPI_Reduce of n^2 complex values and a serial n^2 FFT on the root.
#pragma once

#include <mpi.h>

#include <fftw3.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "dns/spectral.hpp"

namespace toru::dns {

/// Collective. Returns the n x n plane (row = x index, column = y index) of the spectral scalar
/// u_hat at z = 0 on `root` (empty elsewhere).
std::vector<float> plane_z0(const spectral_grid& grid, const scalar_field& u_hat, int root);

/// What toru-dns streams each streamed step — the plane u_x(z = 0) and the energy spectrum E(k) —
/// reduced to `root` off the step's critical path: start() computes this rank's share of both and
/// starts one MPI_Ireduce; collect() completes it (at the next streamed step it has long finished,
/// progressed by the solver's own MPI calls) and returns the frames on the root, the plane
/// inverted with a 2-D FFT planned once. The frames are published one streamed step late, with
/// their own step and time. Collective: every rank calls start() and collect() in the same order.
class slice_tap {
 public:
  slice_tap(const spectral_grid& grid, int root);
  ~slice_tap();
  slice_tap(const slice_tap&) = delete;
  slice_tap& operator=(const slice_tap&) = delete;

  struct frames {
    std::int64_t step = 0;
    double t = 0;
    std::vector<float> plane;      // n x n, row = x index (root only)
    std::vector<double> spectrum;  // shells as spectral_grid::spectrum (root only)
  };
  /// Starts the reduction of u's plane and spectrum. A previous one must have been collected.
  void start(const vector_field& u, std::int64_t step, double t);
  bool pending() const { return pending_; }
  /// Completes the pending reduction; the frames on the root, empty vectors elsewhere; nullopt if
  /// none is pending.
  std::optional<frames> collect();

 private:
  const spectral_grid& grid_;
  int root_;
  bool is_root_, pending_ = false;
  std::size_t nn_, shells_;
  std::vector<double> send_, recv_;  // [plane as 2 n^2 doubles | spectrum shells]
  std::vector<double> bins_;         // two interleaved copies of the shells (see start())
  std::vector<cpx> work_;
  // The local modes, found once, as the box's contiguous rows: where each row starts in memory,
  // its plane cell and how the cell moves along the row (0 when the row runs along k_z), and per
  // mode its shell and Hermitian weight (1 or 2) in row order.
  struct row {
    std::uint32_t offset, count, cell, cell_step;
  };
  std::vector<row> rows_;
  std::vector<std::uint16_t> shell_;
  std::vector<std::uint8_t> weight_;
  fftw_plan plan_ = nullptr;
  MPI_Request req_ = MPI_REQUEST_NULL;
  std::int64_t step_ = 0;
  double t_ = 0;
};

}  // namespace toru::dns
