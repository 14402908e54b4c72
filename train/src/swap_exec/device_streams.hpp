// SPDX-License-Identifier: BSD-3-Clause
// The device side of the plan executor: the compute stream's timing, the two copy streams, the
// host buffers swapped tensors live in, and the events between them. One implementation per device:
// the host-emulated one (copy-engine threads, host waits; streams_emulated.cpp) and CUDA (one compute
// stream, two copy streams, pinned host buffers, cudaEvents; streams_cuda.cpp). The executor
// (plan_executor.cpp) walks the plan and calls these at each step; objects and ops are the plan's
// indices.
//
// Ordering contract (CUDA's stream semantics, which the emulated device reproduces):
//  - swap_out(k) starts after every compute op issued so far (the producer) and the earlier copies
//    of its stream;
//  - swap_in(k, source) starts after swap_out(source) has landed and every compute op issued so far
//    (its device buffer was just allocated, stream-ordered, on the compute stream);
//  - compute_wait(k): compute issued after it starts once object k's copy has landed;
//  - before_free(k): object k's device memory may be reused from here on.
#pragma once

#include <cstddef>
#include <memory>
#include <utility>

#include "toru/swap/device.hpp"
#include "toru/train/emulated_device.hpp"

namespace toru::train::detail {

class backend;

class device_streams {
 public:
  virtual ~device_streams() = default;
  /// Sizes the per-object and per-op tables for a plan (host buffers may be kept across steps).
  virtual void prepare(std::size_t objects, std::size_t ops) = 0;
  /// Starts a step: time 0 of every interval reported below.
  virtual void begin_step() = 0;
  /// A host buffer for object k's swap-out, valid until the next prepare().
  virtual void* host_buffer(int object, std::size_t bytes) = 0;
  virtual void swap_out(int object, void* host, const void* device, std::size_t bytes) = 0;
  virtual void swap_in(int object, void* device, const void* host, std::size_t bytes, int source) = 0;
  /// Whether object k was copied in this step.
  virtual bool copied(int object) const = 0;
  /// Compute issued from now on waits for object k's copy. Returns the seconds the host thread
  /// waited (the emulated device stalls the host; CUDA makes the compute stream wait: 0).
  virtual double compute_wait(int object) = 0;
  virtual void before_free(int object) = 0;
  /// Brackets compute op `op`; the op occupies the compute stream for at least `min_seconds`
  /// (the emulated device's compute rate; 0: as long as it runs).
  virtual void op_begin(int op) = 0;
  virtual void op_end(int op, double min_seconds) = 0;
  /// Waits for all queued work; returns the step's end (seconds since begin_step).
  virtual double synchronize() = 0;
  /// After synchronize(): when op `op` ran and object k's copy ran (seconds since begin_step).
  virtual std::pair<double, double> op_interval(int op) const = 0;
  virtual std::pair<double, double> copy_interval(int object) const = 0;
  /// Seconds since begin_step on the host (memory samples of the timeline).
  virtual double now() const = 0;
};

std::unique_ptr<device_streams> make_emulated_streams(const emulated_link& link);
/// The CUDA backend's device: its stream computes; throws toru::error(unsupported) when the CUDA
/// backend was not built, invalid_argument when `be` is not the CUDA backend.
std::unique_ptr<device_streams> make_cuda_streams(backend& be, std::size_t budget);

}  // namespace toru::train::detail
