// SPDX-License-Identifier: BSD-3-Clause
// For implementers of toru's C API (comm, fft): runs C++ code behind a C function, turning any
// exception into a toru_result and keeping its message for toru_last_error(). Internal: it lives
// outside every include/ folder, is not installed, and reaches modules through the build-only
// target toru_internal.
#pragma once

#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <type_traits>

#include "toru/core.h"
#include "toru/core/error.hpp"

namespace toru::detail {

/// The integer a C caller stored in an enum field. Read through memcpy: in C++, loading a value
/// outside the enumerators' range through the enum type is undefined (UBSan flags it), and a C
/// caller may store any int there; the checks that follow must see it to refuse it.
template <class E>
requires std::is_enum_v<E>
int raw_enum(const E& e) noexcept {
  std::underlying_type_t<E> v;
  std::memcpy(&v, &e, sizeof v);
  return static_cast<int>(v);
}

/// Stores the message that toru_last_error() returns on this thread ("" after a success).
void set_last_error(std::string message);

/// Calls f(); returns TORU_SUCCESS, or the result code of what it threw. noexcept: no exception
/// crosses the C boundary.
template <class F>
toru_result c_guarded(F&& f) noexcept {
  try {
    f();
    set_last_error({});
    return TORU_SUCCESS;
  } catch (const toru::error& e) {
    set_last_error(e.what());
    return static_cast<toru_result>(static_cast<int>(e.code()));
  } catch (const std::bad_alloc& e) {
    set_last_error(e.what());
    return TORU_ERROR_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    set_last_error(e.what());
    return TORU_ERROR_INTERNAL;
  } catch (...) {
    set_last_error("unknown exception");
    return TORU_ERROR_INTERNAL;
  }
}

}  // namespace toru::detail
