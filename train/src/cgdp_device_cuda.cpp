// SPDX-License-Identifier: BSD-3-Clause
// CGDP's device path on CUDA (cgdp_device.hpp).
#include <cuda_runtime_api.h>

#include <vector>

#include <fmt/format.h>

#include "cgdp_device.hpp"
#include "cuda/backend_cuda.hpp"
#include "cuda/cuda_check.hpp"
#include "model_impl.hpp"
#include "toru/core/error.hpp"
#include "toru/train/cgdp.hpp"

namespace toru::train {

void* device_compute_stream(model& m) {
  auto* be = dynamic_cast<detail::cuda::cuda_backend*>(detail::model_access::get(m).be.get());
  return be ? static_cast<void*>(be->context().stream()) : nullptr;
}

namespace detail {

namespace {

using cuda::check_cuda;

// Runs on the CUDA runtime's callback thread once the chunk's copy has completed: no CUDA calls.
struct landing {
  std::atomic<std::int64_t>* flag = nullptr;
  std::int64_t value = 0;
};
void CUDART_CB publish(void* arg) {
  const auto* l = static_cast<const landing*>(arg);
  l->flag->store(l->value, std::memory_order_release);
}

class cuda_cgdp_device final : public cgdp_device {
 public:
  cuda_cgdp_device(std::size_t chunks, cudaStream_t compute) : compute_(compute), landings_(chunks) {
    int devices = 0;
    const cudaError_t rc = cudaGetDeviceCount(&devices);
    if (rc != cudaSuccess || devices == 0)
      throw error(errc::no_device,
                  fmt::format("cgdp --device cuda: no CUDA device visible to this process ({}); run on a GPU node or "
                              "use --device cpu",
                              rc != cudaSuccess ? cudaGetErrorString(rc) : "cudaGetDeviceCount found 0"));
    check_cuda(cudaStreamCreateWithFlags(&d2h_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    check_cuda(cudaStreamCreateWithFlags(&h2d_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    events_.resize(chunks);
    for (auto& e : events_) check_cuda(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreate");
  }
  ~cuda_cgdp_device() override {
    // Teardown: errors are not actionable here.
    if (d2h_) cudaStreamSynchronize(d2h_);
    if (h2d_) cudaStreamSynchronize(h2d_);
    for (auto e : events_) cudaEventDestroy(e);
    if (d2h_) cudaStreamDestroy(d2h_);
    if (h2d_) cudaStreamDestroy(h2d_);
    for (void* p : pinned_) cudaHostUnregister(p);
  }

  void pin(void* p, std::size_t bytes) override {
    if (bytes == 0) return;
    check_cuda(cudaHostRegister(p, bytes, cudaHostRegisterDefault), "cudaHostRegister (the CGDP window)");
    pinned_.push_back(p);
  }
  void copy_to_host(void* host_dst, const void* device_src, std::size_t bytes) override {
    check_cuda(cudaMemcpy(host_dst, device_src, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
  }
  void gradients_out(std::size_t c, void* host_dst, const void* device_src, std::size_t bytes,
                     std::atomic<std::int64_t>* flag, std::int64_t value) override {
    // The chunk's previous landing was consumed before this step's forward (the helpers finished
    // it), so its record can be reused.
    landings_[c] = {flag, value};
    check_cuda(cudaMemcpyAsync(host_dst, device_src, bytes, cudaMemcpyDeviceToHost, d2h_), "cudaMemcpyAsync D2H");
    check_cuda(cudaLaunchHostFunc(d2h_, publish, &landings_[c]), "cudaLaunchHostFunc");
  }
  void weights_in(std::size_t c, void* device_dst, const void* host_src, std::size_t bytes) override {
    check_cuda(cudaMemcpyAsync(device_dst, host_src, bytes, cudaMemcpyHostToDevice, h2d_), "cudaMemcpyAsync H2D");
    check_cuda(cudaEventRecord(events_[c], h2d_), "cudaEventRecord");
    if (compute_)
      check_cuda(cudaStreamWaitEvent(compute_, events_[c], 0), "cudaStreamWaitEvent");
    else
      check_cuda(cudaEventSynchronize(events_[c]), "cudaEventSynchronize");
  }
  void drain() override {
    check_cuda(cudaStreamSynchronize(d2h_), "cudaStreamSynchronize");
    check_cuda(cudaStreamSynchronize(h2d_), "cudaStreamSynchronize");
  }

 private:
  cudaStream_t compute_ = nullptr, d2h_ = nullptr, h2d_ = nullptr;
  std::vector<cudaEvent_t> events_;
  std::vector<landing> landings_;
  std::vector<void*> pinned_;
};

}  // namespace

std::unique_ptr<cgdp_device> make_cgdp_device(std::size_t chunks, void* compute_stream) {
  return std::make_unique<cuda_cgdp_device>(chunks, static_cast<cudaStream_t>(compute_stream));
}

}  // namespace detail
}  // namespace toru::train
