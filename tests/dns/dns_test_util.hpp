// SPDX-License-Identifier: BSD-3-Clause
// Helpers shared by the DNS tests.
#pragma once

#include <mpi.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "dns/solver.hpp"

namespace toru::dns::test {

inline int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

/// Collective over MPI_COMM_WORLD: a fresh directory under /tmp, the same path on every rank.
inline std::string temp_dir() {
  std::string path(256, '\0');
  if (world_rank() == 0) {
    char tmpl[] = "/tmp/toru-dns-test-XXXXXX";
    const char* d = mkdtemp(tmpl);
    std::strncpy(path.data(), d ? d : "", 255);
  }
  MPI_Bcast(path.data(), 256, MPI_CHAR, 0, MPI_COMM_WORLD);
  return path.c_str();
}

/// The configurations every rank-count test runs: toru with each decomposition and FFTW-MPI,
/// vector fields one component at a time (the default) and batched.
struct fft_case {
  std::string name;
  transform_options opts;
};
inline std::vector<fft_case> fft_cases() {
  return {{"toru-auto", {fft_backend::toru, fft::decomposition::automatic}},
          {"toru-slab", {fft_backend::toru, fft::decomposition::slab}},
          {"toru-pencil", {fft_backend::toru, fft::decomposition::pencil}},
          {"fftw-mpi", {fft_backend::fftw_mpi, fft::decomposition::slab}},
          {"toru-auto-batched", {fft_backend::toru, fft::decomposition::automatic, true}},
          {"toru-pencil-batched", {fft_backend::toru, fft::decomposition::pencil, true}},
          {"fftw-mpi-batched", {fft_backend::fftw_mpi, fft::decomposition::slab, true}}};
}

/// Collective over the grid's communicator: the whole field in global natural order
/// ([component][i0][i1][i2], n x n x (n/2+1) per component) on every rank.
inline std::vector<cpx> gather_natural(const spectral_grid& grid, const vector_field& u) {
  const std::int64_t n = grid.n(), nh = n / 2 + 1;
  std::vector<cpx> local(static_cast<std::size_t>(3 * n * n * nh)), global(local.size());
  for (int a = 0; a < 3; ++a)
    for_box(grid.spec(), [&](const std::array<std::int64_t, 3>& g, std::int64_t at) {
      local[static_cast<std::size_t>(((a * n + g[0]) * n + g[1]) * nh + g[2])] = u[a][static_cast<std::size_t>(at)];
    });
  MPI_Allreduce(local.data(), global.data(), static_cast<int>(local.size()), MPI_C_DOUBLE_COMPLEX, MPI_SUM,
                grid.comm());
  return global;
}

/// max |a - b| / max |b| over the whole field.
inline double rel_diff(const std::vector<cpx>& a, const std::vector<cpx>& b) {
  double d = 0, m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    d = std::max(d, std::abs(a[i] - b[i]));
    m = std::max(m, std::abs(b[i]));
  }
  return m > 0 ? d / m : d;
}

}  // namespace toru::dns::test
