// SPDX-License-Identifier: BSD-3-Clause
// Storage for fields: 64-byte aligned, so FFTW's new-array execute accepts any of them in place of
// the arrays a plan was made with (FFTW compares alignments, and SIMD codelets need 32 bytes).
#pragma once

#include <complex>
#include <cstddef>
#include <new>
#include <vector>

namespace toru::dns {

using cpx = std::complex<double>;

template <class T>
struct aligned_allocator {
  using value_type = T;
  static constexpr std::align_val_t alignment{64};
  aligned_allocator() = default;
  template <class U>
  aligned_allocator(const aligned_allocator<U>&) noexcept {}
  T* allocate(std::size_t count) { return static_cast<T*>(::operator new(count * sizeof(T), alignment)); }
  void deallocate(T* p, std::size_t) noexcept { ::operator delete(p, alignment); }
  template <class U>
  bool operator==(const aligned_allocator<U>&) const noexcept {
    return true;
  }
};

template <class T>
using aligned_vector = std::vector<T, aligned_allocator<T>>;

}  // namespace toru::dns
