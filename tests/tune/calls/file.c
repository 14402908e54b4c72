// SPDX-License-Identifier: BSD-3-Clause
// MPI-IO: every rank writes and reads back its own blocks of one shared file with the explicit
// offset, individual pointer and collective calls; the data read are checked.
#include <string.h>

#include "expect.h"

enum { block = 64 };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  expect_open(argv[1]);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  char path[4096];
  snprintf(path, sizeof path, "%s/data.bin", argv[1]);
  MPI_File fh;
  MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
  int out[4][block], in[block];
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < block; ++i) out[k][i] = rank * 1000 + k * 100 + i;
  const MPI_Offset base = (MPI_Offset)rank * 4 * block * (MPI_Offset)sizeof(int);
  const MPI_Offset at[4] = {base, base + block * 4, base + 2 * block * 4, base + 3 * block * 4};
  const int cnt[4] = {5 + rank, 7, 11 + rank, 13};  // ints per block

  MPI_File_write_at(fh, at[0], out[0], cnt[0], MPI_INT, MPI_STATUS_IGNORE);
  MPI_File_write_at_all(fh, at[1], out[1], cnt[1], MPI_INT, MPI_STATUS_IGNORE);
  MPI_File_seek(fh, at[2], MPI_SEEK_SET);
  MPI_Status st;
  MPI_File_write(fh, out[2], cnt[2], MPI_INT, &st);
  MPI_File_seek(fh, at[3], MPI_SEEK_SET);
  MPI_File_write_all(fh, out[3], cnt[3], MPI_INT, MPI_STATUS_IGNORE);
  MPI_File_sync(fh);
  MPI_Barrier(MPI_COMM_WORLD);

  memset(in, 0, sizeof in);
  MPI_File_read_at(fh, at[0], in, cnt[0], MPI_INT, MPI_STATUS_IGNORE);
  CHECK(memcmp(in, out[0], sizeof(int) * (size_t)cnt[0]) == 0);
  MPI_File_read_at_all(fh, at[1], in, cnt[1], MPI_INT, &st);
  CHECK(memcmp(in, out[1], sizeof(int) * (size_t)cnt[1]) == 0);
  MPI_File_seek(fh, at[2], MPI_SEEK_SET);
  MPI_File_read(fh, in, cnt[2], MPI_INT, MPI_STATUS_IGNORE);
  CHECK(memcmp(in, out[2], sizeof(int) * (size_t)cnt[2]) == 0);
  MPI_File_seek(fh, at[3], MPI_SEEK_SET);
  MPI_File_read_all(fh, in, cnt[3], MPI_INT, MPI_STATUS_IGNORE);
  CHECK(memcmp(in, out[3], sizeof(int) * (size_t)cnt[3]) == 0);
  // Nonblocking: bytes as requested when posted.
  MPI_Request rq;
  MPI_File_iwrite_at(fh, at[0], out[1], cnt[1], MPI_INT, &rq);
  MPI_Wait(&rq, MPI_STATUS_IGNORE);
  memset(in, 0, sizeof in);
  MPI_File_iread_at(fh, at[0], in, cnt[1], MPI_INT, &rq);
  MPI_Wait(&rq, MPI_STATUS_IGNORE);
  CHECK(memcmp(in, out[1], sizeof(int) * (size_t)cnt[1]) == 0);
  MPI_File_seek(fh, at[2], MPI_SEEK_SET);
  MPI_File_iwrite(fh, out[3], cnt[0], MPI_INT, &rq);
  MPI_Wait(&rq, MPI_STATUS_IGNORE);
  MPI_File_seek(fh, at[2], MPI_SEEK_SET);
  MPI_File_iread(fh, in, cnt[0], MPI_INT, &rq);
  MPI_Wait(&rq, MPI_STATUS_IGNORE);
  CHECK(memcmp(in, out[3], sizeof(int) * (size_t)cnt[0]) == 0);
  MPI_File_close(&fh);
  expect("MPI_File_iwrite_at", 1, 4LL * cnt[1], -1, 0);
  expect("MPI_File_iread_at", 1, 4LL * cnt[1], -1, 0);
  expect("MPI_File_iwrite", 1, 4LL * cnt[0], -1, 0);
  expect("MPI_File_iread", 1, 4LL * cnt[0], -1, 0);
  expect("MPI_Wait", 4, 0, -1, 0);

  const char* w[4] = {"MPI_File_write_at", "MPI_File_write_at_all", "MPI_File_write", "MPI_File_write_all"};
  const char* r[4] = {"MPI_File_read_at", "MPI_File_read_at_all", "MPI_File_read", "MPI_File_read_all"};
  for (int k = 0; k < 4; ++k) {
    expect(w[k], 1, 4LL * cnt[k], -1, 0);
    expect(r[k], 1, 4LL * cnt[k], -1, 0);
  }
  expect("MPI_File_open", 1, 0, -1, 0);
  expect("MPI_File_close", 1, 0, -1, 0);
  expect_close();
  MPI_Finalize();
  return 0;
}
