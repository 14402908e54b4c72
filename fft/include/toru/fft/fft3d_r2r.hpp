// SPDX-License-Identifier: BSD-3-Clause
// toru::fft::fft3d_r2r: real-to-real 3D transforms, a DCT or DST of any FFTW type per axis
// (Poisson and Helmholtz with Neumann or Dirichlet walls), distributed over pencils.
//
//   using toru::fft::r2r_kind;
//   toru::fft::fft3d_r2r<double> plan(MPI_COMM_WORLD, {nx, ny, nz}, {r2r_kind::dct2, r2r_kind::dct2, r2r_kind::dst2});
//   std::vector<double> u(plan.alloc_size()), uh(plan.alloc_size());
//   plan.forward(u.data(), uh.data());                              // in plan.inbox(), out plan.outbox()
//   plan.backward(uh.data(), u.data(), toru::fft::scale::full);     // the inverse kinds: u again
#pragma once

#include <mpi.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string_view>

#include "toru/core/request.hpp"
#include "toru/fft/backend.hpp"
#include "toru/fft/options.hpp"

namespace toru::fft {

/// FFTW's real-to-real kinds (FFTW manual, "1d Real-even DFTs (DCTs)" and "Real-odd DFTs (DSTs)"):
/// dct1..dct4 = FFTW_REDFT00, 10, 01, 11; dst1..dst4 = FFTW_RODFT00, 10, 01, 11. Unnormalized as
/// FFTW's: a kind followed by its inverse (dct2 <-> dct3, dst2 <-> dst3; the others their own)
/// multiplies by the logical size 2(n-1) (dct1), 2(n+1) (dst1) or 2n, which scale::full removes.
enum class r2r_kind { dct1, dct2, dct3, dct4, dst1, dst2, dst3, dst4 };

std::string_view to_string(r2r_kind k) noexcept;
/// The kind that undoes k (up to the logical size).
r2r_kind inverse(r2r_kind k) noexcept;

namespace detail {
class r2r_plan;
}

/// Collective plans; the same agreement rules as fft3d (n, kinds and options equal on every rank,
/// the same error everywhere otherwise). Data: real, in toru's pencils (inbox(), axis 2 whole,
/// ranks on a p0 x p1 grid over axes 0 and 1); output in the same layout (order::natural) or in
/// x-pencils (order::transposed, one exchange fewer). Host backend (FFTW) only.
template <precision T>
class fft3d_r2r {
 public:
  using real_type = T;

  fft3d_r2r(MPI_Comm comm, std::array<std::int64_t, 3> n, std::array<r2r_kind, 3> kinds, options3d opts = {});
  ~fft3d_r2r();
  fft3d_r2r(fft3d_r2r&&) noexcept;
  fft3d_r2r& operator=(fft3d_r2r&&) noexcept;

  const box3d& inbox() const;
  const box3d& outbox() const;
  /// Reals each buffer passed as in or out must hold.
  std::int64_t alloc_size() const;
  std::array<int, 2> grid() const;
  const std::array<r2r_kind, 3>& kinds() const;

  /// Collective: the kinds along each axis. in == out is in place; otherwise in is preserved.
  void forward(const T* in, T* out, scale s = scale::none) const;
  /// Collective: the inverse kinds, from outbox() to inbox(). With scale::full, backward(forward(x)) = x.
  void backward(const T* in, T* out, scale s = scale::none) const;
  /// Persistent forms (toru/core/request.hpp), as fft3d::forward_init: collective, the arguments
  /// checked once here (the same errors, on every rank); each start() runs with no checks. The plan
  /// must outlive the requests.
  request forward_init(const T* in, T* out, scale s = scale::none) const;
  request backward_init(const T* in, T* out, scale s = scale::none) const;

 private:
  std::unique_ptr<detail::r2r_plan> impl_;
};

}  // namespace toru::fft
