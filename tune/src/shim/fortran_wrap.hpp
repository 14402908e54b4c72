// SPDX-License-Identifier: BSD-3-Clause
// How one Fortran wrapper is described once and exported for both Fortran bindings Open MPI has:
// mpi_NAME_ (mpif.h and `use mpi`) and mpi_NAME_f08_ (`use mpi_f08`). The two pass the same
// arguments (f08 handles are a derived type holding the INTEGER handle; the status is the same
// INTEGER array; buffers are addresses; MPI_IN_PLACE and MPI_STATUS(ES)_IGNORE are the same common
// blocks), except that f08's ierror is OPTIONAL: a null pointer when omitted. Each forwards to its
// own pmpi_NAME_ / pmpi_NAME_f08_, looked up at first use.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <vector>

#include "fortran_real.hpp"
#include "hooks.hpp"

namespace toru::tune::shim::fortran {

using F = MPI_Fint;
static_assert(sizeof(F) == sizeof(int), "Fortran INTEGER arrays (counts, displacements) are read as int arrays");

inline MPI_Comm C(const F* h) { return PMPI_Comm_f2c(*h); }
inline MPI_Datatype T(const F* h) { return PMPI_Type_f2c(*h); }
inline MPI_Win W(const F* h) { return PMPI_Win_f2c(*h); }
inline const int* I(const F* a) { return reinterpret_cast<const int*>(a); }
inline std::uint64_t B(const F* type, const F* count) { return type_bytes(T(type), *count); }

}  // namespace toru::tune::shim::fortran

// Open MPI's Fortran MPI_IN_PLACE (the address of a common block). Weak: another MPI lacks it.
extern "C" __attribute__((weak)) int mpi_fortran_in_place_;

namespace toru::tune::shim::fortran {

inline bool in_place(const void* buf) { return buf == static_cast<const void*>(&mpi_fortran_in_place_); }

/// A hook's status callback around a Fortran call taking `F* status`: the hooks need the source
/// and count, so an ignored status is replaced by the wrapper's own.
template <class Real>
auto with_status(F* status, Real real) {
  return [status, real](MPI_Status* st) mutable {
    F own[status_size] = {};
    F* fs = status == MPI_F_STATUS_IGNORE ? own : status;
    const int rc = real(fs);
    if (rc == MPI_SUCCESS && st != MPI_STATUS_IGNORE) PMPI_Status_f2c(fs, st);
    return rc;
  };
}

/// The completion calls (Wait*, Test*): requests, statuses, flags and the 1-based indices of
/// Fortran converted around hook_wait. `real(F* fstatuses)` makes the call.
template <class Real>
int hook_fwait(void* ra, fn func, Real real, const F* freqs, int n, F* fstatuses, completed done) {
  if (tracing_off()) return real(fstatuses);
  constexpr int small = 16;
  MPI_Request creqs_small[small];
  int cind_small[small];
  F own_small[small * status_size];
  std::vector<MPI_Request> creqs_big;
  std::vector<int> cind_big;
  std::vector<F> own_big;
  MPI_Request* creqs = creqs_small;
  int* cind = cind_small;
  F* own = own_small;
  const int n_st = done.which == completed::one ? 1 : n;
  if (n > small) {
    creqs_big.resize(static_cast<std::size_t>(n));
    cind_big.resize(static_cast<std::size_t>(n));
    own_big.resize(static_cast<std::size_t>(n) * status_size);
    creqs = creqs_big.data();
    cind = cind_big.data();
    own = own_big.data();
  }
  for (int i = 0; i < n; ++i) creqs[i] = PMPI_Request_f2c(freqs[i]);
  const bool ignored = fstatuses == MPI_F_STATUS_IGNORE || fstatuses == MPI_F_STATUSES_IGNORE;
  F* fs = ignored ? own : fstatuses;
  const int* findex = done.index;  // Fortran's, 1-based
  const int* foutcount = done.outcount;
  const int* findices = done.indices;
  int cindex = MPI_UNDEFINED, coutcount = MPI_UNDEFINED;
  if (done.which == completed::one) done.index = &cindex;
  if (done.which == completed::some) {
    done.outcount = &coutcount;
    done.indices = cind;
  }
  return hook_wait(
      ra, func,
      [&](MPI_Status* st) {
        const int rc = real(fs);
        if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) return rc;
        int m = n_st;
        if (done.which == completed::one && *findex != MPI_UNDEFINED) cindex = *findex - 1;
        if (done.which == completed::some) {
          coutcount = *foutcount;
          m = coutcount == MPI_UNDEFINED ? 0 : std::clamp(coutcount, 0, n);
          for (int k = 0; k < m; ++k) cind[k] = findices[k] - 1;
        }
        if (done.which == completed::one && cindex == MPI_UNDEFINED) m = 0;
        if (done.flag && !*done.flag) m = 0;
        if (st == MPI_STATUSES_IGNORE) m = 0;
        for (int k = 0; k < m; ++k) PMPI_Status_f2c(fs + k * status_size, st + k);
        return rc;
      },
      creqs, n, MPI_STATUSES_IGNORE, done);
}

}  // namespace toru::tune::shim::fortran

#define TORU_FORTRAN_EXPORT extern "C" __attribute__((visibility("default")))
#define TORU_UNPAREN(...) __VA_ARGS__

/// TORU_FORTRAN(name, (typed parameters), (their names), body...): defines mpi_name_ and
/// mpi_name_f08_ (parameters, then F* ierr). In the body, `ra` is the caller's return address and
/// `real(args...)` calls the binding's own pmpi symbol with them and ierr, returning *ierr.
#define TORU_FORTRAN(name, params, names, ...) TORU_FORTRAN_PREFIX(mpi, name, params, names, __VA_ARGS__)

/// As TORU_FORTRAN with another prefix: TORU_FORTRAN_PREFIX(mpix, ...) defines mpix_name_ and
/// mpix_name_f08_ over pmpix_name_ and pmpix_name_f08_ (Open MPI's extensions).
#define TORU_FORTRAN_PREFIX(prefix, name, params, names, ...)                                                         \
  namespace toru_fortran_##prefix##_##name {                                                                          \
    using namespace toru::tune::shim;                                                                                 \
    using namespace toru::tune::shim::fortran;                                                                        \
    using real_t = void (*)(TORU_UNPAREN params, F * ierr);                                                           \
    [[maybe_unused]] inline void body([[maybe_unused]] void* ra, real_t real_fn, TORU_UNPAREN params, F* ierr) {      \
      [[maybe_unused]] auto real = [&](auto... a) {                                                                   \
        real_fn(a..., ierr);                                                                                          \
        return static_cast<int>(*ierr);                                                                               \
      };                                                                                                              \
      __VA_ARGS__;                                                                                                    \
    }                                                                                                                 \
  }                                                                                                                   \
  TORU_FORTRAN_EXPORT void prefix##_##name##_(TORU_UNPAREN params, toru::tune::shim::fortran::F* ierr) {              \
    static const auto fn = toru::tune::shim::real<toru_fortran_##prefix##_##name::real_t>("p" #prefix "_" #name "_"); \
    toru_fortran_##prefix##_##name::body(__builtin_return_address(0), fn, TORU_UNPAREN names, ierr);                  \
  }                                                                                                                   \
  TORU_FORTRAN_EXPORT void prefix##_##name##_f08_(TORU_UNPAREN params, toru::tune::shim::fortran::F* ierr) {          \
    static const auto fn =                                                                                            \
        toru::tune::shim::real<toru_fortran_##prefix##_##name::real_t>("p" #prefix "_" #name "_f08_");                \
    toru::tune::shim::fortran::F own = MPI_SUCCESS;                                                                   \
    toru_fortran_##prefix##_##name::body(__builtin_return_address(0), fn, TORU_UNPAREN names, ierr ? ierr : &own);    \
  }
