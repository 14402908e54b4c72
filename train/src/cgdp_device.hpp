// SPDX-License-Identifier: BSD-3-Clause
// CGDP's device path: the copies between a worker's CUDA device and the node's host window.
// Gradients leave on a copy stream into pinned (registered) window memory and publish their chunk
// from a host callback once they have landed; new weights return on a second stream, one event per
// chunk, which the model's compute stream waits on. Built with the CUDA backend
// (cgdp_device_cuda.cpp); otherwise cgdp_device_none.cpp refuses with the reason.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "toru/train/model.hpp"

namespace toru::train::detail {

class cgdp_device {
 public:
  virtual ~cgdp_device() = default;
  /// Page-locks [p, p + bytes) of the host window for DMA (undone by the destructor).
  virtual void pin(void* p, std::size_t bytes) = 0;
  /// Synchronous device-to-host copy (the initial weights).
  virtual void copy_to_host(void* host_dst, const void* device_src, std::size_t bytes) = 0;
  /// Chunk c's gradients to the host on the copy stream; when they have landed, a host callback
  /// stores `value` into `flag` (release): the helpers see the chunk only once it is complete.
  virtual void gradients_out(std::size_t c, void* host_dst, const void* device_src, std::size_t bytes,
                             std::atomic<std::int64_t>* flag, std::int64_t value) = 0;
  /// Chunk c's new weights to the device on the second stream, then the compute stream waits on
  /// chunk c's event (or, without a compute stream, the host does).
  virtual void weights_in(std::size_t c, void* device_dst, const void* host_src, std::size_t bytes) = 0;
  /// Waits for both copy streams.
  virtual void drain() = 0;
};

/// Throws errc::no_device when this process sees no CUDA device, errc::unsupported when this
/// build has no CUDA. compute_stream: the cudaStream_t the model computes on, or nullptr.
std::unique_ptr<cgdp_device> make_cgdp_device(std::size_t chunks, void* compute_stream);

}  // namespace toru::train::detail
