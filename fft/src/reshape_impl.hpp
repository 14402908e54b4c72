// SPDX-License-Identifier: BSD-3-Clause
// The engine of reshape3d for any element (a size in bytes and its MPI datatype), so that plans
// moving several values per point (batched fields) reshape them as one element.
#pragma once

#include <mpi.h>

#include <array>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "comm_cache.hpp"
#include "toru/core/mpi.hpp"
#include "toru/fft/reshape3d.hpp"

namespace toru::fft::detail {

class reshape_impl {
 public:
  /// Collective. element: an id of the element type agreed across ranks (the C API lets ranks
  /// differ); type: its MPI datatype of elem_bytes bytes, committed, alive while the reshape is.
  reshape_impl(MPI_Comm comm, std::array<std::int64_t, 3> n, box3d in, box3d out, const reshape_options& opts,
               MPI_Datatype type, std::size_t elem_bytes, int element);

  const box3d& inbox() const { return in_; }
  const box3d& outbox() const { return out_; }
  /// Collective; agrees on the buffers (null, overlapping) first.
  void execute(const void* in, void* out) const;
  /// Collective, for callers whose buffers are known good (a plan's own work buffers, or the
  /// caller's, already agreed on by the plan): no agreement of its own, one synchronisation less.
  void move(const void* in, void* out) const;

 private:
  std::size_t eb_;
  int me_ = 0;
  box3d in_, out_;
  std::vector<box3d> ins_, outs_;
  std::vector<std::size_t> send_displs_, recv_displs_;
  mutable std::vector<char> send_, recv_;
  comm_ptr comm_;
  mpi_comm_ptr agree_;  // where execute agrees (comm_cache.hpp: agreement_comm)
  std::unique_ptr<comm::alltoallv_plan> exchange_;
};

// The C API's toru_fft_element numbering of reshape3d's element types.
template <class T>
constexpr int element_index() {
  if constexpr (std::is_same_v<T, double>) return 0;
  if constexpr (std::is_same_v<T, float>) return 1;
  if constexpr (std::is_same_v<T, std::complex<double>>) return 2;
  return 3;
}

/// reshape3d<T>'s engine, for plans that agree on their buffers themselves and then move().
template <reshape_element T>
std::unique_ptr<reshape_impl> make_reshape(MPI_Comm comm, std::array<std::int64_t, 3> n, box3d in, box3d out,
                                           const reshape_options& opts) {
  return std::make_unique<reshape_impl>(comm, n, in, out, opts, mpi_type<T>(), sizeof(T), element_index<T>());
}

}  // namespace toru::fft::detail
