// SPDX-License-Identifier: BSD-3-Clause
// core's part of the C interface (toru/core.h): error text, the calling thread's last error, the
// version query, and the tie between the C result codes and toru::errc that c_guarded's cast relies on.
// The last error lives here, below every module, so that one message store serves every module's C
// calls: a failure in fft is read back through the same toru_last_error() as one in comm.
#include "toru/core.h"

#include <string>
#include <utility>

#include "toru/core/error.hpp"
#include "toru/detail/c_guard.hpp"

namespace {
constexpr bool same(toru_result r, toru::errc e) { return static_cast<int>(r) == static_cast<int>(e); }

// Per thread: two threads calling toru at once each read back their own failure.
thread_local std::string last_error;
}  // namespace

void toru::detail::set_last_error(std::string message) { last_error = std::move(message); }

// Every errc has its TORU_ERROR_* of the same value (a new errc needs one, and a line here).
static_assert(same(TORU_SUCCESS, toru::errc::success));
static_assert(same(TORU_ERROR_INVALID_ARGUMENT, toru::errc::invalid_argument));
static_assert(same(TORU_ERROR_MISMATCH, toru::errc::mismatch));
static_assert(same(TORU_ERROR_UNSUPPORTED, toru::errc::unsupported));
static_assert(same(TORU_ERROR_MPI, toru::errc::mpi));
static_assert(same(TORU_ERROR_FFTW, toru::errc::fftw));
static_assert(same(TORU_ERROR_HWLOC, toru::errc::hwloc));
static_assert(same(TORU_ERROR_CUDA, toru::errc::cuda));
static_assert(same(TORU_ERROR_NO_DEVICE, toru::errc::no_device));
static_assert(same(TORU_ERROR_IO, toru::errc::io));
static_assert(same(TORU_ERROR_OUT_OF_MEMORY, toru::errc::out_of_memory));
static_assert(same(TORU_ERROR_INTERNAL, toru::errc::internal));

extern "C" {

const char* toru_error_string(toru_result result) {
  switch (result) {
    case TORU_SUCCESS:
      return "success";
    case TORU_ERROR_INVALID_ARGUMENT:
      return "invalid argument";
    case TORU_ERROR_MISMATCH:
      return "arguments disagree across ranks or with the plan";
    case TORU_ERROR_UNSUPPORTED:
      return "not supported by this build or backend";
    case TORU_ERROR_MPI:
      return "MPI error";
    case TORU_ERROR_FFTW:
      return "FFTW error";
    case TORU_ERROR_HWLOC:
      return "hwloc error";
    case TORU_ERROR_CUDA:
      return "CUDA, cuFFT or NCCL error";
    case TORU_ERROR_NO_DEVICE:
      return "no GPU device";
    case TORU_ERROR_IO:
      return "file input/output error";
    case TORU_ERROR_OUT_OF_MEMORY:
      return "out of memory";
    case TORU_ERROR_INTERNAL:
      return "internal error";
  }
  return "unknown result code";
}

const char* toru_last_error(void) { return last_error.c_str(); }

toru_result toru_get_version(int* major, int* minor, int* patch) {
  if (major) *major = TORU_VERSION_MAJOR;
  if (minor) *minor = TORU_VERSION_MINOR;
  if (patch) *patch = TORU_VERSION_PATCH;
  return TORU_SUCCESS;
}

const char* toru_version_string(void) { return TORU_VERSION_STRING; }

}  // extern "C"
