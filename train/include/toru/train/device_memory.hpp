// SPDX-License-Identifier: BSD-3-Clause
// Memory of one device (host or GPU) behind one allocator with a hard capacity and a high-water
// mark, shared by the trainer's backends and the swap executor: what a model allocates (activations,
// parameters, gradients, workspaces) is counted here, so a measured peak can be compared with the
// planner's replay (swap::simulate).
//
// Allocation past the capacity throws toru::error(errc::out_of_memory) naming what was being
// allocated, the request and the bytes in use; nothing is allocated then. Thread-safe (one mutex).
//
//   auto mem = toru::train::make_host_memory({.capacity = 1 << 30});
//   toru::train::device_buffer b(*mem, 4096, "conv1/out");  // freed when b goes away
//   mem->high_water();                                       // bytes
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>

#include "toru/train/model.hpp"

namespace toru::train {

class device_memory {
 public:
  /// capacity 0: unlimited (the raw allocator's own failure still throws out_of_memory).
  explicit device_memory(std::size_t capacity);
  virtual ~device_memory();
  device_memory(const device_memory&) = delete;
  device_memory& operator=(const device_memory&) = delete;

  /// Allocates `bytes` (64-byte aligned). `what` names the allocation in the out-of-memory error.
  void* allocate(std::size_t bytes, std::string_view what);
  /// Frees a pointer from allocate() (nullptr: no-op).
  void deallocate(void* p) noexcept;

  virtual memory_space space() const noexcept = 0;
  std::size_t capacity() const noexcept { return capacity_; }
  std::size_t in_use() const;
  std::size_t high_water() const;
  /// Starts a new high-water measurement at the bytes in use now.
  void reset_high_water();

 protected:
  virtual void* raw_allocate(std::size_t bytes) = 0;  // nullptr on failure
  virtual void raw_deallocate(void* p) noexcept = 0;

 private:
  struct accounting;
  std::size_t capacity_;
  mutable std::mutex mutex_;
  std::unique_ptr<accounting> acc_;
};

struct host_memory_options {
  std::size_t capacity = 0;  // bytes; 0 = unlimited
};
/// Plain host memory (the CPU backend's device).
std::unique_ptr<device_memory> make_host_memory(const host_memory_options& options = {});

/// RAII owner of one allocation.
class device_buffer {
 public:
  device_buffer() = default;
  device_buffer(device_memory& mem, std::size_t bytes, std::string_view what)
      : mem_(&mem), data_(mem.allocate(bytes, what)), bytes_(bytes) {}
  ~device_buffer() { reset(); }
  device_buffer(device_buffer&& o) noexcept : mem_(o.mem_), data_(o.data_), bytes_(o.bytes_) {
    o.data_ = nullptr;
    o.bytes_ = 0;
  }
  device_buffer& operator=(device_buffer&& o) noexcept {
    if (this != &o) {
      reset();
      mem_ = o.mem_;
      data_ = o.data_;
      bytes_ = o.bytes_;
      o.data_ = nullptr;
      o.bytes_ = 0;
    }
    return *this;
  }
  void reset() noexcept {
    if (data_ && mem_) mem_->deallocate(data_);
    data_ = nullptr;
    bytes_ = 0;
  }
  void* data() const noexcept { return data_; }
  template <class T>
  T* as() const noexcept {
    return static_cast<T*>(data_);
  }
  std::size_t bytes() const noexcept { return bytes_; }

 private:
  device_memory* mem_ = nullptr;
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace toru::train
