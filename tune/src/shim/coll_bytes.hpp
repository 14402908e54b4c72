// SPDX-License-Identifier: BSD-3-Clause
// What a rank contributes to a collective, in bytes: its send side, the receive side under
// MPI_IN_PLACE. Shared by the C and Fortran wrappers so both count a call alike.
#pragma once

#include <mpi.h>

#include <cstdint>

#include "hooks.hpp"

namespace toru::tune::shim {

inline int comm_size(MPI_Comm comm) {
  int size = 1;
  PMPI_Comm_size(comm, &size);
  return size;
}
inline std::uint64_t counts_bytes(const int counts[], int n, MPI_Datatype type) {
  long long total = 0;
  for (int i = 0; i < n; ++i) total += counts[i];
  return type_bytes(type, total);
}
/// Alltoallw's types as a function of the index: C handles, or Fortran ones converted.
template <class Type>
std::uint64_t w_bytes(const int counts[], Type&& type, int n) {
  std::uint64_t total = 0;
  for (int i = 0; i < n; ++i) total += type_bytes(type(i), counts[i]);
  return total;
}
/// Allgatherv in place: this rank's block of the receive buffer is its contribution.
inline std::uint64_t allgatherv_bytes(bool in_place, int scount, MPI_Datatype stype, const int rcounts[],
                                      MPI_Datatype rtype, MPI_Comm comm) {
  if (!in_place) return type_bytes(stype, scount);
  int rank = 0;
  PMPI_Comm_rank(comm, &rank);
  return type_bytes(rtype, rcounts[rank]);
}
inline std::uint64_t alltoall_bytes(bool in_place, int scount, MPI_Datatype stype, int rcount, MPI_Datatype rtype,
                                    MPI_Comm comm) {
  const long long n = comm_size(comm);
  return in_place ? type_bytes(rtype, rcount * n) : type_bytes(stype, scount * n);
}
inline std::uint64_t alltoallv_bytes(bool in_place, const int scounts[], MPI_Datatype stype, const int rcounts[],
                                     MPI_Datatype rtype, MPI_Comm comm) {
  const int n = comm_size(comm);
  return in_place ? counts_bytes(rcounts, n, rtype) : counts_bytes(scounts, n, stype);
}
inline std::uint64_t alltoallw_bytes(bool in_place, const int scounts[], const MPI_Datatype stypes[],
                                     const int rcounts[], const MPI_Datatype rtypes[], MPI_Comm comm) {
  const int n = comm_size(comm);
  return in_place ? w_bytes(
                        rcounts, [&](int i) { return rtypes[i]; }, n)
                  : w_bytes(
                        scounts, [&](int i) { return stypes[i]; }, n);
}

}  // namespace toru::tune::shim
