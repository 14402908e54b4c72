// SPDX-License-Identifier: BSD-3-Clause
// The batched plans' fast path: fft3d's own plan (plan3d, with the batched plan's options: its
// decomposition and strategy, or the forced pencil grid), run once per field. plan3d's local
// FFTs are unit-stride and its transposes take the node-window path on one node; the reshape
// pipeline's guru FFTs over interleaved fields (stride howmany) and its reshape copies measured
// 1.8-4.2x slower than howmany single transforms (docs/results.md), more than the exchanges it
// saves. Interleaved fields are split into a planar staging copy on the way in and interleaved
// again on the way out; planar fields go straight to plan3d.
#pragma once

#include <mpi.h>

#include <array>
#include <cstdint>
#include <memory>

#include "plan3d.hpp"
#include "toru/fft/options.hpp"

namespace toru::fft::detail {

template <class T>
class field_loop {
 public:
  /// Whether plan3d takes these options for n: always, unless they force a pencil grid that
  /// leaves a rank without points in some layout. n and options are agreed, so every rank answers
  /// the same.
  static bool applies(std::array<std::int64_t, 3> n, bool r2c, const options3d& opts);

  /// Collective, after the batched plan's agreement (n, howmany, layout, options equal everywhere).
  field_loop(MPI_Comm comm, std::array<std::int64_t, 3> n, bool r2c, int howmany, bool planar, const options3d& opts);

  /// One field's boxes (the real box padded, as fft3d_r2c's, for r2c).
  const box3d& inbox() const { return plan_->inbox(); }
  const box3d& outbox() const { return plan_->outbox(); }
  /// Complex elements plan3d's buffers hold, one field.
  std::int64_t alloc() const { return plan_->alloc_size(); }
  /// plan3d's grid: {P, 1} for a slab.
  std::array<int, 2> grid() const { return {plan_->layout().p0, plan_->layout().p1}; }

  /// Collective; the caller checked the buffers and scale on every rank. out holds howmany *
  /// alloc() complex elements. c2c: complex in and out; r2c: reals in (forward) or out (backward).
  void execute(bool forward, const void* in, void* out, scale s) const;

 private:
  std::unique_ptr<plan3d<T>> plan_;
  bool r2c_, planar_;
  int F_;
  aligned_buffer stage_, work_;  // the planar copy of the input (F fields), one field's output
};

}  // namespace toru::fft::detail
