// SPDX-License-Identifier: BSD-3-Clause
// Point-to-point on a ring: completion calls (Waitany, Waitsome, Testany, Testall, Testsome),
// persistent requests reused across Start/Startall and Wait/Waitall, Probe/Iprobe and
// Mprobe/Improbe/Mrecv/Imrecv, Sendrecv_replace. Received data are checked, so a wrapper that disturbed a request fails
// here.
#include "expect.h"

enum { chunk = 64 };

static void fill(double* x, int n, int from) {
  for (int i = 0; i < n; ++i) x[i] = from * 1000 + i;
}
static void check(const double* x, int n, int from) {
  for (int i = 0; i < n; ++i) CHECK(x[i] == from * 1000 + i);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  expect_open(argv[1]);
  int rank = 0, n = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  const int right = (rank + 1) % n, left = (rank + n - 1) % n;
  double out[4][chunk], in[4][chunk];
  for (int k = 0; k < 4; ++k) fill(out[k], chunk, rank);
  MPI_Request r[4];
  long isend_calls = 0, isend_bytes = 0, irecv_calls = 0, irecv_bytes = 0;
  // Irecv and Isend are counted where posted (bytes as posted); receives again at completion.
#define POST_RECV(buf, cnt, src, tag, req)                          \
  do {                                                              \
    MPI_Irecv(buf, cnt, MPI_DOUBLE, src, tag, MPI_COMM_WORLD, req); \
    ++irecv_calls;                                                  \
    irecv_bytes += 8 * (cnt);                                       \
    expect("MPI_Irecv", 0, 0, src, 8 * (cnt));                      \
  } while (0)
#define POST_SEND(buf, cnt, dst, tag, req)                          \
  do {                                                              \
    MPI_Isend(buf, cnt, MPI_DOUBLE, dst, tag, MPI_COMM_WORLD, req); \
    ++isend_calls;                                                  \
    isend_bytes += 8 * (cnt);                                       \
    expect("MPI_Isend", 0, 0, dst, 8 * (cnt));                      \
  } while (0)

  // Waitany: 7 doubles from the left.
  POST_RECV(in[0], 7, left, 1, &r[0]);
  POST_SEND(out[0], 7, right, 1, &r[1]);
  for (int k = 0; k < 2; ++k) {
    int index = -1;
    MPI_Waitany(2, r, &index, MPI_STATUS_IGNORE);
  }
  check(in[0], 7, left);
  expect("MPI_Waitany", 2, 56, left, 56);

  // Waitsome: 3 doubles from the left (tag 2), 5 from the right (tag 3); statuses ignored.
  POST_RECV(in[0], 3, left, 2, &r[0]);
  POST_RECV(in[1], 5, right, 3, &r[1]);
  POST_SEND(out[0], 3, right, 2, &r[2]);
  POST_SEND(out[1], 5, left, 3, &r[3]);
  long calls = 0;
  for (int done = 0; done < 4;) {
    int outcount = 0, indices[4];
    MPI_Waitsome(4, r, &outcount, indices, MPI_STATUSES_IGNORE);
    ++calls;
    done += outcount;
  }
  check(in[0], 3, left);
  check(in[1], 5, right);
  expect("MPI_Waitsome", calls, 64, left, 24);
  expect("MPI_Waitsome", 0, 0, right, 40);

  // Testall: 4 doubles from the left.
  POST_RECV(in[0], 4, left, 4, &r[0]);
  POST_SEND(out[0], 4, right, 4, &r[1]);
  calls = 0;
  for (int flag = 0; !flag; ++calls) MPI_Testall(2, r, &flag, MPI_STATUSES_IGNORE);
  check(in[0], 4, left);
  expect("MPI_Testall", calls, 32, left, 32);

  // Testany: 6 doubles from the left; loops until both requests are done.
  POST_RECV(in[0], 6, left, 5, &r[0]);
  POST_SEND(out[0], 6, right, 5, &r[1]);
  calls = 0;
  for (int done = 0; done < 2; ++calls) {
    int index = -1, flag = 0;
    MPI_Status st;
    MPI_Testany(2, r, &index, &flag, &st);
    if (flag && index != MPI_UNDEFINED) ++done;
  }
  check(in[0], 6, left);
  expect("MPI_Testany", calls, 48, left, 48);

  // Testsome with a statuses array: 9 doubles from the left.
  POST_RECV(in[0], 9, left, 6, &r[0]);
  POST_SEND(out[0], 9, right, 6, &r[1]);
  calls = 0;
  for (int done = 0; done < 2; ++calls) {
    int outcount = 0, indices[2];
    MPI_Status st[2];
    MPI_Testsome(2, r, &outcount, indices, st);
    if (outcount != MPI_UNDEFINED) done += outcount;
  }
  check(in[0], 9, left);
  expect("MPI_Testsome", calls, 72, left, 72);
  expect("MPI_Isend", isend_calls, isend_bytes, -1, 0);
  expect("MPI_Irecv", irecv_calls, irecv_bytes, -1, 0);

  // Persistent: 10 doubles right to left... each request started 3 times by Startall, then twice
  // by Start; Wait must leave them usable (the data check of every round proves it).
  MPI_Request p[2];
  MPI_Recv_init(in[2], 10, MPI_DOUBLE, left, 7, MPI_COMM_WORLD, &p[0]);
  MPI_Send_init(out[2], 10, MPI_DOUBLE, right, 7, MPI_COMM_WORLD, &p[1]);
  expect("MPI_Recv_init", 1, 0, left, 0);
  expect("MPI_Send_init", 1, 0, right, 0);
  for (int k = 0; k < 3; ++k) {
    in[2][0] = -1;
    MPI_Startall(2, p);
    MPI_Waitall(2, p, MPI_STATUSES_IGNORE);
    check(in[2], 10, left);
  }
  expect("MPI_Startall", 3, 3 * 80, right, 3 * 80);
  expect("MPI_Waitall", 3, 3 * 80, left, 3 * 80);
  for (int k = 0; k < 2; ++k) {
    in[2][0] = -1;
    MPI_Start(&p[0]);
    MPI_Start(&p[1]);
    MPI_Status st;
    MPI_Wait(&p[0], &st);
    CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 7);
    MPI_Wait(&p[1], MPI_STATUS_IGNORE);
    check(in[2], 10, left);
  }
  expect("MPI_Start", 4, 2 * 80, right, 2 * 80);
  expect("MPI_Wait", 4, 2 * 80, left, 2 * 80);
  MPI_Request_free(&p[0]);
  MPI_Request_free(&p[1]);

  // Probe and Iprobe: the source found is the partner (no bytes move in a probe).
  MPI_Send(out[3], 11, MPI_DOUBLE, right, 8, MPI_COMM_WORLD);
  MPI_Status st;
  MPI_Probe(MPI_ANY_SOURCE, 8, MPI_COMM_WORLD, &st);
  CHECK(st.MPI_SOURCE == left);
  MPI_Recv(in[3], 11, MPI_DOUBLE, left, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  check(in[3], 11, left);
  expect("MPI_Probe", 1, 0, left, 0);
  MPI_Send(out[3], 13, MPI_DOUBLE, right, 9, MPI_COMM_WORLD);
  calls = 0;
  for (int flag = 0; !flag; ++calls) MPI_Iprobe(left, 9, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
  MPI_Recv(in[3], 13, MPI_DOUBLE, left, 9, MPI_COMM_WORLD, &st);
  check(in[3], 13, left);
  expect("MPI_Iprobe", calls, 0, left, 0);
  expect("MPI_Send", 2, 8 * 24, right, 8 * 24);
  expect("MPI_Recv", 2, 8 * 24, left, 8 * 24);

  // Matched probes: Mprobe then Mrecv (17 doubles), Improbe until found then Imrecv (19 doubles,
  // completed by Wait). The probes' partner is the source found; the receives get the bytes.
  MPI_Send(out[3], 17, MPI_DOUBLE, right, 11, MPI_COMM_WORLD);
  MPI_Message msg;
  MPI_Mprobe(MPI_ANY_SOURCE, 11, MPI_COMM_WORLD, &msg, &st);
  CHECK(st.MPI_SOURCE == left);
  MPI_Mrecv(in[3], 17, MPI_DOUBLE, &msg, MPI_STATUS_IGNORE);
  check(in[3], 17, left);
  expect("MPI_Mprobe", 1, 0, left, 0);
  expect("MPI_Mrecv", 1, 136, left, 136);
  MPI_Send(out[3], 19, MPI_DOUBLE, right, 12, MPI_COMM_WORLD);
  calls = 0;
  for (int flag = 0; !flag; ++calls) MPI_Improbe(left, 12, MPI_COMM_WORLD, &flag, &msg, MPI_STATUS_IGNORE);
  MPI_Request mr;
  MPI_Imrecv(in[3], 19, MPI_DOUBLE, &msg, &mr);
  MPI_Wait(&mr, &st);
  check(in[3], 19, left);
  expect("MPI_Improbe", calls, 0, left, 0);
  expect("MPI_Imrecv", 1, 152, -1, 0);  // posted bytes; the source is known at completion
  expect("MPI_Wait", 1, 152, left, 152);
  expect("MPI_Send", 2, 8 * 36, right, 8 * 36);

  // Sendrecv_replace: 15 doubles to the right, replaced by the left's.
  fill(in[3], 15, rank);
  MPI_Sendrecv_replace(in[3], 15, MPI_DOUBLE, right, 10, left, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  check(in[3], 15, left);
  expect("MPI_Sendrecv_replace", 1, 120, right, 120);

  expect_close();
  MPI_Finalize();
  return 0;
}
