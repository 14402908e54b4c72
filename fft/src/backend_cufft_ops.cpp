// SPDX-License-Identifier: BSD-3-Clause
// backend_ops on device memory: the cuFFT steps of backend_cufft.hpp on the plan's CUDA stream.
// Built when toru is built with CUDA; backend_cufft_none.cpp otherwise.
#include "backend_cufft.hpp"
#include "backend_ops.hpp"

namespace toru::fft::detail {

namespace {

template <class T>
class cufft_ops final : public backend_ops<T> {
 public:
  explicit cufft_ops(gpu::context_ptr ctx) : ctx_(std::move(ctx)) {}

  bool device_memory() const override { return true; }
  std::shared_ptr<void> allocate(std::size_t bytes) const override { return gpu::device_alloc(bytes); }
  void plan_on(void*, void*) override {}  // cuFFT plans own their workspace

  std::unique_ptr<step<T>> fft_step(fft_kind kind, std::vector<int> dims, std::int64_t units) override {
    return gpu::make_fft_step<T>(ctx_, kind, std::move(dims), units);
  }
  std::unique_ptr<line_op<T>> fft_lines(fft_kind kind, std::vector<int> dims, std::vector<std::int64_t> batches,
                                        bool) override {
    return gpu::make_fft_lines<T>(ctx_, kind, std::move(dims), std::move(batches));
  }
  std::unique_ptr<line_op<T>> twiddle_fft(fft_kind, std::int64_t len, std::vector<std::int64_t> batches,
                                          const std::vector<std::complex<T>>& twiddle, bool forward) override {
    return gpu::make_twiddle_fft<T>(ctx_, len, std::move(batches), twiddle, forward);
  }
  // The device exchange stages through comm's own host workspace: nothing of it in the caller's.
  std::unique_ptr<step<T>> transpose(comm_ptr c, transpose_geometry g, std::unique_ptr<line_op<T>> op,
                                     const exchange_settings& x, std::size_t&) override {
    return gpu::make_transpose<T>(ctx_, std::move(c), std::move(g), std::move(op), x.chunks, x.overlap, x.type,
                                  x.algorithm);
  }

  void check_buffers_local(const void*, std::int64_t, const void*, std::int64_t) const override {}
  void check_buffers_collective(MPI_Comm comm, const void* in, std::int64_t in_elems, const void* out,
                                std::int64_t out_elems, const void* ws) const override {
    gpu::expect_device_buffers(*ctx_, comm, in, in_elems, out, out_elems, ws);
  }
  void* exchange_workspace(char*) const override { return nullptr; }
  void scale(std::complex<T>* data, std::int64_t count, T factor) const override {
    gpu::scale<T>(*ctx_, data, count, factor);
  }
  void finish() const override { gpu::synchronize(*ctx_); }

 private:
  gpu::context_ptr ctx_;
};

}  // namespace

template <class T>
std::unique_ptr<backend_ops<T>> make_cufft_ops(MPI_Comm comm) {
  return std::make_unique<cufft_ops<T>>(gpu::make_context(comm));
}

template std::unique_ptr<backend_ops<float>> make_cufft_ops<float>(MPI_Comm);
template std::unique_ptr<backend_ops<double>> make_cufft_ops<double>(MPI_Comm);

}  // namespace toru::fft::detail
