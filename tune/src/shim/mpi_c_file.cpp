// SPDX-License-Identifier: BSD-3-Clause
// C wrappers of MPI-IO: recorded as I/O (the I/O sites and the open/read/write/close totals the
// I/O rules read), not as MPI time; the POSIX calls the MPI-IO layer makes inside are not counted
// again. Bytes are those the status reports transferred (the requested ones where it has none, and
// for the nonblocking iread/iwrite, whose status comes with their wait). The shared file pointer's
// calls (_shared, and _ordered, their collective form) are recorded alike; moving that pointer
// (File_seek_shared) moves no data and, as File_seek, is not wrapped.
#include <mpi.h>

#include "hooks.hpp"

using namespace toru::tune::shim;

#define TORU_RA __builtin_return_address(0)
#define TORU_EXPORT extern "C" __attribute__((visibility("default")))

TORU_EXPORT int MPI_File_open(MPI_Comm comm, const char* name, int amode, MPI_Info info, MPI_File* fh) {
  return hook_file(TORU_RA, f_file_open, f_io_open, [&] { return PMPI_File_open(comm, name, amode, info, fh); });
}

TORU_EXPORT int MPI_File_close(MPI_File* fh) {
  return hook_file(TORU_RA, f_file_close, f_io_close, [&] { return PMPI_File_close(fh); });
}

TORU_EXPORT int MPI_File_read(MPI_File fh, void* buf, int count, MPI_Datatype type, MPI_Status* status) {
  return hook_file_rw(
      TORU_RA, f_file_read, f_io_read, [&](MPI_Status* st) { return PMPI_File_read(fh, buf, count, type, st); }, count,
      type, status);
}

TORU_EXPORT int MPI_File_read_at(MPI_File fh, MPI_Offset off, void* buf, int count, MPI_Datatype type,
                                 MPI_Status* status) {
  return hook_file_rw(
      TORU_RA, f_file_read_at, f_io_read,
      [&](MPI_Status* st) { return PMPI_File_read_at(fh, off, buf, count, type, st); }, count, type, status);
}

TORU_EXPORT int MPI_File_read_all(MPI_File fh, void* buf, int count, MPI_Datatype type, MPI_Status* status) {
  return hook_file_rw(
      TORU_RA, f_file_read_all, f_io_read, [&](MPI_Status* st) { return PMPI_File_read_all(fh, buf, count, type, st); },
      count, type, status);
}

TORU_EXPORT int MPI_File_read_at_all(MPI_File fh, MPI_Offset off, void* buf, int count, MPI_Datatype type,
                                     MPI_Status* status) {
  return hook_file_rw(
      TORU_RA, f_file_read_at_all, f_io_read,
      [&](MPI_Status* st) { return PMPI_File_read_at_all(fh, off, buf, count, type, st); }, count, type, status);
}

TORU_EXPORT int MPI_File_write(MPI_File fh, const void* buf, int count, MPI_Datatype type, MPI_Status* status) {
  return hook_file_rw(
      TORU_RA, f_file_write, f_io_write, [&](MPI_Status* st) { return PMPI_File_write(fh, buf, count, type, st); },
      count, type, status);
}

TORU_EXPORT int MPI_File_write_at(MPI_File fh, MPI_Offset off, const void* buf, int count, MPI_Datatype type,
                                  MPI_Status* status) {
  return hook_file_rw(
      TORU_RA, f_file_write_at, f_io_write,
      [&](MPI_Status* st) { return PMPI_File_write_at(fh, off, buf, count, type, st); }, count, type, status);
}

TORU_EXPORT int MPI_File_write_all(MPI_File fh, const void* buf, int count, MPI_Datatype type, MPI_Status* status) {
  return hook_file_rw(
      TORU_RA, f_file_write_all, f_io_write,
      [&](MPI_Status* st) { return PMPI_File_write_all(fh, buf, count, type, st); }, count, type, status);
}

TORU_EXPORT int MPI_File_write_at_all(MPI_File fh, MPI_Offset off, const void* buf, int count, MPI_Datatype type,
                                      MPI_Status* status) {
  return hook_file_rw(
      TORU_RA, f_file_write_at_all, f_io_write,
      [&](MPI_Status* st) { return PMPI_File_write_at_all(fh, off, buf, count, type, st); }, count, type, status);
}

TORU_EXPORT int MPI_File_iread(MPI_File fh, void* buf, int count, MPI_Datatype type, MPI_Request* req) {
  return hook_file_irw(
      TORU_RA, f_file_iread, f_io_read, [&] { return PMPI_File_iread(fh, buf, count, type, req); }, count, type);
}

TORU_EXPORT int MPI_File_iread_at(MPI_File fh, MPI_Offset off, void* buf, int count, MPI_Datatype type,
                                  MPI_Request* req) {
  return hook_file_irw(
      TORU_RA, f_file_iread_at, f_io_read, [&] { return PMPI_File_iread_at(fh, off, buf, count, type, req); }, count,
      type);
}

TORU_EXPORT int MPI_File_iwrite(MPI_File fh, const void* buf, int count, MPI_Datatype type, MPI_Request* req) {
  return hook_file_irw(
      TORU_RA, f_file_iwrite, f_io_write, [&] { return PMPI_File_iwrite(fh, buf, count, type, req); }, count, type);
}

TORU_EXPORT int MPI_File_iwrite_at(MPI_File fh, MPI_Offset off, const void* buf, int count, MPI_Datatype type,
                                   MPI_Request* req) {
  return hook_file_irw(
      TORU_RA, f_file_iwrite_at, f_io_write, [&] { return PMPI_File_iwrite_at(fh, off, buf, count, type, req); }, count,
      type);
}

TORU_EXPORT int MPI_File_read_shared(MPI_File fh, void* buf, int count, MPI_Datatype type, MPI_Status* status) {
  return hook_file_rw(
      TORU_RA, f_file_read_shared, f_io_read,
      [&](MPI_Status* st) { return PMPI_File_read_shared(fh, buf, count, type, st); }, count, type, status);
}

TORU_EXPORT int MPI_File_write_shared(MPI_File fh, const void* buf, int count, MPI_Datatype type, MPI_Status* status) {
  return hook_file_rw(
      TORU_RA, f_file_write_shared, f_io_write,
      [&](MPI_Status* st) { return PMPI_File_write_shared(fh, buf, count, type, st); }, count, type, status);
}

TORU_EXPORT int MPI_File_read_ordered(MPI_File fh, void* buf, int count, MPI_Datatype type, MPI_Status* status) {
  return hook_file_rw(
      TORU_RA, f_file_read_ordered, f_io_read,
      [&](MPI_Status* st) { return PMPI_File_read_ordered(fh, buf, count, type, st); }, count, type, status);
}

TORU_EXPORT int MPI_File_write_ordered(MPI_File fh, const void* buf, int count, MPI_Datatype type, MPI_Status* status) {
  return hook_file_rw(
      TORU_RA, f_file_write_ordered, f_io_write,
      [&](MPI_Status* st) { return PMPI_File_write_ordered(fh, buf, count, type, st); }, count, type, status);
}

TORU_EXPORT int MPI_File_iread_shared(MPI_File fh, void* buf, int count, MPI_Datatype type, MPI_Request* req) {
  return hook_file_irw(
      TORU_RA, f_file_iread_shared, f_io_read, [&] { return PMPI_File_iread_shared(fh, buf, count, type, req); }, count,
      type);
}

TORU_EXPORT int MPI_File_iwrite_shared(MPI_File fh, const void* buf, int count, MPI_Datatype type, MPI_Request* req) {
  return hook_file_irw(
      TORU_RA, f_file_iwrite_shared, f_io_write, [&] { return PMPI_File_iwrite_shared(fh, buf, count, type, req); },
      count, type);
}
