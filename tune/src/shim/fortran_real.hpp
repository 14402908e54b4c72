// SPDX-License-Identifier: BSD-3-Clause
// The Fortran wrappers' way to the real pmpi_*_ symbol: looked up at first use, since a C program
// never loads the Fortran library and this library must not require it.
#pragma once

#include <dlfcn.h>
#include <mpi.h>

namespace toru::tune::shim {

template <class Fn>
Fn real(const char* name) {
  void* p = dlsym(RTLD_NEXT, name);
  if (!p) p = dlsym(RTLD_DEFAULT, name);
  return reinterpret_cast<Fn>(p);
}

// A Fortran status is an INTEGER array as large as the C struct (mpif.h's MPI_STATUS_SIZE).
constexpr int status_size = static_cast<int>(sizeof(MPI_Status) / sizeof(MPI_Fint));

}  // namespace toru::tune::shim

#define TORU_REAL(name, ...)              \
  using name##_t = void (*)(__VA_ARGS__); \
  static const name##_t real_##name = toru::tune::shim::real<name##_t>(#name "_");
