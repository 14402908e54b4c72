// SPDX-License-Identifier: BSD-3-Clause
// The reshape-based 3D plans' common path (fft3d_r2r, fft3d_mixed, fft3d_batch): three pencil
// layouts, axis 2, 1 and 0 whole and contiguous in turn, moved between by reshapes of one element
// per point (a real, a complex, or a point's batched fields), and the line transforms along the
// whole axis in each. The plans supply the line transforms; the order of steps and the buffers are
// here.
//
//   forward:  lines(2) in -> a, reshape z->y, lines(1), reshape y->x, lines(0),
//             then (natural output) reshape x->z into out, or (transposed) lines(0) a -> out
//   backward: the same in reverse.
#pragma once

#include <mpi.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "plan3d.hpp"
#include "reshape_impl.hpp"
#include "toru/fft/options.hpp"

namespace toru::fft::detail {

class pencil_pipeline {
 public:
  /// Transforms every line along `axis` of that axis' pencil, from `in` to `out` (equal: in place).
  using lines_fn = std::function<void(int axis, const void* in, void* out)>;

  /// Collective (every rank the same arguments, agreed by the caller; the work buffers' allocation
  /// is agreed here). type: the element's committed MPI datatype of elem_bytes bytes, alive while
  /// this is; element: its id, the same on every rank.
  pencil_pipeline(MPI_Comm comm, std::array<std::int64_t, 3> n, std::array<int, 2> grid, bool natural,
                  const reshape_options& ro, MPI_Datatype type, std::size_t elem_bytes, int element);

  /// This rank's pencil with `axis` whole.
  const box3d& pencil(int axis) const { return pencils_[static_cast<std::size_t>(axis)]; }
  const box3d& in_box() const { return pencils_[2]; }
  const box3d& out_box() const { return natural_ ? pencils_[2] : pencils_[0]; }
  /// Elements each buffer (the work buffers, the caller's in and out) holds.
  std::int64_t alloc() const { return alloc_; }
  /// The work buffers, for planning the line transforms on them.
  void* buffer_a() const { return a_.get(); }
  void* buffer_b() const { return b_.get(); }

  /// Collective. in == out is in place; otherwise in is preserved.
  void forward(const void* in, void* out, const lines_fn& lines) const;
  void backward(const void* in, void* out, const lines_fn& lines) const;

 private:
  bool natural_ = true;
  std::array<box3d, 3> pencils_;
  std::int64_t alloc_ = 1;
  std::unique_ptr<reshape_impl> zy_, yx_, xy_, yz_, xz_, zx_;
  aligned_buffer a_, b_;
};

}  // namespace toru::fft::detail
