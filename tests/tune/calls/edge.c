// SPDX-License-Identifier: BSD-3-Clause
// The special arguments and failures every wrapper must take: MPI_STATUS_IGNORE and
// MPI_STATUSES_IGNORE (more requests than the wrappers' fixed buffers hold), MPI_REQUEST_NULL in
// completion calls, MPI_IN_PLACE in collectives (bytes from the receive side), MPI_PROC_NULL as
// partner (counted, no bytes, no partner), and calls that fail under MPI_ERRORS_RETURN (counted,
// no bytes, no partner, and the run goes on). Received data are checked.
#include "expect.h"

enum { many = 20 };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  expect_open(argv[1]);
  int rank = 0, n = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  const int right = (rank + 1) % n, left = (rank + n - 1) % n;
  double out[many][8], in[many][8];
  for (int k = 0; k < many; ++k)
    for (int i = 0; i < 8; ++i) out[k][i] = rank * 100 + k;
  MPI_Request r[2 * many];
  long isend = 0, isend_bytes = 0, irecv = 0, irecv_bytes = 0, send = 0, send_bytes = 0, recv = 0, recv_bytes = 0;

  // --- MPI_STATUSES_IGNORE with 2 x 20 requests: 1 + k doubles from the left per request.
  long all_bytes = 0;
  for (int k = 0; k < many; ++k) {
    MPI_Irecv(in[k], 1 + k % 8, MPI_DOUBLE, left, k, MPI_COMM_WORLD, &r[k]);
    MPI_Isend(out[k], 1 + k % 8, MPI_DOUBLE, right, k, MPI_COMM_WORLD, &r[many + k]);
    ++irecv, ++isend;
    irecv_bytes += 8 * (1 + k % 8);
    isend_bytes += 8 * (1 + k % 8);
    all_bytes += 8 * (1 + k % 8);
    expect("MPI_Irecv", 0, 0, left, 8 * (1 + k % 8));
    expect("MPI_Isend", 0, 0, right, 8 * (1 + k % 8));
  }
  MPI_Waitall(2 * many, r, MPI_STATUSES_IGNORE);
  for (int k = 0; k < many; ++k) CHECK(in[k][k % 8] == left * 100 + k);
  long waitall = 1, waitall_bytes = all_bytes;
  expect("MPI_Waitall", 0, 0, left, all_bytes);

  // --- MPI_STATUS_IGNORE in Recv and Sendrecv: the bytes still come from the status.
  MPI_Send(out[0], 3, MPI_DOUBLE, right, 50, MPI_COMM_WORLD);
  MPI_Recv(in[0], 8, MPI_DOUBLE, left, 50, MPI_COMM_WORLD, MPI_STATUS_IGNORE);  // 3 of up to 8 arrive
  CHECK(in[0][2] == left * 100);
  ++send, ++recv;
  send_bytes += 24;
  recv_bytes += 24;
  expect("MPI_Send", 0, 0, right, 24);
  expect("MPI_Recv", 0, 0, left, 24);

  // --- MPI_REQUEST_NULL: mixed with one receive in Waitall, alone in Wait, Test, Waitany, Testany,
  // Testall and Testsome (which complete at once and credit nothing).
  MPI_Request mixed[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  MPI_Irecv(in[1], 5, MPI_DOUBLE, left, 51, MPI_COMM_WORLD, &mixed[1]);
  MPI_Send(out[1], 5, MPI_DOUBLE, right, 51, MPI_COMM_WORLD);
  ++irecv, ++send;
  irecv_bytes += 40;
  send_bytes += 40;
  expect("MPI_Irecv", 0, 0, left, 40);
  expect("MPI_Send", 0, 0, right, 40);
  MPI_Status st3[3];
  MPI_Waitall(3, mixed, st3);
  CHECK(st3[1].MPI_SOURCE == left && in[1][4] == left * 100 + 1);
  ++waitall;
  waitall_bytes += 40;
  expect("MPI_Waitall", 0, 0, left, 40);
  MPI_Request null = MPI_REQUEST_NULL;
  int flag = 0, index = 0, outcount = 0, indices[3];
  MPI_Status st;
  MPI_Wait(&null, &st);
  MPI_Test(&null, &flag, MPI_STATUS_IGNORE);
  CHECK(flag);
  MPI_Waitany(3, mixed, &index, &st);
  CHECK(index == MPI_UNDEFINED);
  MPI_Testany(3, mixed, &index, &flag, MPI_STATUS_IGNORE);
  CHECK(flag && index == MPI_UNDEFINED);
  MPI_Testall(3, mixed, &flag, MPI_STATUSES_IGNORE);
  CHECK(flag);
  MPI_Testsome(3, mixed, &outcount, indices, MPI_STATUSES_IGNORE);
  CHECK(outcount == MPI_UNDEFINED);
  MPI_Waitsome(3, mixed, &outcount, indices, st3);
  CHECK(outcount == MPI_UNDEFINED);
  expect("MPI_Wait", 1, 0, -1, 0);
  expect("MPI_Test", 1, 0, -1, 0);
  expect("MPI_Waitany", 1, 0, -1, 0);
  expect("MPI_Testany", 1, 0, -1, 0);
  expect("MPI_Testall", 1, 0, -1, 0);
  expect("MPI_Testsome", 1, 0, -1, 0);
  expect("MPI_Waitsome", 1, 0, -1, 0);

  // --- MPI_IN_PLACE: the receive side's bytes.
  double v[64];
  for (int i = 0; i < 64; ++i) v[i] = rank;
  MPI_Allreduce(MPI_IN_PLACE, v, 5, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  CHECK(v[4] == n * (n - 1) / 2.0);
  expect("MPI_Allreduce", 1, 40, -1, 0);
  for (int i = 0; i < 64; ++i) v[i] = rank;
  MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, v, 2, MPI_DOUBLE, MPI_COMM_WORLD);
  CHECK(v[2 * left] == left && v[2 * right + 1] == right);
  expect("MPI_Alltoall", 1, 16LL * n, -1, 0);
  int counts[16], displs[16];
  long long in_place_v = 0;
  for (int i = 0; i < n; ++i) {
    counts[i] = 1 + (i + rank) % 3;  // symmetric: i sends rank what rank sends i
    displs[i] = 4 * i;
    in_place_v += 8 * counts[i];
  }
  MPI_Request req;
  MPI_Ialltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, v, counts, displs, MPI_DOUBLE, MPI_COMM_WORLD, &req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  expect("MPI_Ialltoallv", 1, in_place_v, -1, 0);
  for (int i = 0; i < 64; ++i) v[i] = rank;
  MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, v, 3, MPI_DOUBLE, MPI_COMM_WORLD);
  CHECK(v[3 * left] == left);
  expect("MPI_Allgather", 1, 24, -1, 0);
  // Allgatherv in place: this rank's block of the receive buffer, 1 + rank doubles.
  for (int i = 0; i < n; ++i) {
    counts[i] = 1 + i;
    displs[i] = 4 * i;
    for (int j = 0; j <= i; ++j) v[4 * i + j] = rank == i ? rank : -1;
  }
  MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, v, counts, displs, MPI_DOUBLE, MPI_COMM_WORLD, &req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  CHECK(v[4 * left + left] == left && v[4 * right] == right);
  expect("MPI_Iallgatherv", 1, 8LL * (1 + rank), -1, 0);
  // Gather at the root in place contributes nothing of its own to send; the others send 4 doubles.
  if (rank == 0)
    MPI_Gather(MPI_IN_PLACE, 4, MPI_DOUBLE, v, 4, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  else
    MPI_Gather(v, 4, MPI_DOUBLE, NULL, 0, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  expect("MPI_Gather", 1, rank == 0 ? 0 : 32, -1, 0);

  // --- MPI_PROC_NULL: counted, nothing moves, no partner.
  MPI_Send(out[0], 6, MPI_DOUBLE, MPI_PROC_NULL, 60, MPI_COMM_WORLD);
  MPI_Recv(in[0], 6, MPI_DOUBLE, MPI_PROC_NULL, 60, MPI_COMM_WORLD, &st);
  CHECK(st.MPI_SOURCE == MPI_PROC_NULL);
  ++send, ++recv;
  MPI_Request pn[2];
  MPI_Isend(out[0], 6, MPI_DOUBLE, MPI_PROC_NULL, 61, MPI_COMM_WORLD, &pn[0]);
  MPI_Irecv(in[0], 6, MPI_DOUBLE, MPI_PROC_NULL, 61, MPI_COMM_WORLD, &pn[1]);
  MPI_Waitall(2, pn, MPI_STATUSES_IGNORE);
  ++isend, ++irecv, ++waitall;
  MPI_Sendrecv(out[0], 6, MPI_DOUBLE, MPI_PROC_NULL, 62, in[0], 6, MPI_DOUBLE, MPI_PROC_NULL, 62, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  expect("MPI_Sendrecv", 1, 0, -1, 0);
  MPI_Probe(MPI_PROC_NULL, 63, MPI_COMM_WORLD, &st);
  expect("MPI_Probe", 1, 0, -1, 0);
  MPI_Message msg;
  MPI_Mprobe(MPI_PROC_NULL, 64, MPI_COMM_WORLD, &msg, MPI_STATUS_IGNORE);
  CHECK(msg == MPI_MESSAGE_NO_PROC);
  MPI_Mrecv(in[0], 6, MPI_DOUBLE, &msg, &st);
  CHECK(st.MPI_SOURCE == MPI_PROC_NULL);
  expect("MPI_Mprobe", 1, 0, -1, 0);
  expect("MPI_Mrecv", 1, 0, -1, 0);
  MPI_Request pers;
  MPI_Send_init(out[0], 6, MPI_DOUBLE, MPI_PROC_NULL, 65, MPI_COMM_WORLD, &pers);
  MPI_Start(&pers);
  MPI_Wait(&pers, MPI_STATUS_IGNORE);
  MPI_Request_free(&pers);
  expect("MPI_Send_init", 1, 0, -1, 0);
  expect("MPI_Start", 1, 0, -1, 0);
  expect("MPI_Wait", 3, 0, -1, 0);  // this one and those that waited for the Ialltoallv and Iallgatherv

  // --- Failures under MPI_ERRORS_RETURN: a rank out of range, a negative count, a bad root.
  MPI_Comm ec;
  MPI_Comm_dup(MPI_COMM_WORLD, &ec);
  MPI_Comm_set_errhandler(ec, MPI_ERRORS_RETURN);
  CHECK(MPI_Send(out[0], 4, MPI_DOUBLE, n + 5, 70, ec) != MPI_SUCCESS);
  CHECK(MPI_Irecv(in[0], 4, MPI_DOUBLE, n + 5, 70, ec, &req) != MPI_SUCCESS);
  CHECK(MPI_Recv(in[0], 4, MPI_DOUBLE, n + 5, 70, ec, MPI_STATUS_IGNORE) != MPI_SUCCESS);
  ++send, ++irecv, ++recv;
  CHECK(MPI_Allreduce(v, v + 8, -1, MPI_DOUBLE, MPI_SUM, ec) != MPI_SUCCESS);
  CHECK(MPI_Bcast(v, 4, MPI_DOUBLE, n + 5, ec) != MPI_SUCCESS);
  CHECK(MPI_Iallreduce(v, v + 8, -1, MPI_DOUBLE, MPI_SUM, ec, &req) != MPI_SUCCESS);
  expect("MPI_Bcast", 1, 0, -1, 0);
  expect("MPI_Iallreduce", 1, 0, -1, 0);
  expect("MPI_Allreduce", 1, 0, -1, 0);
  // The communicator still works, and is counted as usual.
  MPI_Sendrecv(out[2], 2, MPI_DOUBLE, right, 71, in[2], 2, MPI_DOUBLE, left, 71, ec, MPI_STATUS_IGNORE);
  CHECK(in[2][1] == left * 100 + 2);
  expect("MPI_Sendrecv", 1, 16, right, 16);
  MPI_Comm_free(&ec);

  expect("MPI_Send", send, send_bytes, -1, 0);
  expect("MPI_Recv", recv, recv_bytes, -1, 0);
  expect("MPI_Isend", isend, isend_bytes, -1, 0);
  expect("MPI_Irecv", irecv, irecv_bytes, -1, 0);
  expect("MPI_Waitall", waitall, waitall_bytes, -1, 0);
  expect_close();
  MPI_Finalize();
  return 0;
}
