// A plane of the velocity for watching a run (toru-dns --stream-*): u_i(x, y, z = 0) on the n x n
// grid, computed from the spectral field without a 3-D inverse transform. Summing u_hat over k_z
// with the Hermitian weights (1 on k_z = 0 and n/2, 2 between) gives the 2-D spectrum of the
// plane z = 0; one 2-D inverse FFT on the root turns it into the plane. Cost per call: one pass
// over the local modes, an MPI_Reduce of n^2 complex values and a serial n^2 FFT on the root.
#pragma once

#include <mpi.h>

#include <vector>

#include "dns/spectral.hpp"

namespace toru::dns {

/// Collective. Returns the n x n plane (row = x index, column = y index) of the spectral scalar
/// u_hat at z = 0 on `root` (empty elsewhere).
std::vector<float> plane_z0(const spectral_grid& grid, const scalar_field& u_hat, int root);

}  // namespace toru::dns
