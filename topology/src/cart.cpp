// SPDX-License-Identifier: BSD-3-Clause
#include "toru/topology/cart.hpp"

#include <algorithm>
#include <functional>

#include <fmt/format.h>

#include "toru/core/error.hpp"
#include "toru/core/mpi.hpp"

namespace toru::topology {
namespace {

void free_comm(MPI_Comm& c) noexcept {
  if (c == MPI_COMM_NULL || c == MPI_COMM_WORLD || c == MPI_COMM_SELF) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Comm_free(&c);
  c = MPI_COMM_NULL;
}

std::uint64_t fingerprint(const mapping& m) {
  // FNV-1a over the shape's spec and the node of every rank: equal mappings, equal fingerprints.
  std::uint64_t h = 1469598103934665603ull;
  auto mix = [&](std::uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= (v >> (8 * i)) & 0xff;
      h *= 1099511628211ull;
    }
  };
  for (char c : m.shape().to_string()) mix(static_cast<unsigned char>(c));
  for (int r = 0; r < m.nranks(); ++r) mix(static_cast<std::uint64_t>(m.node_of(r)));
  return h;
}

void check_mapping_fits(MPI_Comm comm, const mapping& m) {
  const int size = mpi_size(comm);
  validate_collectively(comm, [&] {
    if (m.nranks() != size)
      throw error(errc::invalid_argument,
                  fmt::format("cart mapping: expected a torus of {} nodes (the communicator's size), got {} nodes ({})",
                              size, m.nranks(), m.shape().to_string()));
  });
  expect_same_on_all_ranks(comm, static_cast<std::int64_t>(fingerprint(m) >> 1), "cart mapping (shape and layout)");
}

unique_comm split(MPI_Comm comm, int color, int key) {
  MPI_Comm out = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split(comm, color, key, &out), "MPI_Comm_split");
  return unique_comm(out);
}

unique_comm checked_dup(MPI_Comm comm, const mapping& m) {
  check_mapping_fits(comm, m);
  MPI_Comm out = MPI_COMM_NULL;
  check_mpi(MPI_Comm_dup(comm, &out), "MPI_Comm_dup");
  MPI_Comm_set_errhandler(out, MPI_ERRORS_RETURN);
  return unique_comm(out);
}

}  // namespace

unique_comm& unique_comm::operator=(unique_comm&& o) noexcept {
  if (this != &o) {
    free_comm(comm_);
    comm_ = std::exchange(o.comm_, MPI_COMM_NULL);
  }
  return *this;
}

unique_comm::~unique_comm() { free_comm(comm_); }

cart::cart(MPI_Comm comm, const mapping& m) : cart(checked_dup(comm, m), m) {}

cart::cart(unique_comm comm, mapping m) : comm_(std::move(comm)), layout_(std::move(m)) {
  rank_ = mpi_rank(comm_.get());
  const torus& t = layout_.shape();
  const auto c = layout_.coords(rank_);
  const std::int64_t node = layout_.node_of(rank_);
  std::int64_t stride = 1;
  for (int a = 0; a < t.ndims(); ++a) {
    const int ca = c[static_cast<std::size_t>(a)];
    // Line: all ranks equal outside axis a; the node with coordinate a zeroed names it.
    lines_.push_back(split(comm_.get(), static_cast<int>(node - ca * stride), ca));
    // Plane: all ranks with the same coordinate a, in node order of the other coordinates.
    planes_.push_back(split(comm_.get(), ca, static_cast<int>(node)));
    stride *= t[a].extent;
  }
}

cart cart::create(MPI_Comm comm, const torus& shape, bool reorder) {
  const int size = mpi_size(comm);
  validate_collectively(comm, [&] {
    if (shape.size() != size)
      throw error(errc::invalid_argument,
                  fmt::format("cart::create torus {}: expected the product of extents to equal the {} ranks of the "
                              "communicator, got {} nodes",
                              shape.to_string(), size, shape.size()));
  });
  const int nd = shape.ndims();
  // MPI numbers Cartesian ranks row-major (last dimension fastest), toru node indices have axis 0
  // fastest, so MPI's dimension k is toru's axis nd-1-k.
  std::vector<int> dims(static_cast<std::size_t>(nd)), periods(static_cast<std::size_t>(nd));
  for (int k = 0; k < nd; ++k) {
    const axis& a = shape[nd - 1 - k];
    dims[static_cast<std::size_t>(k)] = a.extent;
    periods[static_cast<std::size_t>(k)] = a.wrap || a.switched ? 1 : 0;
  }
  MPI_Comm cart_comm = MPI_COMM_NULL;
  check_mpi(MPI_Cart_create(comm, nd, dims.data(), periods.data(), reorder ? 1 : 0, &cart_comm), "MPI_Cart_create");
  unique_comm owned(cart_comm);
  MPI_Comm_set_errhandler(cart_comm, MPI_ERRORS_RETURN);
  const int rank = mpi_rank(cart_comm);
  std::vector<int> mpi_coords(static_cast<std::size_t>(nd)), mine(static_cast<std::size_t>(nd));
  check_mpi(MPI_Cart_coords(cart_comm, rank, nd, mpi_coords.data()), "MPI_Cart_coords");
  for (int k = 0; k < nd; ++k) mine[static_cast<std::size_t>(nd - 1 - k)] = mpi_coords[static_cast<std::size_t>(k)];
  std::vector<int> all(static_cast<std::size_t>(nd) * static_cast<std::size_t>(size));
  check_mpi(MPI_Allgather(mine.data(), nd, MPI_INT, all.data(), nd, MPI_INT, cart_comm), "MPI_Allgather");
  std::vector<std::vector<int>> coords(static_cast<std::size_t>(size));
  for (int r = 0; r < size; ++r)
    coords[static_cast<std::size_t>(r)].assign(all.begin() + static_cast<std::ptrdiff_t>(r) * nd,
                                               all.begin() + static_cast<std::ptrdiff_t>(r + 1) * nd);
  return cart(std::move(owned), mapping(shape, std::move(coords)));
}

MPI_Comm cart::line(int axis) const {
  expect(axis >= 0 && axis < shape().ndims(), "cart::line axis", fmt::format("0..{}", shape().ndims() - 1),
         std::to_string(axis));
  return lines_[static_cast<std::size_t>(axis)].get();
}

MPI_Comm cart::plane(int axis) const {
  expect(axis >= 0 && axis < shape().ndims(), "cart::plane axis", fmt::format("0..{}", shape().ndims() - 1),
         std::to_string(axis));
  return planes_[static_cast<std::size_t>(axis)].get();
}

unique_comm cart::sub(std::span<const int> axes) const {
  const torus& t = shape();
  torus s = t.sub(axes);  // validates the axes (same on every rank, so every rank throws alike)
  const auto c = coords();
  std::vector<int> outside(c.begin(), c.end()), inside;
  for (int a : axes) {
    outside[static_cast<std::size_t>(a)] = 0;
    inside.push_back(c[static_cast<std::size_t>(a)]);
  }
  return split(comm(), static_cast<int>(t.node_unchecked(outside)), static_cast<int>(s.node_unchecked(inside)));
}

}  // namespace toru::topology
