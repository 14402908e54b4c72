// SPDX-License-Identifier: BSD-3-Clause
// The CUDA device's streams for the plan executor: the CUDA backend's stream computes (every kernel
// and every stream-ordered cudaMallocAsync/cudaFreeAsync of the model's memory is queued on it), two
// copy streams of their own move swapped tensors through pinned host buffers (cudaHostAlloc), and
// cudaEvents order them as the planner's time model does. Nothing here blocks the host except
// synchronize(): a stall is the compute stream waiting on an event (cudaStreamWaitEvent).
//
// Memory: the model's memory (cuda_memory.hpp) is the device's default pool with the model's hard
// capacity; here the pool's release threshold is set to the plan's budget, so the pool keeps what
// one step needs cached and returns anything beyond it to the driver.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

#include <fmt/format.h>

#include "../cuda/backend_cuda.hpp"
#include "../cuda/cuda_check.hpp"
#include "device_streams.hpp"
#include "toru/core/error.hpp"

namespace toru::train::detail {

namespace {

using cuda::check_cuda;

struct cuda_event {
  cudaEvent_t e = nullptr;
  cuda_event() { check_cuda(cudaEventCreate(&e), "cudaEventCreate"); }
  ~cuda_event() {
    if (e) cudaEventDestroy(e);
  }
  cuda_event(const cuda_event&) = delete;
  cuda_event& operator=(const cuda_event&) = delete;
};

struct pinned {
  void* p = nullptr;
  std::size_t bytes = 0;
  pinned() = default;
  pinned(const pinned&) = delete;
  pinned& operator=(const pinned&) = delete;
  ~pinned() {
    if (p) cudaFreeHost(p);
  }
};

class cuda_streams final : public device_streams {
 public:
  cuda_streams(cuda::cuda_backend& be, std::size_t budget) : ctx_(be.context()) {
    ctx_.activate();
    compute_ = ctx_.stream();
    check_cuda(cudaStreamCreateWithFlags(&d2h_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags(d2h)");
    check_cuda(cudaStreamCreateWithFlags(&h2d_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags(h2d)");
    cudaMemPool_t pool = nullptr;
    check_cuda(cudaDeviceGetDefaultMemPool(&pool, ctx_.device()), "cudaDeviceGetDefaultMemPool");
    auto threshold = static_cast<std::uint64_t>(budget);
    check_cuda(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold),
               "cudaMemPoolSetAttribute(cudaMemPoolAttrReleaseThreshold)");
  }
  ~cuda_streams() override {
    cudaStreamSynchronize(d2h_);
    cudaStreamSynchronize(h2d_);
    cudaStreamSynchronize(compute_);
    cudaStreamDestroy(d2h_);
    cudaStreamDestroy(h2d_);
  }

  void prepare(std::size_t objects, std::size_t ops) override {
    synchronize();
    host_ = std::vector<pinned>(objects);
    copy_start_ = std::vector<cuda_event>(objects);
    copy_end_ = std::vector<cuda_event>(objects);
    copied_.assign(objects, 0);
    op_start_ = std::vector<cuda_event>(ops);
    op_end_ = std::vector<cuda_event>(ops);
    ran_.assign(ops, 0);
  }

  void begin_step() override {
    synchronize();
    std::fill(copied_.begin(), copied_.end(), 0);
    std::fill(ran_.begin(), ran_.end(), 0);
    host_epoch_ = std::chrono::steady_clock::now();
    check_cuda(cudaEventRecord(epoch_.e, compute_), "cudaEventRecord(epoch)");
    started_ = true;
  }

  void* host_buffer(int k, std::size_t bytes) override {
    auto& h = host_[static_cast<std::size_t>(k)];
    if (h.bytes < bytes) {
      if (h.p) check_cuda(cudaFreeHost(h.p), "cudaFreeHost");
      h.p = nullptr;
      h.bytes = 0;
      check_cuda(cudaHostAlloc(&h.p, bytes, cudaHostAllocDefault), "cudaHostAlloc");
      h.bytes = bytes;
    }
    return h.p;
  }

  void swap_out(int k, void* host, const void* device, std::size_t bytes) override {
    copy(d2h_, k, host, device, bytes, cudaMemcpyDeviceToHost, -1);
  }

  void swap_in(int k, void* device, const void* host, std::size_t bytes, int source) override {
    copy(h2d_, k, device, host, bytes, cudaMemcpyHostToDevice, source);
  }

  bool copied(int k) const override { return copied_[static_cast<std::size_t>(k)] != 0; }

  double compute_wait(int k) override {
    if (copied(k))
      check_cuda(cudaStreamWaitEvent(compute_, copy_end_[static_cast<std::size_t>(k)].e, 0), "cudaStreamWaitEvent");
    return 0;
  }

  // Frees are stream-ordered on the compute stream: after it waited for the copy, reuse is safe.
  void before_free(int k) override { compute_wait(k); }

  void op_begin(int op) override {
    check_cuda(cudaEventRecord(op_start_[static_cast<std::size_t>(op)].e, compute_), "cudaEventRecord(op)");
  }
  void op_end(int op, double) override {
    check_cuda(cudaEventRecord(op_end_[static_cast<std::size_t>(op)].e, compute_), "cudaEventRecord(op)");
    ran_[static_cast<std::size_t>(op)] = 1;
  }

  double synchronize() override {
    check_cuda(cudaStreamSynchronize(d2h_), "cudaStreamSynchronize(d2h)");
    check_cuda(cudaStreamSynchronize(h2d_), "cudaStreamSynchronize(h2d)");
    check_cuda(cudaEventRecord(last_.e, compute_), "cudaEventRecord(end)");
    check_cuda(cudaStreamSynchronize(compute_), "cudaStreamSynchronize(compute)");
    if (!started_) return 0;  // no step yet: no epoch to time from
    double end = since_epoch(last_.e);
    for (std::size_t k = 0; k < copied_.size(); ++k)
      if (copied_[k]) end = std::max(end, since_epoch(copy_end_[k].e));
    return end;
  }

  std::pair<double, double> op_interval(int op) const override {
    const auto i = static_cast<std::size_t>(op);
    if (!ran_[i]) return {0, 0};
    return {since_epoch(op_start_[i].e), since_epoch(op_end_[i].e)};
  }
  std::pair<double, double> copy_interval(int k) const override {
    const auto i = static_cast<std::size_t>(k);
    if (!copied_[i]) return {0, 0};
    return {since_epoch(copy_start_[i].e), since_epoch(copy_end_[i].e)};
  }
  double now() const override {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - host_epoch_).count();
  }

 private:
  // A copy on `stream` after everything issued on the compute stream so far (the producer, or the
  // stream-ordered allocation of the destination) and, for a swap-in, after its swap-out landed.
  void copy(cudaStream_t stream, int k, void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind,
            int source) {
    const auto i = static_cast<std::size_t>(k);
    check_cuda(cudaEventRecord(issued_.e, compute_), "cudaEventRecord(issued)");
    check_cuda(cudaStreamWaitEvent(stream, issued_.e, 0), "cudaStreamWaitEvent(copy)");
    if (source >= 0 && copied(source))
      check_cuda(cudaStreamWaitEvent(stream, copy_end_[static_cast<std::size_t>(source)].e, 0),
                 "cudaStreamWaitEvent(swap-out)");
    check_cuda(cudaEventRecord(copy_start_[i].e, stream), "cudaEventRecord(copy)");
    check_cuda(cudaMemcpyAsync(dst, src, bytes, kind, stream), "cudaMemcpyAsync");
    check_cuda(cudaEventRecord(copy_end_[i].e, stream), "cudaEventRecord(copy)");
    copied_[i] = 1;
  }

  double since_epoch(cudaEvent_t e) const {
    float ms = 0;
    check_cuda(cudaEventElapsedTime(&ms, epoch_.e, e), "cudaEventElapsedTime");
    return 1e-3 * ms;
  }

  cuda::cuda_context& ctx_;
  cudaStream_t compute_ = nullptr, d2h_ = nullptr, h2d_ = nullptr;
  cuda_event epoch_, last_, issued_;
  bool started_ = false;
  std::chrono::steady_clock::time_point host_epoch_ = std::chrono::steady_clock::now();
  std::vector<pinned> host_;
  std::vector<cuda_event> copy_start_, copy_end_, op_start_, op_end_;
  std::vector<char> copied_, ran_;
};

}  // namespace

std::unique_ptr<device_streams> make_cuda_streams(backend& be, std::size_t budget) {
  auto* cb = dynamic_cast<cuda::cuda_backend*>(&be);
  if (!cb) throw error(errc::invalid_argument, "plan executor: expected the CUDA backend for the CUDA device streams");
  return std::make_unique<cuda_streams>(*cb, budget);
}

}  // namespace toru::train::detail
