// SPDX-License-Identifier: BSD-3-Clause
// Options and layout descriptions shared by the 3D and 1D plans.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "toru/comm/alltoall_plan.hpp"

namespace toru::fft {

/// How the 3D array is split over ranks.
enum class decomposition {
  automatic,  // slab when every rank gets work in both slab layouts, else the squarest pencil grid
  slab,       // 1D process grid: axis 0 split over all ranks
  pencil,     // 2D process grid p0 x p1: axes 0 and 1 split
};

/// Order of the forward output (and of the backward input).
enum class order {
  natural,     // same distribution and memory order as the input (FFTW's default)
  transposed,  // the layout of the last local FFT, skipping the transposes back (3D: like
               // FFTW_MPI_TRANSPOSED_OUT; 1D: like FFTW_MPI_SCRAMBLED_OUT). See the box queries.
};

/// FFTW planner effort for the local transforms (FFTW_ESTIMATE or FFTW_MEASURE).
enum class effort { estimate, measure };

/// How the transposes move data (see docs/fft.md, "Strategy").
enum class exchange_path {
  automatic,  // chosen by the plan's strategy table (cost model; timed with effort::measure)
  window,     // node-local shared-memory window, one copy (only when all ranks share one node)
  alltoall,   // MPI_Alltoall(v/w) or a toru::comm algorithm
};

/// r2c plans: how the real side's rows along axis 2 are stored.
enum class real_rows {
  padded,  // 2 * (n2/2 + 1) reals per row, as FFTW-MPI (in-place capable; the real buffer of
           // backward() holds 2 * alloc_size() reals)
  packed,  // n2 reals per row, as a serial code's or NumPy's arrays: the plan reads and writes
           // them as they are on the one-node direct window, elsewhere through one local copy
};

/// Scaling applied to a result: none, 1/N, or 1/sqrt(N) (N = total number of points).
enum class scale { none, full, symmetric };

std::string_view to_string(decomposition d) noexcept;
std::string_view to_string(order o) noexcept;
std::string_view to_string(exchange_path p) noexcept;

/// A rank's part of a 3D array. Axis a covers global indices [low[a], low[a] + size[a]).
/// In memory the axes are nested as order[0] (slowest) .. order[2] (fastest); consecutive rows
/// along the fastest axis are row_stride elements apart (row_stride > size[order[2]] only for
/// the padded real arrays of r2c plans, which hold 2*(n2/2+1) reals per row, as FFTW-MPI).
struct box3d {
  std::array<std::int64_t, 3> low{};
  std::array<std::int64_t, 3> size{};
  std::array<int, 3> order{0, 1, 2};
  std::int64_t row_stride = 0;

  /// Number of points of the box (without padding).
  std::int64_t count() const { return size[0] * size[1] * size[2]; }
  /// Elements the box occupies in memory (with padding).
  std::int64_t extent() const { return size[order[0]] * size[order[1]] * row_stride; }
};

/// Calls f(global index {i0, i1, i2}, offset in the box's memory) for every point of b, in memory
/// order: the loop every caller of a distributed plan writes to fill its input or read its output.
///   toru::fft::for_each_point(plan.inbox(), [&](auto g, std::int64_t i) { a[i] = value(g); });
template <class F>
void for_each_point(const box3d& b, F&& f) {
  const auto o = b.order;
  std::array<std::int64_t, 3> g{};
  for (std::int64_t x = 0; x < b.size[o[0]]; ++x)
    for (std::int64_t y = 0; y < b.size[o[1]]; ++y)
      for (std::int64_t z = 0; z < b.size[o[2]]; ++z) {
        g[o[0]] = b.low[o[0]] + x;
        g[o[1]] = b.low[o[1]] + y;
        g[o[2]] = b.low[o[2]] + z;
        f(g, (x * b.size[o[1]] + y) * b.row_stride + z);
      }
}

/// Options of a 3D plan (c2c or r2c). Use designated initializers:
///   toru::fft::options3d{.decomp = toru::fft::decomposition::pencil, .output = toru::fft::order::transposed}
struct options3d {
  decomposition decomp = decomposition::automatic;
  std::array<int, 2> grid{0, 0};  // pencil grid p0 x p1 (p0 * p1 = ranks); {0, 0} = choose
  order output = order::natural;
  effort planner = effort::estimate;
  bool overlap = true;  // allow local FFTs of received chunks while later chunks are in flight;
                        // the plan uses it only where its strategy table says it pays (false: never)
  int chunks = 0;       // chunks per exchange when overlapping; 0 = chosen (see docs/fft.md)
  exchange_path path = exchange_path::automatic;
  comm::alltoall_algorithm algorithm = comm::alltoall_algorithm::automatic;  // for every transpose
  real_rows rows = real_rows::padded;                                        // r2c plans only (c2c plans ignore it)
  /// The communicator the plan exchanges on: its torus and mapping (and threads). With a torus, the
  /// pencil row and column communicators get the sub-tori their ranks occupy on it. Empty torus:
  /// TORU_TORUS when set (it describes MPI_COMM_WORLD: the plan's communicator and the pencil rows and
  /// columns get the sub-tori they occupy on it), else derived. Equal on all ranks.
  comm::communicator_options comm{};
};

/// Options of a distributed 1D plan of N = n1 * n2 points.
struct options1d {
  std::int64_t n1 = 0;  // first factor; 0 = the divisor of N closest to sqrt(N)
  order output = order::natural;
  effort planner = effort::estimate;
  bool overlap = true;  // allowed, as options3d::overlap
  int chunks = 0;
  exchange_path path = exchange_path::automatic;
  comm::alltoall_algorithm algorithm = comm::alltoall_algorithm::automatic;
  comm::communicator_options comm{};  // torus, mapping and threads of the plan's communicator (see options3d)
};

}  // namespace toru::fft
