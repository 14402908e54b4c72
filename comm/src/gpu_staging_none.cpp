// SPDX-License-Identifier: BSD-3-Clause
#include <cstring>
#include <new>

#include "gpu_staging.hpp"

namespace toru::comm::detail {

bool is_device_pointer(const void*) noexcept { return false; }
bool mpi_is_cuda_aware() noexcept { return false; }

pinned_buffer::pinned_buffer(std::size_t bytes) : bytes_(bytes) {
  if (bytes > 0) data_ = static_cast<std::byte*>(::operator new(bytes));
}
pinned_buffer::~pinned_buffer() { ::operator delete(data_); }

void copy_bytes(void* dst, const void* src, std::size_t bytes) {
  if (bytes > 0) std::memcpy(dst, src, bytes);
}

}  // namespace toru::comm::detail
