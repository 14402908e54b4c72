// SPDX-License-Identifier: BSD-3-Clause
// The record the shim keeps per MPI call, I/O call and toru phase, shared by the recorder (which
// fills it), the analysis at MPI_Finalize and the root-cause analysis (which need no MPI).
#pragma once

#include <cstdint>

namespace toru::tune::shim {

/// What an event is. Values are stored in the gathered buffers; append only.
enum class ev_type : std::uint16_t { send = 0, recv = 1, coll = 2, io = 3, toru = 4, other_mpi = 5 };

/// MPI and I/O functions the tool knows (index into function_names).
enum fn : std::uint16_t {
  f_send,
  f_ssend,
  f_isend,
  f_recv,
  f_irecv,
  f_wait,
  f_waitall,
  f_test,
  f_sendrecv,
  f_barrier,
  f_bcast,
  f_reduce,
  f_allreduce,
  f_alltoall,
  f_alltoallv,
  f_allgather,
  f_allgatherv,
  f_gather,
  f_scatter,
  f_io_open,
  f_io_read,
  f_io_write,
  f_io_fsync,
  f_io_close,
  f_toru,
  // Appended after the first set (issue 40): the indices above stay as they were.
  f_alltoallw,
  f_gatherv,
  f_scatterv,
  f_reduce_scatter,
  f_reduce_scatter_block,
  f_scan,
  f_exscan,
  f_ibarrier,
  f_ibcast,
  f_ireduce,
  f_iallreduce,
  f_ialltoall,
  f_ialltoallv,
  f_ialltoallw,
  f_iallgather,
  f_iallgatherv,
  f_igather,
  f_igatherv,
  f_iscatter,
  f_iscatterv,
  f_ireduce_scatter,
  f_ireduce_scatter_block,
  f_iscan,
  f_iexscan,
  f_waitany,
  f_waitsome,
  f_testany,
  f_testall,
  f_testsome,
  f_probe,
  f_iprobe,
  f_sendrecv_replace,
  f_bsend,
  f_rsend,
  f_ibsend,
  f_issend,
  f_irsend,
  f_send_init,
  f_recv_init,
  f_start,
  f_startall,
  f_neighbor_allgather,
  f_neighbor_allgatherv,
  f_neighbor_alltoall,
  f_neighbor_alltoallv,
  f_neighbor_alltoallw,
  f_ineighbor_allgather,
  f_ineighbor_allgatherv,
  f_ineighbor_alltoall,
  f_ineighbor_alltoallv,
  f_ineighbor_alltoallw,
  f_put,
  f_get,
  f_accumulate,
  f_win_fence,
  f_win_lock,
  f_win_unlock,
  f_win_create,
  f_win_allocate,
  f_win_free,
  f_file_open,
  f_file_close,
  f_file_read,
  f_file_read_at,
  f_file_read_all,
  f_file_read_at_all,
  f_file_write,
  f_file_write_at,
  f_file_write_all,
  f_file_write_at_all,
  // Appended with the Fortran and mpi_f08 bindings.
  f_mprobe,
  f_improbe,
  f_mrecv,
  f_imrecv,
  f_win_flush,
  f_win_flush_all,
  f_win_flush_local,
  f_win_flush_local_all,
  f_win_lock_all,
  f_win_unlock_all,
  f_get_accumulate,
  f_fetch_and_op,
  f_compare_and_swap,
  f_rput,
  f_rget,
  f_raccumulate,
  f_file_iread,
  f_file_iread_at,
  f_file_iwrite,
  f_file_iwrite_at,
  // Persistent collectives (MPIX_*_init in Open MPI 4.1).
  f_barrier_init,
  f_bcast_init,
  f_reduce_init,
  f_allreduce_init,
  f_alltoall_init,
  f_alltoallv_init,
  f_alltoallw_init,
  f_allgather_init,
  f_allgatherv_init,
  f_gather_init,
  f_gatherv_init,
  f_scatter_init,
  f_scatterv_init,
  f_reduce_scatter_init,
  f_reduce_scatter_block_init,
  f_scan_init,
  f_exscan_init,
  // MPI-IO through the shared file pointer (the ordered calls are its collective form).
  f_file_read_shared,
  f_file_write_shared,
  f_file_read_ordered,
  f_file_write_ordered,
  f_file_iread_shared,
  f_file_iwrite_shared,
  // Persistent neighbourhood collectives (MPIX_Neighbor_*_init in Open MPI 4.1).
  f_neighbor_allgather_init,
  f_neighbor_allgatherv_init,
  f_neighbor_alltoall_init,
  f_neighbor_alltoallv_init,
  f_neighbor_alltoallw_init,
  fn_count
};
extern const char* const function_names[fn_count];

/// One recorded event (fixed size, 72 bytes: the buffers travel to rank 0 as bytes).
struct event {
  double t0 = 0, t1 = 0;  // enter and exit, seconds on this process's clock
  double tpost = 0;       // recv: when the receive was posted (Irecv), else t0
  double compute = 0;     // the main thread's compute (outside MPI and I/O) from MPI_Init to t0
  std::uint64_t bytes = 0;
  std::uint64_t key = 0;   // communicator key (p2p, coll); toru: region index
  std::int32_t site = -1;  // this process's site index
  std::int32_t peer = -1;  // p2p: partner's world rank; coll: communicator size
  std::int32_t tag = 0;
  std::uint32_t seq = 0;    // p2p: ordinal per (src, dst, tag, comm); coll: ordinal per comm
  std::uint32_t group = 0;  // the Waitall a completion belongs to (0: none)
  ev_type type = ev_type::other_mpi;
  std::uint16_t func = 0;
};
static_assert(sizeof(event) == 72, "docs/tune.md states the event size (TORU_TUNE_MAX_EVENTS)");

}  // namespace toru::tune::shim
