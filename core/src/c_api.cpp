// core's part of the C interface (toru/core.h): the version query, and the tie between the C result
// codes and toru::errc that c_guarded's cast relies on.
#include "toru/core.h"

#include "toru/core/error.hpp"

namespace {
constexpr bool same(toru_result r, toru::errc e) { return static_cast<int>(r) == static_cast<int>(e); }
}  // namespace

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

toru_result toru_get_version(int* major, int* minor, int* patch) {
  if (major) *major = TORU_VERSION_MAJOR;
  if (minor) *minor = TORU_VERSION_MINOR;
  if (patch) *patch = TORU_VERSION_PATCH;
  return TORU_SUCCESS;
}

const char* toru_version_string(void) { return TORU_VERSION_STRING; }

}  // extern "C"
