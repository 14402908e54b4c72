// SPDX-License-Identifier: BSD-3-Clause
// toru's fft3d_r2c behind the solver's transform interface.
#include <cstddef>
#include <vector>

#include "dns/transform.hpp"
#include "toru/fft/fft3d.hpp"

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

}  // namespace

std::unique_ptr<transform> make_toru_transform(MPI_Comm comm, std::int64_t n, fft::decomposition decomp) {
  return std::make_unique<toru_transform>(comm, n, decomp);
}

}  // namespace toru::dns
