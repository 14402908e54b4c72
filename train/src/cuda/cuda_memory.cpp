// SPDX-License-Identifier: BSD-3-Clause
#include "cuda_memory.hpp"

#include <cstdint>
#include <limits>

#include "cuda_check.hpp"

namespace toru::train::detail::cuda {

namespace {

class cuda_memory final : public device_memory {
 public:
  cuda_memory(int device, cudaStream_t stream, std::size_t capacity)
      : device_memory(capacity), device_(device), stream_(stream) {
    check_cuda(cudaSetDevice(device_), "cudaSetDevice");
    // Keep freed blocks in the pool rather than trimming them back to the driver at every
    // synchronisation: the capacity, not the driver, bounds what this model holds.
    cudaMemPool_t pool = nullptr;
    check_cuda(cudaDeviceGetDefaultMemPool(&pool, device_), "cudaDeviceGetDefaultMemPool");
    std::uint64_t threshold = std::numeric_limits<std::uint64_t>::max();
    check_cuda(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold),
               "cudaMemPoolSetAttribute(cudaMemPoolAttrReleaseThreshold)");
  }
  ~cuda_memory() override = default;
  memory_space space() const noexcept override { return memory_space::device; }

 protected:
  void* raw_allocate(std::size_t bytes) override {
    void* p = nullptr;
    if (cudaMallocAsync(&p, bytes, stream_) != cudaSuccess) {
      cudaGetLastError();  // the failure must not surface at the next unrelated check
      return nullptr;
    }
    return p;
  }
  void raw_deallocate(void* p) noexcept override { cudaFreeAsync(p, stream_); }

 private:
  int device_;
  cudaStream_t stream_;
};

}  // namespace

std::unique_ptr<device_memory> make_cuda_memory(int device, cudaStream_t stream, std::size_t capacity) {
  return std::make_unique<cuda_memory>(device, stream, capacity);
}

}  // namespace toru::train::detail::cuda
