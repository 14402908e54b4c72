// SPDX-License-Identifier: BSD-3-Clause
// toru::topology::cart — a communicator laid out on a torus, with its line and plane
// sub-communicators (the communicators the indirect all-to-all runs on).
//
// Rank numbering: comm() keeps the ranks of the communicator the cart was built from (it is a
// duplicate, MPI_Comm_dup), and layout() maps those ranks to coordinates. Only cart::create with
// reorder = true may renumber: there comm() is the communicator MPI_Cart_create returned, and
// layout() describes ITS ranks.
//
// Sub-communicators (all created by the collective constructor, owned by the cart):
//   line(a):  the ranks whose coordinates differ only along axis a; rank in line(a) == coordinate a.
//   plane(a): the ranks sharing coordinate a (the sub-torus of the other axes); rank in plane(a) ==
//             node index of the remaining coordinates (in axis order, lowest axis fastest).
//   sub(axes): the sub-torus spanned by `axes`, created on demand (collective).
//
// Construction and sub() are collective over the communicator; the accessors are const,
// thread-safe and free. Destruction frees the communicators (MPI_Comm_free), so destroy a cart
// before MPI_Finalize, on every rank.
//
//   toru::topology::cart c(MPI_COMM_WORLD, toru::topology::derive_mapping(MPI_COMM_WORLD));
//   MPI_Alltoall(..., c.line(c.layout().shape().longest_axis()));
#pragma once

#include <mpi.h>

#include <span>
#include <utility>
#include <vector>

#include "toru/topology/mapping.hpp"

namespace toru::topology {

/// Owns one MPI communicator (freed on destruction unless it is null or a predefined one).
class unique_comm {
 public:
  unique_comm() = default;
  explicit unique_comm(MPI_Comm comm) : comm_(comm) {}
  unique_comm(unique_comm&& o) noexcept : comm_(std::exchange(o.comm_, MPI_COMM_NULL)) {}
  unique_comm& operator=(unique_comm&& o) noexcept;
  unique_comm(const unique_comm&) = delete;
  unique_comm& operator=(const unique_comm&) = delete;
  ~unique_comm();
  MPI_Comm get() const { return comm_; }
  MPI_Comm release() { return std::exchange(comm_, MPI_COMM_NULL); }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
};

class cart {
 public:
  /// Collective over comm. Checks collectively that m.nranks() equals the size of comm and that
  /// every rank passed the same mapping (same error on all ranks otherwise).
  cart(MPI_Comm comm, const mapping& m);

  /// Collective. The MPI_Cart_create path: dims and periods from `shape` (MPI's last dimension is
  /// toru's axis 0, so that node order agrees), coordinates from MPI_Cart_coords. With reorder the
  /// MPI library may renumber ranks to match the machine. comm() is then the Cartesian communicator.
  static cart create(MPI_Comm comm, const torus& shape, bool reorder = true);

  cart(cart&&) noexcept = default;
  cart& operator=(cart&&) noexcept = default;
  cart(const cart&) = delete;
  cart& operator=(const cart&) = delete;
  ~cart() = default;

  MPI_Comm comm() const { return comm_.get(); }
  MPI_Comm line(int axis) const;
  MPI_Comm plane(int axis) const;
  /// Collective. The sub-torus spanned by `axes` (each once); its ranks are ordered by the node
  /// index of the sub-torus shape().sub(axes).
  unique_comm sub(std::span<const int> axes) const;

  const mapping& layout() const { return layout_; }
  const torus& shape() const { return layout_.shape(); }
  int rank() const { return rank_; }
  std::span<const int> coords() const { return layout_.coords(rank_); }

 private:
  cart(unique_comm comm, mapping m);
  unique_comm comm_;
  mapping layout_;
  int rank_ = 0;
  std::vector<unique_comm> lines_, planes_;
};

}  // namespace toru::topology
