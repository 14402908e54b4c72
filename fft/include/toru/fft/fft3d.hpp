// SPDX-License-Identifier: BSD-3-Clause
// Parallel 3D FFTs of an n0 x n1 x n2 array (row-major: n2 fastest) distributed over an MPI
// communicator: complex-to-complex (fft3d) and real-to-complex / complex-to-real (fft3d_r2c).
//
//   toru::fft::fft3d<double> plan(MPI_COMM_WORLD, {n0, n1, n2});          // collective
//   std::vector<std::complex<double>> a(plan.alloc_size()), b(plan.alloc_size());
//   // fill a: element (i, j, k) of plan.inbox() lives at
//   //   ((i - low[0]) * size[1] + (j - low[1])) * size[2] + (k - low[2])
//   plan.forward(a.data(), b.data());                                     // collective
//   plan.backward(b.data(), a.data(), toru::fft::scale::full);            // a is back
//
// Decompositions: slab (axis 0 split over all ranks; one all-to-all with transposed output) and
// pencil (p0 x p1 grid; axes 0 and 1 split; two all-to-alls with transposed output), chosen
// automatically or forced by options3d. Sizes need not divide the rank counts (balanced blocks:
// the first n % p parts get one more); a decomposition in which some rank would get no points in
// some layout is refused when forced, and chosen automatically only when nothing better exists.
//
// Layouts. inbox() is where each rank's input lies (natural order: memory order axis 0, 1, 2).
// outbox() is where the forward output lies: natural order gives inbox() again; transposed order
// skips the transposes back and leaves the layout of the last local FFT:
//   slab, n1 >= ranks (host backend): memory [i1][i0][i2], axis 1 split over ranks
//           (FFTW_MPI_TRANSPOSED_OUT's layout: whole rows of axis 2 move, axis-0 FFTs run strided),
//   other slabs (n1 < ranks, or the cufft backend): memory [i1][i2][i0], axis 2 split over ranks,
//   pencil: memory [i2][i1][i0], axis 2 split over p1, axis 1 over p0.
// Read the layout from outbox() (or local_size_3d) rather than assuming one of these.
// backward() takes its input in outbox() and returns it in inbox() (FFTW_MPI_TRANSPOSED_IN).
//
// Sign convention: forward = exp(-2 pi i jk/n), backward = exp(+2 pi i jk/n), both unnormalized
// unless a scale is passed. Plans are immutable; forward/backward are const and collective (all
// ranks, same order). Thread safety: calls are collectives on the plan's communicator, so calls on
// one plan, or on plans built over the same communicator, must not run concurrently.
#pragma once

#include <mpi.h>

#include <array>
#include <complex>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "toru/core/request.hpp"
#include "toru/fft/backend.hpp"
#include "toru/fft/options.hpp"

namespace toru::fft {

namespace detail {
template <class T>
class plan3d;
}

/// What each rank holds, as fftw_mpi_local_size_3d tells: input and output boxes, and the number
/// of complex elements every buffer passed to a plan must hold (the largest intermediate layout).
struct local_layout {
  box3d in, out;
  std::int64_t alloc = 0;
  decomposition decomp = decomposition::slab;
  std::array<int, 2> grid{1, 1};
};

/// Not collective: the layout a plan with these arguments would have on `rank` of `nranks`
/// (device = true: a plan of a device backend, such as cufft, whose transposed slab layout differs).
local_layout local_size_3d(int nranks, int rank, std::array<std::int64_t, 3> n, const options3d& opts = {},
                           bool r2c = false, bool device = false);

/// Complex-to-complex 3D FFT plan.
template <precision T, backend B = fftw>
class fft3d {
  static_assert(backend_traits<B>::enabled, "this FFT backend is not enabled in this build (backend_traits::why)");

 public:
  using complex_type = std::complex<T>;

  /// Collective over comm. Validates collectively (sizes >= 1 and equal on all ranks, options,
  /// precision and transform kind equal, a forced grid possible) and throws the same toru::error
  /// on every rank otherwise. MPI_COMM_NULL or an intercommunicator throws errc::invalid_argument
  /// on the ranks that pass it (they cannot tell the others). forward/backward agree likewise on
  /// direction, scale and null buffers (one small allreduce per call).
  fft3d(MPI_Comm comm, std::array<std::int64_t, 3> n, options3d opts = {});
  /// Collective. The same transform between the caller's own boxes: in (this rank's part of the
  /// input, any memory order) and out (its part of the output), under reshape3d's rules (all ranks'
  /// boxes tile the grid; the same error on every rank otherwise). The plan runs in its own layout
  /// and one reshape each way moves the data (docs/fft.md, "Caller's boxes"). Host backends only.
  fft3d(MPI_Comm comm, std::array<std::int64_t, 3> n, box3d in, box3d out, options3d opts = {});
  ~fft3d();
  fft3d(fft3d&&) noexcept;
  fft3d& operator=(fft3d&&) noexcept;

  const box3d& inbox() const;
  const box3d& outbox() const;
  /// Complex elements each buffer passed as `in` (in place) or `out` must hold.
  std::int64_t alloc_size() const;
  /// Collective on the first call (later calls return the same pointer): a buffer of alloc_size()
  /// complex elements for this rank's complex side, owned by the plan. Passed as forward's out (or
  /// backward's in) on every rank, it lets the plan on one node write (read) every rank's output
  /// directly: natural order then makes two passes over the array instead of three, as FFTW's
  /// threaded transform does (docs/fft.md, "Shared output"). Any plan takes it, and any buffer
  /// still works; all ranks pass it or none (errc::mismatch otherwise). Host backends only.
  complex_type* shared_out();
  /// Bytes of caller workspace the ws overloads need.
  std::size_t workspace_size() const;
  decomposition decomp() const;
  std::array<int, 2> grid() const;
  /// How the plan runs its transposes, chosen from its strategy table (docs/fft.md, Strategy).
  std::string strategy() const;
  /// The names of every candidate of that table that applies to this plan (strategy() among them):
  /// each can be forced with TORU_FFT_STRATEGY, e.g. to time it against the choice.
  std::vector<std::string> candidates() const;
  /// Under FFTW_MEASURE (planner = effort::measure): the seconds the planner timed for each
  /// applicable candidate, the slowest rank's (finalists: the median of their run-off figures), in
  /// table order. Empty under ESTIMATE, for a plan with one candidate, and when the choice came
  /// from wisdom. For telling a planner's pick from a later benchmark's.
  std::vector<std::pair<std::string, double>> planner_seconds() const;

  /// Collective. in == out is in place; otherwise in is preserved. in holds inbox().extent()
  /// elements, out alloc_size(). Throws (on every rank) when a rank passes null buffers.
  void forward(const complex_type* in, complex_type* out, scale s = scale::none) const;
  void forward(const complex_type* in, complex_type* out, void* ws, scale s = scale::none) const;
  /// Collective. Input in outbox(), output in inbox().
  void backward(const complex_type* in, complex_type* out, scale s = scale::none) const;
  void backward(const complex_type* in, complex_type* out, void* ws, scale s = scale::none) const;
  /// Same, checking buffer sizes (collectively) first.
  void forward(std::span<const complex_type> in, std::span<complex_type> out, scale s = scale::none) const;
  void backward(std::span<const complex_type> in, std::span<complex_type> out, scale s = scale::none) const;
  /// Split phase (MPI-4 persistent-collective semantics): start_forward / start_backward begin the
  /// transform (same arguments as forward / backward) and return at once; wait() returns when it
  /// is done, throwing its error if it failed. Meanwhile the caller computes but touches neither
  /// buffer nor this plan (nor another plan on its communicator), and calls MPI itself only under
  /// MPI_THREAD_MULTIPLE. A second start before wait() is errc::invalid_argument. Below
  /// MPI_THREAD_SERIALIZED the transform runs inline in the start call.
  void start_forward(const complex_type* in, complex_type* out, scale s = scale::none) const;
  void start_backward(const complex_type* in, complex_type* out, scale s = scale::none) const;
  void wait() const;
  /// Persistent form (MPI-4's MPI_Alltoall_init; toru/core/request.hpp): collective, checks the
  /// arguments as forward / backward does (the same errors, on every rank) and binds them; each
  /// request::start() then runs the transform with no argument checks. The plan must outlive the
  /// request, and the request the caller's use of the buffers.
  request forward_init(const complex_type* in, complex_type* out, scale s = scale::none) const;
  request backward_init(const complex_type* in, complex_type* out, scale s = scale::none) const;

 private:
  std::unique_ptr<detail::plan3d<T>> impl_;
  mutable std::unique_ptr<toru::detail::split_phase> phase_;
};

/// Real-to-complex forward / complex-to-real backward 3D FFT plan. The complex side has
/// n0 x n1 x (n2/2+1) points (Hermitian symmetry). Real arrays are padded as in FFTW-MPI: each
/// row along axis 2 takes 2*(n2/2+1) reals (inbox().row_stride). The real buffer of backward()
/// must hold 2*alloc_size() reals, as the intermediate complex layouts pass through it.
template <precision T, backend B = fftw>
class fft3d_r2c {
  static_assert(backend_traits<B>::enabled, "this FFT backend is not enabled in this build");

 public:
  using complex_type = std::complex<T>;

  fft3d_r2c(MPI_Comm comm, std::array<std::int64_t, 3> n, options3d opts = {});
  /// Collective: between the caller's own boxes (see fft3d): in a box of the n0 x n1 x n2 real
  /// grid, out a box of the n0 x n1 x (n2/2+1) complex one.
  fft3d_r2c(MPI_Comm comm, std::array<std::int64_t, 3> n, box3d in, box3d out, options3d opts = {});
  ~fft3d_r2c();
  fft3d_r2c(fft3d_r2c&&) noexcept;
  fft3d_r2c& operator=(fft3d_r2c&&) noexcept;

  /// Real input box (size[2] = n2, row_stride = 2*(n2/2+1)).
  const box3d& inbox() const;
  /// Complex output box (size along axis 2 at most n2/2+1).
  const box3d& outbox() const;
  std::int64_t alloc_size() const;
  /// The complex side's buffer in node memory: see fft3d::shared_out (forward's out, backward's in).
  complex_type* shared_out();
  std::size_t workspace_size() const;
  decomposition decomp() const;
  std::array<int, 2> grid() const;
  /// How the plan runs its transposes, chosen from its strategy table (docs/fft.md, Strategy).
  std::string strategy() const;
  /// The names of every candidate of that table that applies to this plan (strategy() among them):
  /// each can be forced with TORU_FFT_STRATEGY, e.g. to time it against the choice.
  std::vector<std::string> candidates() const;
  /// Under FFTW_MEASURE (planner = effort::measure): the seconds the planner timed for each
  /// applicable candidate, the slowest rank's (finalists: the median of their run-off figures), in
  /// table order. Empty under ESTIMATE, for a plan with one candidate, and when the choice came
  /// from wisdom. For telling a planner's pick from a later benchmark's.
  std::vector<std::pair<std::string, double>> planner_seconds() const;

  /// Collective. in (reals) may alias out (in place); out holds alloc_size() complex elements.
  void forward(const T* in, complex_type* out, scale s = scale::none) const;
  void forward(const T* in, complex_type* out, void* ws, scale s = scale::none) const;
  /// Collective. Input in outbox(); out (2*alloc_size() reals) gets the padded real inbox(). The
  /// input is preserved unless in == out.
  void backward(const complex_type* in, T* out, scale s = scale::none) const;
  void backward(const complex_type* in, T* out, void* ws, scale s = scale::none) const;

  /// Split phase (MPI-4 persistent-collective semantics): start_forward / start_backward begin the
  /// transform (same arguments as forward / backward) and return at once; wait() returns when it
  /// is done, throwing its error if it failed. Meanwhile the caller computes but touches neither
  /// buffer nor this plan (nor another plan on its communicator), and calls MPI itself only under
  /// MPI_THREAD_MULTIPLE. A second start before wait() is errc::invalid_argument. Below
  /// MPI_THREAD_SERIALIZED the transform runs inline in the start call.
  void start_forward(const T* in, complex_type* out, scale s = scale::none) const;
  void start_backward(const complex_type* in, T* out, scale s = scale::none) const;
  void wait() const;
  /// Persistent form: see fft3d::forward_init.
  request forward_init(const T* in, complex_type* out, scale s = scale::none) const;
  request backward_init(const complex_type* in, T* out, scale s = scale::none) const;

 private:
  std::unique_ptr<detail::plan3d<T>> impl_;
  mutable std::unique_ptr<toru::detail::split_phase> phase_;
};

}  // namespace toru::fft
