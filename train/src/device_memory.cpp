// SPDX-License-Identifier: BSD-3-Clause
#include "toru/train/device_memory.hpp"

#include <cstdlib>
#include <map>
#include <new>
#include <unordered_map>

#include <fmt/format.h>

#include "toru/core/error.hpp"

namespace toru::train {

struct device_memory::accounting {
  std::unordered_map<void*, std::size_t> sizes;
  std::size_t in_use = 0;
  std::size_t high_water = 0;
};

device_memory::device_memory(std::size_t capacity) : capacity_(capacity), acc_(std::make_unique<accounting>()) {}

device_memory::~device_memory() = default;

void* device_memory::allocate(std::size_t bytes, std::string_view what) {
  // Zero-byte requests still get a distinct pointer so ownership stays simple.
  const std::size_t request = bytes == 0 ? 64 : (bytes + 63) / 64 * 64;
  std::lock_guard lock(mutex_);
  if (capacity_ != 0 && acc_->in_use + request > capacity_)
    throw error(errc::out_of_memory,
                fmt::format("{}: allocating {} bytes would exceed the device memory capacity of {} bytes ({} in use)",
                            what, bytes, capacity_, acc_->in_use));
  void* p = raw_allocate(request);
  if (!p)
    throw error(errc::out_of_memory,
                fmt::format("{}: the allocator could not provide {} bytes ({} in use)", what, bytes, acc_->in_use));
  acc_->sizes.emplace(p, request);
  acc_->in_use += request;
  if (acc_->in_use > acc_->high_water) acc_->high_water = acc_->in_use;
  return p;
}

void device_memory::deallocate(void* p) noexcept {
  if (!p) return;
  std::lock_guard lock(mutex_);
  const auto it = acc_->sizes.find(p);
  if (it == acc_->sizes.end()) return;
  acc_->in_use -= it->second;
  acc_->sizes.erase(it);
  raw_deallocate(p);
}

std::size_t device_memory::in_use() const {
  std::lock_guard lock(mutex_);
  return acc_->in_use;
}

std::size_t device_memory::high_water() const {
  std::lock_guard lock(mutex_);
  return acc_->high_water;
}

void device_memory::reset_high_water() {
  std::lock_guard lock(mutex_);
  acc_->high_water = acc_->in_use;
}

namespace {

// Freed blocks are kept by size and handed out again: a training step allocates the same gradient
// buffers every step, and returning large blocks to the system would make every step pay for
// fresh pages (glibc maps blocks above its mmap threshold anew each time). The cached blocks do not
// count as in use; the capacity bounds what is live.
class host_memory final : public device_memory {
 public:
  using device_memory::device_memory;
  ~host_memory() override {
    for (auto& [bytes, p] : free_) std::free(p);
  }
  memory_space space() const noexcept override { return memory_space::host; }

 protected:
  void* raw_allocate(std::size_t bytes) override {
    if (const auto it = free_.find(bytes); it != free_.end()) {
      void* p = it->second;
      free_.erase(it);
      sizes_[p] = bytes;
      return p;
    }
    void* p = std::aligned_alloc(64, bytes);
    if (p) sizes_[p] = bytes;
    return p;
  }
  void raw_deallocate(void* p) noexcept override {
    const auto it = sizes_.find(p);
    if (it == sizes_.end()) return;
    try {
      free_.emplace(it->second, p);
    } catch (...) {
      std::free(p);
    }
    sizes_.erase(it);
  }

 private:
  std::multimap<std::size_t, void*> free_;
  std::unordered_map<void*, std::size_t> sizes_;
};

}  // namespace

std::unique_ptr<device_memory> make_host_memory(const host_memory_options& options) {
  return std::make_unique<host_memory>(options.capacity);
}

}  // namespace toru::train
