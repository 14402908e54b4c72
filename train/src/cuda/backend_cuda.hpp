// SPDX-License-Identifier: BSD-3-Clause
// The trainer's CUDA backend (backend_kind::cuda): the layers of layers.hpp behind the executor's
// kernel interface (train/src/backend.hpp). Every tensor is stored plain (row-major, NCHW), so
// read_plain/write_plain are plain copies and no kernel ever reorders.
#pragma once

#include <memory>

#include "backend.hpp"
#include "cuda_context.hpp"

namespace toru::train::detail::cuda {

class cuda_backend final : public backend {
 public:
  /// Throws toru::error(no_device) "no CUDA device: ..." without a GPU (see cuda_context).
  explicit cuda_backend(const model_options& o);
  backend_kind kind() const noexcept override { return backend_kind::cuda; }
  device_memory& memory() override { return ctx_.memory(); }
  std::unique_ptr<kernel> make_kernel(const swap::graph& g, int op, const model_options& options) override;
  void write_plain(int tensor, const float* host, void* storage) override;
  void read_plain(int tensor, const void* storage, float* host) override;
  void copy_to_device(void* dst, const void* host_src, std::size_t bytes) override;
  void copy_to_host(void* host_dst, const void* src, std::size_t bytes) override;
  void accumulate(float* dst, const float* src, std::int64_t count) override;
  void fill(float* dst, float value, std::int64_t count) override;
  void synchronize() override;

  cuda_context& context() noexcept { return ctx_; }

 private:
  std::size_t tensor_bytes(int tensor) const;
  cuda_context ctx_;
  const swap::graph* graph_ = nullptr;
};

/// Kernel factories (backend_kernels.cpp), one per op family; `be` outlives the kernels.
std::unique_ptr<kernel> make_cuda_kernel(cuda_backend& be, const swap::graph& g, int op);

}  // namespace toru::train::detail::cuda
