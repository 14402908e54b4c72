// SPDX-License-Identifier: BSD-3-Clause
// FFTW-MPI's slab r2c/c2r behind the solver's transform interface: the peer of toru's FFT in the
// --fft fftw-mpi comparison. Plans are made once on the plan's own aligned arrays and executed on
// the solver's arrays (new-array execute; all solver arrays are 64-byte aligned). Vector fields
// through plan_many with howmany = 3 (FFTW's interleaved layout): one exchange for the three.
#include <fftw3-mpi.h>

#include <algorithm>

#include "dns/transform.hpp"
#include "toru/core/error.hpp"
#include "toru/core/mpi.hpp"

namespace toru::dns {
namespace {

class fftw_mpi_transform final : public transform {
 public:
  fftw_mpi_transform(MPI_Comm comm, std::int64_t n, bool batched) : nranks_(mpi_size(comm)), batched_(batched) {
    fftw_mpi_init();  // idempotent
    const ptrdiff_t nh = n / 2 + 1;
    ptrdiff_t ln0 = 0, s0 = 0, ln1 = 0, s1 = 0;
    alloc_ = std::max<ptrdiff_t>(fftw_mpi_local_size_3d_transposed(n, n, nh, comm, &ln0, &s0, &ln1, &s1), 1);
    // The vector plans' arrays are three single ones (the same slabs, interleaved).
    const ptrdiff_t dims[3] = {n, n, nh};
    ptrdiff_t m0 = 0, ms0 = 0, m1 = 0, ms1 = 0;
    const ptrdiff_t many = fftw_mpi_local_size_many_transposed(3, dims, 3, FFTW_MPI_DEFAULT_BLOCK,
                                                               FFTW_MPI_DEFAULT_BLOCK, comm, &m0, &ms0, &m1, &ms1);
    alloc_ = std::max<std::int64_t>(alloc_, (many + 2) / 3);
    real_ = fft::box3d{.low = {s0, 0, 0}, .size = {ln0, n, n}, .order = {0, 1, 2}, .row_stride = 2 * nh};
    // FFTW_MPI_TRANSPOSED_OUT: [local n1][n0][n2/2+1].
    spec_ = fft::box3d{.low = {0, s1, 0}, .size = {n, ln1, nh}, .order = {1, 0, 2}, .row_stride = nh};
    double* r = fftw_alloc_real(2 * 3 * static_cast<std::size_t>(alloc_));
    fftw_complex* c = fftw_alloc_complex(3 * static_cast<std::size_t>(alloc_));
    fwd_ = fftw_mpi_plan_dft_r2c_3d(n, n, n, r, c, comm, FFTW_ESTIMATE | FFTW_MPI_TRANSPOSED_OUT);
    bwd_ = fftw_mpi_plan_dft_c2r_3d(n, n, n, c, r, comm, FFTW_ESTIMATE | FFTW_MPI_TRANSPOSED_IN);
    const ptrdiff_t real_dims[3] = {n, n, n};
    fwd3_ = fftw_mpi_plan_many_dft_r2c(3, real_dims, 3, FFTW_MPI_DEFAULT_BLOCK, FFTW_MPI_DEFAULT_BLOCK, r, c, comm,
                                       FFTW_ESTIMATE | FFTW_MPI_TRANSPOSED_OUT);
    bwd3_ = fftw_mpi_plan_many_dft_c2r(3, real_dims, 3, FFTW_MPI_DEFAULT_BLOCK, FFTW_MPI_DEFAULT_BLOCK, c, r, comm,
                                       FFTW_ESTIMATE | FFTW_MPI_TRANSPOSED_IN);
    fftw_free(r);
    fftw_free(c);
    int ok = fwd_ && bwd_ && fwd3_ && bwd3_ ? 1 : 0, all = 0;
    check_mpi(MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
    if (!all) {
      destroy();
      throw error(errc::fftw, "--fft fftw-mpi: FFTW-MPI could not plan an r2c transform of this size");
    }
  }
  ~fftw_mpi_transform() override { destroy(); }

  const fft::box3d& real_box() const override { return real_; }
  const fft::box3d& spec_box() const override { return spec_; }
  std::int64_t alloc() const override { return alloc_; }
  void forward(double* in, cpx* out) const override {
    fftw_mpi_execute_dft_r2c(fwd_, in, reinterpret_cast<fftw_complex*>(out));
  }
  void backward(cpx* in, double* out) const override {
    fftw_mpi_execute_dft_c2r(bwd_, reinterpret_cast<fftw_complex*>(in), out);
  }
  void forward_vector(double* in, cpx* out) const override {
    if (!batched_) return transform::forward_vector(in, out);
    fftw_mpi_execute_dft_r2c(fwd3_, in, reinterpret_cast<fftw_complex*>(out));
  }
  void backward_vector(cpx* in, double* out) const override {
    if (!batched_) return transform::backward_vector(in, out);
    fftw_mpi_execute_dft_c2r(bwd3_, reinterpret_cast<fftw_complex*>(in), out);
  }
  bool batched() const override { return batched_; }
  std::string backend_name() const override { return "fftw-mpi"; }
  fft::decomposition decomp() const override { return fft::decomposition::slab; }
  std::array<int, 2> grid() const override { return {nranks_, 1}; }

 private:
  void destroy() {
    for (fftw_plan* p : {&fwd_, &bwd_, &fwd3_, &bwd3_}) {
      if (*p) fftw_destroy_plan(*p);
      *p = nullptr;
    }
  }
  int nranks_ = 1;
  bool batched_ = false;
  fft::box3d real_, spec_;
  std::int64_t alloc_ = 0;
  fftw_plan fwd_ = nullptr, bwd_ = nullptr, fwd3_ = nullptr, bwd3_ = nullptr;
};

}  // namespace

std::unique_ptr<transform> make_fftw_mpi_transform(MPI_Comm comm, std::int64_t n, bool batched) {
  return std::make_unique<fftw_mpi_transform>(comm, n, batched);
}

}  // namespace toru::dns
