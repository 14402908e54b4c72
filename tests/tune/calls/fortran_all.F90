! SPDX-License-Identifier: BSD-3-Clause
! Every family of Fortran wrappers in one program, built twice: with mpif.h (the mpi_*_ symbols) and
! with -DTORU_F08, `use mpi_f08` (the mpi_*_f08_ symbols, ierror omitted everywhere, so the wrappers
! get a null pointer for it). Expectations are written as calls/expect.h does; data are checked.
! The persistent collectives, neighbourhood ones included, are Open MPI 4.1's MPIX_*_init (mpif-ext.h,
! mpi_f08_ext).
#ifdef TORU_F08
#define REQUEST type(MPI_Request)
#define COMM type(MPI_Comm)
#define DTYPE type(MPI_Datatype)
#define WINDOW type(MPI_Win)
#define FILEH type(MPI_File)
#define MESSAGE type(MPI_Message)
#define STATUS type(MPI_Status)
#define STATUS_DIM
#define SRC(s) s%MPI_SOURCE
#define IERR
#define IERR_ONLY
#else
#define REQUEST integer
#define COMM integer
#define DTYPE integer
#define WINDOW integer
#define FILEH integer
#define MESSAGE integer
#define STATUS integer
#define STATUS_DIM (MPI_STATUS_SIZE)
#define SRC(s) s(MPI_SOURCE)
#define IERR , ierr
#define IERR_ONLY ierr
#endif
program calls_fortran_all
#ifdef TORU_F08
  use mpi_f08
  use mpi_f08_ext
#endif
  use, intrinsic :: iso_c_binding
  implicit none
#ifndef TORU_F08
  include 'mpif.h'
  include 'mpif-ext.h'
  integer :: ierr
#endif
  integer :: rank, n, i, k, left, right, u, idx, outcount, calls, done, total_v, nn
  integer :: waits, wait_bytes, isends, isend_bytes, irecvs, irecv_bytes
  integer :: idxs(4), sc(16), sd(16), rc(16), rd(16), dims(1)
  integer :: blk1(5), blk2(5), got1(5), got2(5)
  logical :: flag, periods(1)
  REQUEST :: req, reqs(4), pers(2), preq(3), nreq
  STATUS :: st STATUS_DIM
  MESSAGE :: msg
  COMM :: cart
  WINDOW :: win
  FILEH :: fh
  DTYPE :: wst(16), wrt(16)
  double precision :: a(512), b(512), v(64), mine, tot, seen(32)
  ! The persistent collectives' buffers change in MPI_Start/MPI_Wait, which do not name them.
  double precision, volatile :: pa(5), pb(5), pv(4), na(4), nb(4)
  double precision, pointer :: mem(:)
  integer :: ints(64), back(64)
  integer(kind=MPI_ADDRESS_KIND) :: wsize, disp
  integer(kind=MPI_OFFSET_KIND) :: off
  type(c_ptr) :: baseptr
  character(len=4096) :: dir, path
  integer(kind=8) :: w_bytes

  call MPI_Init(IERR_ONLY)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank IERR)
  call MPI_Comm_size(MPI_COMM_WORLD, n IERR)
  call get_command_argument(1, dir)
  write (path, '(A,A,I0)') trim(dir), '/expect.', rank
  open (newunit=u, file=trim(path), status='replace', action='write')
  right = mod(rank + 1, n)
  left = mod(rank + n - 1, n)
  waits = 0
  wait_bytes = 0

  ! --- collectives ------------------------------------------------------------------------------
  ! Alltoallw: (i + 1) integers to even ranks i, (i + 1) doubles to odd ones (displacements in bytes).
  a = rank
  w_bytes = 0
  do i = 0, n - 1
    sc(i + 1) = i + 1
    sd(i + 1) = i * 64 * 8
    rc(i + 1) = rank + 1
    rd(i + 1) = i * 64 * 8
    if (mod(i, 2) == 1) then
      wst(i + 1) = MPI_DOUBLE_PRECISION
      w_bytes = w_bytes + 8 * (i + 1)
    else
      wst(i + 1) = MPI_INTEGER
      w_bytes = w_bytes + 4 * (i + 1)
    end if
    if (mod(rank, 2) == 1) then
      wrt(i + 1) = MPI_DOUBLE_PRECISION
    else
      wrt(i + 1) = MPI_INTEGER
    end if
  end do
  call MPI_Alltoallw(a, sc, sd, wst, b, rc, rd, wrt, MPI_COMM_WORLD IERR)
  call expect('MPI_Alltoallw', 1, int(w_bytes), -1, 0)

  total_v = 0
  do i = 0, n - 1
    sc(i + 1) = i + rank + 1
    sd(i + 1) = i * 64
    rc(i + 1) = rank + i + 1
    rd(i + 1) = i * 64
    total_v = total_v + sc(i + 1)
  end do
  call MPI_Ialltoallv(a, sc, sd, MPI_DOUBLE_PRECISION, b, rc, rd, MPI_DOUBLE_PRECISION, MPI_COMM_WORLD, req IERR)
  call MPI_Wait(req, st IERR)
  waits = waits + 1
  if (b(1) /= 0 .or. b(64 * left + 1) /= left) call fail(1)
  call expect('MPI_Ialltoallv', 1, 8 * total_v, -1, 0)

  mine = rank + 1
  call MPI_Iallreduce(mine, tot, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, req IERR)
  call MPI_Wait(req, MPI_STATUS_IGNORE IERR)
  waits = waits + 1
  if (tot /= n * (n + 1) / 2.0d0) call fail(2)
  call expect('MPI_Iallreduce', 1, 8, -1, 0)

  call MPI_Ibcast(a, 11, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, req IERR)
  call MPI_Wait(req, MPI_STATUS_IGNORE IERR)
  waits = waits + 1
  call expect('MPI_Ibcast', 1, 88, -1, 0)

  ! MPI_IN_PLACE: the receive side's bytes.
  v = rank
  call MPI_Allreduce(MPI_IN_PLACE, v, 5, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD IERR)
  if (v(5) /= n * (n - 1) / 2.0d0) call fail(3)
  call expect('MPI_Allreduce', 1, 40, -1, 0)
  v = rank
  call MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, v, 2, MPI_DOUBLE_PRECISION, MPI_COMM_WORLD IERR)
  if (v(2 * left + 1) /= left .or. v(2 * right + 2) /= right) call fail(4)
  call expect('MPI_Alltoall', 1, 16 * n, -1, 0)

  call MPI_Reduce_scatter_block(a, b, 3, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD IERR)
  call expect('MPI_Reduce_scatter_block', 1, 24 * n, -1, 0)
  call MPI_Iscan(a, b, 7, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, req IERR)
  call MPI_Wait(req, MPI_STATUS_IGNORE IERR)
  waits = waits + 1
  call expect('MPI_Iscan', 1, 56, -1, 0)

  ! --- point-to-point: completion calls ---------------------------------------------------------
  a = rank
  isends = 0
  isend_bytes = 0
  irecvs = 0
  irecv_bytes = 0
  ! Waitany: 7 doubles from the left (index counts from 1 in Fortran).
  b = -1
  call post(7, 1)
  do k = 1, 2
    call MPI_Waitany(2, reqs, idx, st IERR)
    if (idx < 1 .or. idx > 2) call fail(5)
  end do
  if (b(1) /= left .or. b(7) /= left) call fail(6)
  call expect('MPI_Waitany', 2, 56, left, 56)
  ! Waitsome, statuses ignored: 3 doubles.
  call post(3, 2)
  calls = 0
  done = 0
  do while (done < 2)
    call MPI_Waitsome(2, reqs, outcount, idxs, MPI_STATUSES_IGNORE IERR)
    calls = calls + 1
    done = done + outcount
  end do
  call expect('MPI_Waitsome', calls, 24, left, 24)
  ! Testall: 4 doubles.
  call post(4, 3)
  calls = 0
  flag = .false.
  do while (.not. flag)
    call MPI_Testall(2, reqs, flag, MPI_STATUSES_IGNORE IERR)
    calls = calls + 1
  end do
  call expect('MPI_Testall', calls, 32, left, 32)
  ! Testany: 6 doubles.
  call post(6, 4)
  calls = 0
  done = 0
  do while (done < 2)
    call MPI_Testany(2, reqs, idx, flag, MPI_STATUS_IGNORE IERR)
    calls = calls + 1
    if (flag .and. idx /= MPI_UNDEFINED) done = done + 1
  end do
  call expect('MPI_Testany', calls, 48, left, 48)
  ! Testsome: 9 doubles.
  call post(9, 5)
  calls = 0
  done = 0
  do while (done < 2)
    call MPI_Testsome(2, reqs, outcount, idxs, MPI_STATUSES_IGNORE IERR)
    calls = calls + 1
    if (outcount /= MPI_UNDEFINED) done = done + outcount
  end do
  if (b(9) /= left) call fail(7)
  call expect('MPI_Testsome', calls, 72, left, 72)
  call expect('MPI_Isend', isends, isend_bytes, -1, 0)
  call expect('MPI_Irecv', irecvs, irecv_bytes, -1, 0)

  ! --- persistent: 10 doubles, Startall + Waitall twice, Start + Wait once ----------------------
  call MPI_Recv_init(b, 10, MPI_DOUBLE_PRECISION, left, 6, MPI_COMM_WORLD, pers(1) IERR)
  call MPI_Send_init(a, 10, MPI_DOUBLE_PRECISION, right, 6, MPI_COMM_WORLD, pers(2) IERR)
  do k = 1, 2
    b = -1
    call MPI_Startall(2, pers IERR)
    call MPI_Waitall(2, pers, MPI_STATUSES_IGNORE IERR)
    if (b(10) /= left) call fail(8)
  end do
  call MPI_Start(pers(1) IERR)
  call MPI_Start(pers(2) IERR)
  call MPI_Wait(pers(1), st IERR)
  call MPI_Wait(pers(2), st IERR)
  waits = waits + 2
  wait_bytes = wait_bytes + 80
  call MPI_Request_free(pers(1) IERR)
  call MPI_Request_free(pers(2) IERR)
  call expect('MPI_Recv_init', 1, 0, left, 0)
  call expect('MPI_Send_init', 1, 0, right, 0)
  call expect('MPI_Startall', 2, 160, right, 160)
  call expect('MPI_Waitall', 2, 160, left, 160)
  call expect('MPI_Start', 2, 80, right, 80)
  call expect('MPI_Wait', 0, 0, left, 80)

  ! --- persistent collectives: each start credits the bytes the init described ------------------
  call MPIX_Allreduce_init(pa, pb, 5, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, preq(1) IERR)
  call MPIX_Bcast_init(pv, 4, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, MPI_INFO_NULL, preq(2) IERR)
  call MPIX_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, preq(3) IERR)
  do k = 1, 3
    pa = rank + k
    call MPI_Start(preq(1) IERR)
    call MPI_Wait(preq(1), MPI_STATUS_IGNORE IERR)
    if (pb(5) /= n * (n - 1) / 2.0d0 + n * k) call fail(19)
  end do
  waits = waits + 3
  do k = 1, 2
    pv = -1
    if (rank == 0) pv = 10 + k
    call MPI_Startall(2, preq(2:3) IERR)
    call MPI_Waitall(2, preq(2:3), MPI_STATUSES_IGNORE IERR)
    if (pv(4) /= 10 + k) call fail(20)
  end do
  do k = 1, 3
    call MPI_Request_free(preq(k) IERR)
  end do
  ! Each start is a call of its init's function (the init's call and then the starts).
  call expect('MPIX_Allreduce_init', 1 + 3, 3 * 40, -1, 0)
  call expect('MPIX_Bcast_init', 1 + 2, 2 * 32, -1, 0)
  call expect('MPIX_Barrier_init', 1 + 2, 0, -1, 0)
  call expect('MPI_Waitall', 2, 0, -1, 0)

  ! --- probes, matched probes, sendrecv ----------------------------------------------------------
  call MPI_Send(a, 11, MPI_DOUBLE_PRECISION, right, 8, MPI_COMM_WORLD IERR)
  call MPI_Probe(MPI_ANY_SOURCE, 8, MPI_COMM_WORLD, st IERR)
  if (SRC(st) /= left) call fail(9)
  call MPI_Recv(b, 11, MPI_DOUBLE_PRECISION, left, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE IERR)
  call expect('MPI_Probe', 1, 0, left, 0)
  call MPI_Send(a, 13, MPI_DOUBLE_PRECISION, right, 9, MPI_COMM_WORLD IERR)
  calls = 0
  flag = .false.
  do while (.not. flag)
    call MPI_Iprobe(left, 9, MPI_COMM_WORLD, flag, MPI_STATUS_IGNORE IERR)
    calls = calls + 1
  end do
  call MPI_Recv(b, 13, MPI_DOUBLE_PRECISION, left, 9, MPI_COMM_WORLD, st IERR)
  call expect('MPI_Iprobe', calls, 0, left, 0)
  call MPI_Send(a, 17, MPI_DOUBLE_PRECISION, right, 10, MPI_COMM_WORLD IERR)
  call MPI_Mprobe(MPI_ANY_SOURCE, 10, MPI_COMM_WORLD, msg, st IERR)
  b = -1
  call MPI_Mrecv(b, 17, MPI_DOUBLE_PRECISION, msg, MPI_STATUS_IGNORE IERR)
  if (b(17) /= left) call fail(10)
  call expect('MPI_Mprobe', 1, 0, left, 0)
  call expect('MPI_Mrecv', 1, 136, left, 136)
  call MPI_Send(a, 19, MPI_DOUBLE_PRECISION, right, 11, MPI_COMM_WORLD IERR)
  calls = 0
  flag = .false.
  do while (.not. flag)
    call MPI_Improbe(left, 11, MPI_COMM_WORLD, flag, msg, MPI_STATUS_IGNORE IERR)
    calls = calls + 1
  end do
  call MPI_Imrecv(b, 19, MPI_DOUBLE_PRECISION, msg, req IERR)
  call MPI_Wait(req, MPI_STATUS_IGNORE IERR)
  waits = waits + 1
  wait_bytes = wait_bytes + 152
  call expect('MPI_Improbe', calls, 0, left, 0)
  call expect('MPI_Imrecv', 1, 152, -1, 0)
  call expect('MPI_Wait', 0, 0, left, 152)
  ! MPI_PROC_NULL: counted, nothing moves.
  call MPI_Send(a, 5, MPI_DOUBLE_PRECISION, MPI_PROC_NULL, 12, MPI_COMM_WORLD IERR)
  call MPI_Recv(b, 5, MPI_DOUBLE_PRECISION, MPI_PROC_NULL, 12, MPI_COMM_WORLD, st IERR)
  call expect('MPI_Send', 5, 8 * 60, right, 8 * 60)
  call expect('MPI_Recv', 3, 8 * 24, left, 8 * 24)

  ! MPI_REQUEST_NULL among the requests of a Waitall; a failed call (MPI_ERRORS_RETURN: a rank out of
  ! range) is counted without bytes or partner, and the program goes on.
  reqs(1) = MPI_REQUEST_NULL
  reqs(3) = MPI_REQUEST_NULL
  call MPI_Irecv(b, 3, MPI_DOUBLE_PRECISION, left, 15, MPI_COMM_WORLD, reqs(2) IERR)
  call MPI_Isend(a, 3, MPI_DOUBLE_PRECISION, right, 15, MPI_COMM_WORLD, reqs(4) IERR)
  call MPI_Waitall(4, reqs, MPI_STATUSES_IGNORE IERR)
  call expect('MPI_Irecv', 1, 24, left, 24)
  call expect('MPI_Isend', 1, 24, right, 24)
  call expect('MPI_Waitall', 1, 24, left, 24)
  call MPI_Comm_dup(MPI_COMM_WORLD, cart IERR)
  call MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN IERR)
  call MPI_Ssend(a, 4, MPI_DOUBLE_PRECISION, n + 5, 16, cart, rc(1))
  if (rc(1) == MPI_SUCCESS) call fail(15)
  call expect('MPI_Ssend', 1, 0, -1, 0)
  call MPI_Comm_free(cart IERR)

  call MPI_Sendrecv(a, 15, MPI_DOUBLE_PRECISION, right, 13, b, 15, MPI_DOUBLE_PRECISION, left, 13, &
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE IERR)
  if (b(15) /= left) call fail(11)
  call expect('MPI_Sendrecv', 1, 120, right, 120)
  b(1:5) = rank
  call MPI_Sendrecv_replace(b, 5, MPI_DOUBLE_PRECISION, right, 14, left, 14, MPI_COMM_WORLD, st IERR)
  if (b(5) /= left) call fail(12)
  call expect('MPI_Sendrecv_replace', 1, 40, right, 40)

  ! --- neighbourhood: a line of ranks (not periodic) ---------------------------------------------
  dims(1) = n
  periods(1) = .false.
  call MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, .false., cart IERR)
  nn = 0
  if (rank > 0) nn = nn + 1
  if (rank < n - 1) nn = nn + 1
  call MPI_Neighbor_alltoall(a, 2, MPI_DOUBLE_PRECISION, b, 2, MPI_DOUBLE_PRECISION, cart IERR)
  call MPI_Ineighbor_allgather(a, 3, MPI_DOUBLE_PRECISION, b, 3, MPI_DOUBLE_PRECISION, cart, req IERR)
  call MPI_Wait(req, MPI_STATUS_IGNORE IERR)
  waits = waits + 1
  call expect('MPI_Neighbor_alltoall', 1, 16 * nn, -1, 0)
  call expect('MPI_Ineighbor_allgather', 1, 24 * nn, -1, 0)
  if (rank > 0) then
    call expect('MPI_Neighbor_alltoall', 0, 0, rank - 1, 16)
    call expect('MPI_Ineighbor_allgather', 0, 0, rank - 1, 24)
  end if
  if (rank < n - 1) then
    call expect('MPI_Neighbor_alltoall', 0, 0, rank + 1, 16)
    call expect('MPI_Ineighbor_allgather', 0, 0, rank + 1, 24)
  end if
  ! The persistent twin: each start credits what the blocking call does, under the init's name.
  call MPIX_Neighbor_alltoall_init(na, 2, MPI_DOUBLE_PRECISION, nb, 2, MPI_DOUBLE_PRECISION, cart, MPI_INFO_NULL, &
                                   nreq IERR)
  do k = 1, 2
    na(1:2) = rank + 10 * k
    na(3:4) = rank + 10 * k + 0.5d0
    nb = -1
    call MPI_Start(nreq IERR)
    call MPI_Wait(nreq, MPI_STATUS_IGNORE IERR)
    if (rank > 0 .and. nb(2) /= rank - 1 + 10 * k + 0.5d0) call fail(22)
    if (rank < n - 1 .and. nb(3) /= rank + 1 + 10 * k) call fail(23)
  end do
  waits = waits + 2
  call MPI_Request_free(nreq IERR)
  call expect('MPIX_Neighbor_alltoall_init', 1 + 2, 2 * 16 * nn, -1, 0)
  if (rank > 0) call expect('MPIX_Neighbor_alltoall_init', 0, 0, rank - 1, 32)
  if (rank < n - 1) call expect('MPIX_Neighbor_alltoall_init', 0, 0, rank + 1, 32)
  call MPI_Comm_free(cart IERR)

  ! --- one-sided --------------------------------------------------------------------------------
  wsize = 64 * 8
  call MPI_Win_allocate(wsize, 8, MPI_INFO_NULL, MPI_COMM_WORLD, baseptr, win IERR)
  call c_f_pointer(baseptr, mem, [64])
  mem = rank * 10
  v = rank
  call MPI_Win_fence(0, win IERR)
  disp = 0
  call MPI_Put(v, 3, MPI_DOUBLE_PRECISION, right, disp, 3, MPI_DOUBLE_PRECISION, win IERR)
  disp = 48
  call MPI_Get(b, 2, MPI_DOUBLE_PRECISION, left, disp, 2, MPI_DOUBLE_PRECISION, win IERR)
  call MPI_Win_fence(0, win IERR)
  if (b(1) /= left * 10 .or. mem(3) /= left) call fail(13)
  call MPI_Barrier(MPI_COMM_WORLD IERR)
  call MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win IERR)
  disp = 32
  call MPI_Put(v, 5, MPI_DOUBLE_PRECISION, right, disp, 5, MPI_DOUBLE_PRECISION, win IERR)
  call MPI_Win_unlock(right, win IERR)
  call MPI_Win_lock_all(0, win IERR)
  call MPI_Win_flush_all(win IERR)
  call MPI_Win_unlock_all(win IERR)
  call MPI_Win_free(win IERR)
  call expect('MPI_Win_allocate', 1, 0, -1, 0)
  call expect('MPI_Put', 2, 64, right, 64)
  call expect('MPI_Get', 1, 16, left, 16)
  call expect('MPI_Win_fence', 2, 0, -1, 0)
  call expect('MPI_Win_lock', 1, 0, right, 0)
  call expect('MPI_Win_unlock', 1, 0, right, 0)
  call expect('MPI_Win_lock_all', 1, 0, -1, 0)
  call expect('MPI_Win_flush_all', 1, 0, -1, 0)
  call expect('MPI_Win_unlock_all', 1, 0, -1, 0)
  call expect('MPI_Win_free', 1, 0, -1, 0)

  ! --- MPI-IO: each rank its own block of one file ---------------------------------------------
  ! Named after the run's directory: Open MPI 4.1 names the semaphore of a file's shared pointer
  ! after its basename alone, which concurrent runs would otherwise share (calls/file.c).
  write (path, '(A,A,A)') trim(dir), '/', trim(dir(index(trim(dir), '/', back=.true.) + 1:)) // '-data.bin'
  call MPI_File_open(MPI_COMM_WORLD, trim(path), MPI_MODE_CREATE + MPI_MODE_RDWR, MPI_INFO_NULL, fh IERR)
  do i = 1, 64
    ints(i) = rank * 1000 + i
  end do
  off = rank * 64 * 4
  call MPI_File_write_at(fh, off, ints, 5 + rank, MPI_INTEGER, MPI_STATUS_IGNORE IERR)
  call MPI_File_iwrite_at(fh, off + 5 * 4 + rank * 4, ints(6 + rank), 7, MPI_INTEGER, req IERR)
  call MPI_Wait(req, MPI_STATUS_IGNORE IERR)
  waits = waits + 1
  call MPI_File_read_at_all(fh, off, back, 12 + rank, MPI_INTEGER, st IERR)
  if (any(back(1:12 + rank) /= ints(1:12 + rank))) call fail(14)
  call MPI_File_close(fh IERR)
  call expect('MPI_File_open', 1, 0, -1, 0)
  call expect('MPI_File_close', 1, 0, -1, 0)
  call expect('MPI_File_write_at', 1, 4 * (5 + rank), -1, 0)
  call expect('MPI_File_iwrite_at', 1, 28, -1, 0)
  call expect('MPI_File_read_at_all', 1, 4 * (12 + rank), -1, 0)

  ! The shared file pointer, on a second file. Ordered calls place the blocks in rank order; the
  ! order of the others is not deterministic: all their blocks are 5 integers, so each read gets one
  ! whole block, and over all ranks each block is read once. Sync-barrier-sync orders the phases
  ! (calls/file.c says why Open MPI needs it after a collective write).
  if (n > 16) call fail(21)  ! seen(1:2 * n)
  write (path, '(A,A,A)') trim(dir), '/', trim(dir(index(trim(dir), '/', back=.true.) + 1:)) // '-shared.bin'
  call MPI_File_open(MPI_COMM_WORLD, trim(path), MPI_MODE_CREATE + MPI_MODE_RDWR, MPI_INFO_NULL, fh IERR)
  call MPI_File_write_ordered(fh, ints, 3 + rank, MPI_INTEGER, st IERR)
  call settle()
  off = 0
  call MPI_File_seek_shared(fh, off, MPI_SEEK_SET IERR)
  back = 0
  call MPI_File_read_ordered(fh, back, 3 + rank, MPI_INTEGER, MPI_STATUS_IGNORE IERR)
  if (any(back(1:3 + rank) /= ints(1:3 + rank))) call fail(16)
  do i = 1, 5
    blk1(i) = rank * 1000 + 100 + i
    blk2(i) = rank * 1000 + 200 + i
  end do
  call MPI_File_write_shared(fh, blk1, 5, MPI_INTEGER, MPI_STATUS_IGNORE IERR)
  call MPI_File_iwrite_shared(fh, blk2, 5, MPI_INTEGER, req IERR)
  call MPI_Wait(req, MPI_STATUS_IGNORE IERR)
  call settle()
  off = 4 * (3 * n + n * (n - 1) / 2)
  call MPI_File_seek_shared(fh, off, MPI_SEEK_SET IERR)
  call MPI_File_read_shared(fh, got1, 5, MPI_INTEGER, st IERR)
  call MPI_File_iread_shared(fh, got2, 5, MPI_INTEGER, req IERR)
  call MPI_Wait(req, MPI_STATUS_IGNORE IERR)
  waits = waits + 2
  seen = 0
  call tally(got1)
  call tally(got2)
  call MPI_Allreduce(MPI_IN_PLACE, seen, 2 * n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD IERR)
  if (any(seen(1:2 * n) /= 1)) call fail(18)
  call MPI_File_close(fh IERR)
  call expect('MPI_Allreduce', 1, 16 * n, -1, 0)
  call expect('MPI_File_write_ordered', 1, 4 * (3 + rank), -1, 0)
  call expect('MPI_File_read_ordered', 1, 4 * (3 + rank), -1, 0)
  call expect('MPI_File_write_shared', 1, 20, -1, 0)
  call expect('MPI_File_iwrite_shared', 1, 20, -1, 0)
  call expect('MPI_File_read_shared', 1, 20, -1, 0)
  call expect('MPI_File_iread_shared', 1, 20, -1, 0)
  call expect('MPI_File_open', 1, 0, -1, 0)
  call expect('MPI_File_close', 1, 0, -1, 0)

  call expect('MPI_Wait', waits, wait_bytes, -1, 0)
  close (u)
  call MPI_Finalize(IERR_ONLY)

contains

  subroutine expect(name, c, nbytes, partner, pbytes)
    character(len=*), intent(in) :: name
    integer, intent(in) :: c, nbytes, partner, pbytes
    write (u, '(A,1X,I0,1X,I0,1X,I0,1X,I0)') name, c, nbytes, partner, pbytes
  end subroutine expect

  ! An Irecv of cnt doubles from the left into b and an Isend of as many to the right (reqs(1:2)).
  subroutine post(cnt, tag)
    integer, intent(in) :: cnt, tag
    call MPI_Irecv(b, cnt, MPI_DOUBLE_PRECISION, left, tag, MPI_COMM_WORLD, reqs(1) IERR)
    call MPI_Isend(a, cnt, MPI_DOUBLE_PRECISION, right, tag, MPI_COMM_WORLD, reqs(2) IERR)
    irecvs = irecvs + 1
    irecv_bytes = irecv_bytes + 8 * cnt
    isends = isends + 1
    isend_bytes = isend_bytes + 8 * cnt
    call expect('MPI_Irecv', 0, 0, left, 8 * cnt)
    call expect('MPI_Isend', 0, 0, right, 8 * cnt)
  end subroutine post

  ! Orders every rank's file accesses so far before any rank's next ones (MPI's sync-barrier-sync).
  subroutine settle()
    call MPI_File_sync(fh IERR)
    call MPI_Barrier(MPI_COMM_WORLD IERR)
    call MPI_File_sync(fh IERR)
  end subroutine settle

  ! Counts a block read through the shared pointer in seen(), by its writer and kind (blk1, blk2).
  subroutine tally(blk)
    integer, intent(in) :: blk(5)
    integer :: w, kind, j
    w = blk(1) / 1000
    kind = mod(blk(1), 1000) / 100
    if (w < 0 .or. w >= n .or. (kind /= 1 .and. kind /= 2)) call fail(17)
    do j = 1, 5
      if (blk(j) /= w * 1000 + 100 * kind + j) call fail(17)
    end do
    seen((kind - 1) * n + w + 1) = seen((kind - 1) * n + w + 1) + 1
  end subroutine tally

  subroutine fail(code)
    integer, intent(in) :: code
    write (0, '(A,I0)') 'check failed: ', code
    call MPI_Abort(MPI_COMM_WORLD, 3 IERR)
  end subroutine fail

end program calls_fortran_all
