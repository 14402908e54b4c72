// SPDX-License-Identifier: BSD-3-Clause
#include "pencil_pipeline.hpp"

#include <algorithm>

#include "common.hpp"
#include "pencils.hpp"
#include "toru/core/agreement.hpp"
#include "toru/core/mpi.hpp"

namespace toru::fft::detail {

pencil_pipeline::pencil_pipeline(MPI_Comm comm, std::array<std::int64_t, 3> n, std::array<int, 2> grid, bool natural,
                                 const reshape_options& ro, MPI_Datatype type, std::size_t elem_bytes, int element)
    : natural_(natural) {
  int me = 0;
  check_mpi(MPI_Comm_rank(comm, &me), "MPI_Comm_rank");
  const int r0 = me / grid[1], r1 = me % grid[1];
  for (int a = 0; a < 3; ++a) pencils_[static_cast<std::size_t>(a)] = detail::pencil(n, a, grid[0], grid[1], r0, r1);
  alloc_ = std::max({pencils_[0].extent(), pencils_[1].extent(), pencils_[2].extent(), std::int64_t{1}});
  auto reshape = [&](int from, int to) {
    return std::make_unique<reshape_impl>(comm, n, pencil(from), pencil(to), ro, type, elem_bytes, element);
  };
  zy_ = reshape(2, 1);
  yx_ = reshape(1, 0);
  xy_ = reshape(0, 1);
  yz_ = reshape(1, 2);
  if (natural_) {
    xz_ = reshape(0, 2);
    zx_ = reshape(2, 0);
  }
  // One rank short of memory fails on every rank.
  validate_collectively(comm, [&] {
    const std::size_t bytes = checked_bytes(alloc_, elem_bytes, "work buffers");
    a_ = aligned_buffer(bytes);
    b_ = aligned_buffer(bytes);
  });
}

// The reshapes run unchecked: they move between the work buffers and the plan's in and out,
// which the plan agreed on before calling.
void pencil_pipeline::forward(const void* in, void* out, const lines_fn& lines) const {
  void* a = a_.get();
  void* b = b_.get();
  lines(2, in, a);
  zy_->move(a, b);
  lines(1, b, b);
  yx_->move(b, a);
  if (natural_) {
    lines(0, a, a);
    xz_->move(a, out);
  } else {
    lines(0, a, out);
  }
}

void pencil_pipeline::backward(const void* in, void* out, const lines_fn& lines) const {
  void* a = a_.get();
  void* b = b_.get();
  if (natural_) {
    zx_->move(in, a);
    lines(0, a, a);
  } else {
    lines(0, in, a);
  }
  xy_->move(a, b);
  lines(1, b, b);
  yz_->move(b, a);
  lines(2, a, out);
}

}  // namespace toru::fft::detail
