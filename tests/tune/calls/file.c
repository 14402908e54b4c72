// SPDX-License-Identifier: BSD-3-Clause
// MPI-IO: every rank writes and reads back its own blocks of one shared file with the explicit
// offset, individual pointer and collective calls, then blocks of a second file through the shared
// file pointer (ordered and not); the data read are checked.
//
// The ranks' blocks never overlap, so under MPI's consistency rules (non-atomic mode) the accesses
// do not conflict and need no sync. Open MPI 4.1's ompio breaks that: a collective write's
// aggregator reads, fills and rewrites the whole span of the ranks' blocks (fbtl/posix data
// sieving, without locks on a local file system), so an independent write another rank makes
// into a gap of that span right after its part of the collective returns can be lost (the check of
// rank 1's individual-pointer block failed so in about 2% of runs). MPI_File_sync, MPI_Barrier, MPI_File_sync after
// each collective write that independent writes follow (the standard's recipe for ordering accesses across processes)
// lets the aggregator finish first. The program stays a test of the shim: MPI_File_sync is not wrapped and MPI_Barrier
// is not among the expectations.
#include <string.h>

#include "expect.h"

enum { block = 64, max_ranks = 16 };

// Open MPI 4.1 guards a file's shared pointer (sharedfp/sm) with a named semaphore called after the
// file's basename only, so concurrent runs (ctest -j) with the same basename share it: the files are
// named after the run's own directory (argv[1]).
static void file_path(char* path, size_t size, const char* dir, const char* what) {
  const char* slash = strrchr(dir, '/');
  snprintf(path, size, "%s/%s-%s.bin", dir, slash && slash[1] ? slash + 1 : "run", what);
}

// Orders this rank's file accesses after every rank's earlier ones (MPI's sync-barrier-sync).
static void settle(MPI_File fh) {
  MPI_File_sync(fh);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_File_sync(fh);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  expect_open(argv[1]);
  int rank = 0, n = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  CHECK(n <= max_ranks);
  char path[4096];
  file_path(path, sizeof path, argv[1], "data");
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
  settle(fh);  // the next write lies in the span the collective one may rewrite
  MPI_File_seek(fh, at[2], MPI_SEEK_SET);
  MPI_Status st;
  MPI_File_write(fh, out[2], cnt[2], MPI_INT, &st);
  MPI_File_seek(fh, at[3], MPI_SEEK_SET);
  MPI_File_write_all(fh, out[3], cnt[3], MPI_INT, MPI_STATUS_IGNORE);
  settle(fh);

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

  // The shared file pointer. Ordered calls place the ranks' blocks in rank order: deterministic.
  file_path(path, sizeof path, argv[1], "shared");
  MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
  const int ord = 3 + rank;
  MPI_File_write_ordered(fh, out[0], ord, MPI_INT, &st);
  settle(fh);
  MPI_File_seek_shared(fh, 0, MPI_SEEK_SET);
  memset(in, 0, sizeof in);
  MPI_File_read_ordered(fh, in, ord, MPI_INT, &st);
  CHECK(memcmp(in, out[0], sizeof(int) * (size_t)ord) == 0);
  // Which rank gets the pointer first is not deterministic: every block is `same` ints, so each
  // read gets one whole block of some rank, and over all ranks each block is read once.
  const MPI_Offset ordered_end = 4 * (3LL * n + n * (n - 1LL) / 2);
  enum { same = 6 };
  MPI_File_write_shared(fh, out[1], same, MPI_INT, &st);
  MPI_File_iwrite_shared(fh, out[2], same, MPI_INT, &rq);
  MPI_Wait(&rq, MPI_STATUS_IGNORE);
  settle(fh);
  MPI_File_seek_shared(fh, ordered_end, MPI_SEEK_SET);
  int got[2][same], seen[2 * max_ranks] = {0};
  MPI_File_read_shared(fh, got[0], same, MPI_INT, &st);
  MPI_File_iread_shared(fh, got[1], same, MPI_INT, &rq);
  MPI_Wait(&rq, MPI_STATUS_IGNORE);
  for (int k = 0; k < 2; ++k) {
    const int writer = got[k][0] / 1000, kind = got[k][0] % 1000 / 100;  // out[1] or out[2]
    CHECK(writer >= 0 && writer < n && (kind == 1 || kind == 2));
    for (int i = 0; i < same; ++i) CHECK(got[k][i] == writer * 1000 + kind * 100 + i);
    ++seen[(kind - 1) * n + writer];
  }
  MPI_Allreduce(MPI_IN_PLACE, seen, 2 * n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  for (int i = 0; i < 2 * n; ++i) CHECK(seen[i] == 1);
  MPI_File_close(&fh);
  expect("MPI_File_write_ordered", 1, 4LL * ord, -1, 0);
  expect("MPI_File_read_ordered", 1, 4LL * ord, -1, 0);
  expect("MPI_File_write_shared", 1, 4LL * same, -1, 0);
  expect("MPI_File_iwrite_shared", 1, 4LL * same, -1, 0);
  expect("MPI_File_read_shared", 1, 4LL * same, -1, 0);
  expect("MPI_File_iread_shared", 1, 4LL * same, -1, 0);
  expect("MPI_Wait", 6, 0, -1, 0);

  const char* w[4] = {"MPI_File_write_at", "MPI_File_write_at_all", "MPI_File_write", "MPI_File_write_all"};
  const char* r[4] = {"MPI_File_read_at", "MPI_File_read_at_all", "MPI_File_read", "MPI_File_read_all"};
  for (int k = 0; k < 4; ++k) {
    expect(w[k], 1, 4LL * cnt[k], -1, 0);
    expect(r[k], 1, 4LL * cnt[k], -1, 0);
  }
  expect("MPI_File_open", 2, 0, -1, 0);
  expect("MPI_File_close", 2, 0, -1, 0);
  expect_close();
  MPI_Finalize();
  return 0;
}
