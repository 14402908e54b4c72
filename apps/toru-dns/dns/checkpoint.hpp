// SPDX-License-Identifier: BSD-3-Clause
// Checkpoints: the spectral velocity in global natural order, so any rank count and any
// decomposition can read what any other wrote.
//
// File layout (little-endian, as the machine writes doubles):
//   bytes [0, 4096)     header: one JSON object, padded with spaces and ended by '\n'
//                       {"magic": "toru-dns-checkpoint", "version": 1, "n", "t", "step", "dt",
//                        "re", "nu", "scheme", "forcing", "layout", "data_offset", "data_bytes",
//                        "digest"}
//   bytes [4096, ...)   3 components (x, y, z), each n x n x (n/2+1) complex doubles, row-major
//                       over (k_x index, k_y index, k_z index): u_hat = FFT(u)/n^3, FFT index order.
// The digest (hex) is spectral_grid::digest of the field, checked on reading: a truncated,
// corrupted or foreign file is refused. Writes go to a temporary name and are renamed when
// complete, so a crash never leaves a half-written checkpoint under the final name.
#pragma once

#include <cstdint>
#include <string>

#include "dns/spectral.hpp"

namespace toru::dns {

struct checkpoint_header {
  std::int64_t n = 0;
  double t = 0;
  std::int64_t step = 0;
  double dt = 0;  // the last step's dt
  double re = 0, nu = 0, forcing = 0;
  std::string scheme;
  std::uint64_t digest = 0;
};

inline constexpr std::int64_t checkpoint_header_bytes = 4096;
inline constexpr int checkpoint_version = 1;

/// Collective. Writes u to path (via path + ".tmp" and a rename). Throws on every rank on failure.
void write_checkpoint(const spectral_grid& grid, const vector_field& u, checkpoint_header h, const std::string& path);

/// Collective, not changing u unless it returns: reads and checks the header (magic, version, n
/// against grid.n(), file size), then the field, then its digest. Throws toru::error(errc::io or
/// errc::mismatch) with the same message on every rank for a missing, foreign, truncated or
/// corrupted file, or one of another grid size.
checkpoint_header read_checkpoint(const spectral_grid& grid, vector_field& u, const std::string& path);

/// Collective. Only the header, after the same checks (expect_n = 0: any n): to learn n before
/// building a solver.
checkpoint_header peek_checkpoint(MPI_Comm comm, const std::string& path, std::int64_t expect_n = 0);

}  // namespace toru::dns
