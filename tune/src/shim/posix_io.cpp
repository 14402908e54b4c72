// SPDX-License-Identifier: BSD-3-Clause
// POSIX I/O wrappers (open, read, write, pread, pwrite, fsync, fdatasync, close): time and bytes per
// call site, between MPI_Init and MPI_Finalize, outside MPI calls. TORU_TUNE_IO=0 turns them off.
// Only calls that go through the dynamic symbol are seen: stdio's buffered writes reach write()
// inside libc and are not (see docs/tune.md).
#include <dlfcn.h>
#include <execinfo.h>
#include <fcntl.h>
#include <sys/types.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdlib>
#include <cstring>

#include "recorder.hpp"

using namespace toru::tune::shim;

#define TORU_RA __builtin_return_address(0)
#define TORU_EXPORT extern "C" __attribute__((visibility("default")))

namespace {
bool io_enabled() {
  static const bool on = [] {
    const char* v = std::getenv("TORU_TUNE_IO");
    return !(v && std::strcmp(v, "0") == 0);
  }();
  return on;
}
// Main thread only: MPI's own helper threads read and write sockets and pipes.
bool watching() {
  const recorder& r = recorder::get();
  return r.active() && !busy_guard::busy() && io_enabled() && r.on_main_thread();
}

template <class Fn>
Fn next(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

bool in_sanitizer_runtime(const void* addr) {
  Dl_info info;
  return dladdr(addr, &info) && info.dli_fname &&
         (std::strstr(info.dli_fname, "libasan") || std::strstr(info.dli_fname, "libtsan") ||
          std::strstr(info.dli_fname, "libubsan"));
}

// A program built with ASan or TSan calls the sanitizer's interceptor of write() & co., which then
// calls ours: the return address is inside the sanitizer's runtime, so the call site is the first
// frame past it. Main thread only (watching()), so the one-entry cache needs no lock.
void* call_site(void* ra) {
  static void* last_ra = nullptr;
  static bool last_in_runtime = false;
  if (ra != last_ra) {
    last_ra = ra;
    last_in_runtime = in_sanitizer_runtime(ra);
  }
  if (!last_in_runtime) return ra;
  void* frames[32];
  const int n = backtrace(frames, 32);
  for (int i = 1; i < n; ++i)
    if (in_sanitizer_runtime(frames[i]))
      for (int j = i + 1; j < n; ++j)
        if (!in_sanitizer_runtime(frames[j])) return frames[j];
  return ra;
}

template <class Call>
auto timed_io(void* ra, fn func, Call&& call) {
  recorder& r = recorder::get();
  const double t0 = r.now();
  auto rc = call();
  const double t1 = r.now();
  const std::uint64_t bytes = rc > 0 && (func == f_io_read || func == f_io_write) ? static_cast<std::uint64_t>(rc) : 0;
  busy_guard g;  // the recorder may allocate, backtrace() may load libgcc_s: their I/O must not recurse
  r.io(call_site(ra), func, t0, t1, bytes);
  return rc;
}
}  // namespace

TORU_EXPORT int open(const char* path, int flags, ...) {
  static const auto real = next<int (*)(const char*, int, ...)>("open");
  mode_t mode = 0;
  if (flags & (O_CREAT | O_TMPFILE)) {
    va_list ap;
    va_start(ap, flags);
    mode = static_cast<mode_t>(va_arg(ap, int));
    va_end(ap);
  }
  if (!watching()) return real(path, flags, mode);
  return timed_io(TORU_RA, f_io_open, [&] { return real(path, flags, mode); });
}

TORU_EXPORT int open64(const char* path, int flags, ...) {
  static const auto real = next<int (*)(const char*, int, ...)>("open64");
  mode_t mode = 0;
  if (flags & (O_CREAT | O_TMPFILE)) {
    va_list ap;
    va_start(ap, flags);
    mode = static_cast<mode_t>(va_arg(ap, int));
    va_end(ap);
  }
  if (!watching()) return real(path, flags, mode);
  return timed_io(TORU_RA, f_io_open, [&] { return real(path, flags, mode); });
}

TORU_EXPORT ssize_t write(int fd, const void* buf, size_t n) {
  static const auto real = next<ssize_t (*)(int, const void*, size_t)>("write");
  if (!watching()) return real(fd, buf, n);
  return timed_io(TORU_RA, f_io_write, [&] { return real(fd, buf, n); });
}

TORU_EXPORT ssize_t pwrite(int fd, const void* buf, size_t n, off_t off) {
  static const auto real = next<ssize_t (*)(int, const void*, size_t, off_t)>("pwrite");
  if (!watching()) return real(fd, buf, n, off);
  return timed_io(TORU_RA, f_io_write, [&] { return real(fd, buf, n, off); });
}

TORU_EXPORT ssize_t read(int fd, void* buf, size_t n) {
  static const auto real = next<ssize_t (*)(int, void*, size_t)>("read");
  if (!watching()) return real(fd, buf, n);
  return timed_io(TORU_RA, f_io_read, [&] { return real(fd, buf, n); });
}

TORU_EXPORT ssize_t pread(int fd, void* buf, size_t n, off_t off) {
  static const auto real = next<ssize_t (*)(int, void*, size_t, off_t)>("pread");
  if (!watching()) return real(fd, buf, n, off);
  return timed_io(TORU_RA, f_io_read, [&] { return real(fd, buf, n, off); });
}

TORU_EXPORT int fsync(int fd) {
  static const auto real = next<int (*)(int)>("fsync");
  if (!watching()) return real(fd);
  return timed_io(TORU_RA, f_io_fsync, [&] { return real(fd); });
}

TORU_EXPORT int fdatasync(int fd) {
  static const auto real = next<int (*)(int)>("fdatasync");
  if (!watching()) return real(fd);
  return timed_io(TORU_RA, f_io_fsync, [&] { return real(fd); });
}

TORU_EXPORT int close(int fd) {
  static const auto real = next<int (*)(int)>("close");
  if (!watching()) return real(fd);
  return timed_io(TORU_RA, f_io_close, [&] { return real(fd); });
}
