// SPDX-License-Identifier: BSD-3-Clause
// toru's FFT behind the solver's transform interface: fft3d_r2c (vector fields one component at a
// time; the default) or fft3d_batch_r2c (vector fields in one exchange per transpose).
#include <cstddef>
#include <vector>

#include "dns/transform.hpp"
#include "toru/core/mpi.hpp"
#include "toru/fft/fft3d.hpp"
#include "toru/fft/fft3d_batch.hpp"

namespace toru::dns {
namespace {

class toru_transform final : public transform {
 public:
  toru_transform(MPI_Comm comm, std::int64_t n, fft::decomposition decomp)
      : plan_(comm, {n, n, n}, fft::options3d{.decomp = decomp, .output = fft::order::transposed}),
        ws_(plan_.workspace_size()) {}

  const fft::box3d& real_box() const override { return plan_.inbox(); }
  const fft::box3d& spec_box() const override { return plan_.outbox(); }
  std::int64_t alloc() const override { return plan_.alloc_size(); }
  void forward(double* in, cpx* out) const override { plan_.forward(in, out, ws_.data()); }
  void backward(cpx* in, double* out) const override { plan_.backward(in, out, ws_.data()); }
  std::string backend_name() const override { return "toru"; }
  fft::decomposition decomp() const override { return plan_.decomp(); }
  std::array<int, 2> grid() const override { return plan_.grid(); }

 private:
  fft::fft3d_r2c<double> plan_;
  // The plan's scratch, reused by every call (calls on one plan never run concurrently).
  mutable std::vector<std::byte> ws_;
};

// The batched plans run on pencils; a "slab" is the 1 x P grid (axis 1 split over all ranks, then
// axis 2: one exchange, the reshape y -> x stays on each rank), taken automatically when every rank
// gets work in both layouts, as fft3d_r2c's automatic slab.
fft::options3d batch_options(MPI_Comm comm, std::int64_t n, fft::decomposition decomp) {
  const int P = mpi_size(comm);
  const bool slab =
      decomp == fft::decomposition::slab || (decomp == fft::decomposition::automatic && n >= P && n / 2 + 1 >= P);
  fft::options3d o{.output = fft::order::transposed};
  if (slab) o.grid = {1, P};
  return o;
}

class toru_batch_transform final : public transform {
 public:
  toru_batch_transform(MPI_Comm comm, std::int64_t n, fft::decomposition decomp)
      : scalar_(comm, {n, n, n}, 1, fft::fields::interleaved, batch_options(comm, n, decomp)),
        vector_(comm, {n, n, n}, 3, fft::fields::interleaved, batch_options(comm, n, decomp)) {}

  const fft::box3d& real_box() const override { return scalar_.inbox(); }
  const fft::box3d& spec_box() const override { return scalar_.outbox(); }
  std::int64_t alloc() const override { return scalar_.alloc_size(); }
  void forward(double* in, cpx* out) const override { scalar_.forward(in, out); }
  void backward(cpx* in, double* out) const override { scalar_.backward(in, out); }
  void forward_vector(double* in, cpx* out) const override { vector_.forward(in, out); }
  void backward_vector(cpx* in, double* out) const override { vector_.backward(in, out); }
  bool batched() const override { return true; }
  std::string backend_name() const override { return "toru"; }
  fft::decomposition decomp() const override {
    return scalar_.grid()[0] == 1 ? fft::decomposition::slab : fft::decomposition::pencil;
  }
  std::array<int, 2> grid() const override { return scalar_.grid(); }

 private:
  // Both on the same pencils (same n and grid), so one box and one alloc serve both.
  fft::fft3d_batch_r2c<double> scalar_, vector_;
};

}  // namespace

std::unique_ptr<transform> make_toru_transform(MPI_Comm comm, std::int64_t n, fft::decomposition decomp) {
  return std::make_unique<toru_transform>(comm, n, decomp);
}

std::unique_ptr<transform> make_toru_batch_transform(MPI_Comm comm, std::int64_t n, fft::decomposition decomp) {
  return std::make_unique<toru_batch_transform>(comm, n, decomp);
}

}  // namespace toru::dns
