// SPDX-License-Identifier: BSD-3-Clause
#include "backend_cuda.hpp"

#include <fmt/format.h>

#include "cuda_check.hpp"
#include "kernels.hpp"
#include "toru/core/error.hpp"

namespace toru::train::detail {

namespace cuda {

cuda_backend::cuda_backend(const model_options& o) : ctx_(o.device, o.memory_capacity) {}

std::unique_ptr<kernel> cuda_backend::make_kernel(const swap::graph& g, int op, const model_options&) {
  graph_ = &g;
  ctx_.activate();
  return make_cuda_kernel(*this, g, op);
}

std::size_t cuda_backend::tensor_bytes(int tensor) const {
  if (!graph_ || tensor < 0 || static_cast<std::size_t>(tensor) >= graph_->tensors.size())
    throw error(errc::internal, fmt::format("cuda backend: tensor {} is not a tensor of the model's graph", tensor));
  std::size_t n = 1;
  for (auto e : graph_->tensors[static_cast<std::size_t>(tensor)].shape) n *= static_cast<std::size_t>(e);
  return n * sizeof(float);
}

// Copies go on the backend's (non-blocking) stream, then wait: a plain cudaMemcpy would run on the
// legacy default stream, which does not order itself with non-blocking streams.
void cuda_backend::write_plain(int tensor, const float* host, void* storage) {
  copy_to_device(storage, host, tensor_bytes(tensor));
}

void cuda_backend::read_plain(int tensor, const void* storage, float* host) {
  copy_to_host(host, storage, tensor_bytes(tensor));
}

void cuda_backend::copy_to_device(void* dst, const void* host_src, std::size_t bytes) {
  if (bytes == 0) return;
  ctx_.activate();
  check_cuda(cudaMemcpyAsync(dst, host_src, bytes, cudaMemcpyHostToDevice, ctx_.stream()), "cudaMemcpyAsync (H2D)");
  ctx_.synchronize();
}

void cuda_backend::copy_to_host(void* host_dst, const void* src, std::size_t bytes) {
  if (bytes == 0) return;
  ctx_.activate();
  check_cuda(cudaMemcpyAsync(host_dst, src, bytes, cudaMemcpyDeviceToHost, ctx_.stream()), "cudaMemcpyAsync (D2H)");
  ctx_.synchronize();
}

void cuda_backend::accumulate(float* dst, const float* src, std::int64_t count) {
  ctx_.activate();
  check_cuda(cuda::accumulate(dst, src, count, ctx_.stream()), "accumulate");
}

void cuda_backend::fill(float* dst, float value, std::int64_t count) {
  ctx_.activate();
  check_cuda(cuda::fill(dst, value, count, ctx_.stream()), "fill");
}

void cuda_backend::synchronize() {
  ctx_.activate();
  ctx_.synchronize();
}

}  // namespace cuda

std::unique_ptr<backend> make_cuda_backend(const model_options& options) {
  return std::make_unique<cuda::cuda_backend>(options);
}

}  // namespace toru::train::detail
