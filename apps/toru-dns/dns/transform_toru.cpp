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

// The batched plans take fft3d_r2c's decomposition (and, where it gives every rank points, its
// plan field by field), so a batched solver has the unbatched one's boxes.
fft::options3d batch_options(fft::decomposition decomp) {
  return fft::options3d{.decomp = decomp, .output = fft::order::transposed};
}

class toru_batch_transform final : public transform {
 public:
  toru_batch_transform(MPI_Comm comm, std::int64_t n, fft::decomposition decomp)
      : scalar_(comm, {n, n, n}, 1, fft::fields::interleaved, batch_options(decomp)),
        vector_(comm, {n, n, n}, 3, fft::fields::interleaved, batch_options(decomp)) {}

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
    return scalar_.grid()[1] == 1 ? fft::decomposition::slab : fft::decomposition::pencil;  // a slab is P x 1
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
