! SPDX-License-Identifier: BSD-3-Clause
! The Fortran (mpif.h) wrappers beyond the first set: Alltoallw, Ibarrier, Ibcast, Iallreduce,
! Ialltoallv, Waitany and Sendrecv, with the expectations written as calls/expect.h does.
program calls_fortran
  implicit none
  include 'mpif.h'
  integer :: ierr, rank, n, i, left, right, u, idx, req, reqs(2), total_v, c
  integer :: status(MPI_STATUS_SIZE)
  integer, allocatable :: sc(:), sd(:), rc(:), rd(:), st(:), rt(:)
  double precision :: a(512), b(512), mine, tot
  character(len=4096) :: dir, path
  integer(kind=8) :: w_bytes

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, n, ierr)
  call get_command_argument(1, dir)
  write (path, '(A,A,I0)') trim(dir), '/expect.', rank
  open (newunit=u, file=trim(path), status='replace', action='write')
  right = mod(rank + 1, n)
  left = mod(rank + n - 1, n)
  a = rank
  allocate (sc(n), sd(n), rc(n), rd(n), st(n), rt(n))

  ! Alltoallw: (i + 1) integers to even ranks i, (i + 1) doubles to odd ones (displacements in bytes).
  w_bytes = 0
  do i = 0, n - 1
    sc(i + 1) = i + 1
    sd(i + 1) = i * 64 * 8
    rc(i + 1) = rank + 1
    rd(i + 1) = i * 64 * 8
    if (mod(i, 2) == 1) then
      st(i + 1) = MPI_DOUBLE_PRECISION
      w_bytes = w_bytes + 8 * (i + 1)
    else
      st(i + 1) = MPI_INTEGER
      w_bytes = w_bytes + 4 * (i + 1)
    end if
    if (mod(rank, 2) == 1) then
      rt(i + 1) = MPI_DOUBLE_PRECISION
    else
      rt(i + 1) = MPI_INTEGER
    end if
  end do
  call MPI_Alltoallw(a, sc, sd, st, b, rc, rd, rt, MPI_COMM_WORLD, ierr)
  write (u, '(A,1X,I0,1X,I0,1X,I0,1X,I0)') 'MPI_Alltoallw', 1, w_bytes, -1, 0

  call MPI_Ibarrier(MPI_COMM_WORLD, req, ierr)
  call MPI_Wait(req, status, ierr)
  write (u, '(A,1X,I0,1X,I0,1X,I0,1X,I0)') 'MPI_Ibarrier', 1, 0, -1, 0
  call MPI_Ibcast(a, 11, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, req, ierr)
  call MPI_Wait(req, status, ierr)
  write (u, '(A,1X,I0,1X,I0,1X,I0,1X,I0)') 'MPI_Ibcast', 1, 88, -1, 0

  mine = rank + 1
  call MPI_Iallreduce(mine, tot, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, req, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  if (tot /= n * (n + 1) / 2.0d0) call MPI_Abort(MPI_COMM_WORLD, 3, ierr)
  write (u, '(A,1X,I0,1X,I0,1X,I0,1X,I0)') 'MPI_Iallreduce', 1, 8, -1, 0

  total_v = 0
  do i = 0, n - 1
    sc(i + 1) = i + rank + 1
    sd(i + 1) = i * 64
    rc(i + 1) = rank + i + 1
    rd(i + 1) = i * 64
    total_v = total_v + sc(i + 1)
  end do
  call MPI_Ialltoallv(a, sc, sd, MPI_DOUBLE_PRECISION, b, rc, rd, MPI_DOUBLE_PRECISION, MPI_COMM_WORLD, req, ierr)
  call MPI_Wait(req, status, ierr)
  write (u, '(A,1X,I0,1X,I0,1X,I0,1X,I0)') 'MPI_Ialltoallv', 1, 8 * total_v, -1, 0

  ! Waitany: 7 doubles from the left (checked), a send to the right.
  a = rank
  b = -1
  call MPI_Irecv(b, 7, MPI_DOUBLE_PRECISION, left, 1, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Isend(a, 7, MPI_DOUBLE_PRECISION, right, 1, MPI_COMM_WORLD, reqs(2), ierr)
  do c = 1, 2
    call MPI_Waitany(2, reqs, idx, status, ierr)
  end do
  if (b(1) /= left .or. b(7) /= left) call MPI_Abort(MPI_COMM_WORLD, 4, ierr)
  write (u, '(A,1X,I0,1X,I0,1X,I0,1X,I0)') 'MPI_Waitany', 2, 56, left, 56

  call MPI_Sendrecv(a, 15, MPI_DOUBLE_PRECISION, right, 2, b, 15, MPI_DOUBLE_PRECISION, left, 2, &
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  if (b(15) /= left) call MPI_Abort(MPI_COMM_WORLD, 5, ierr)
  write (u, '(A,1X,I0,1X,I0,1X,I0,1X,I0)') 'MPI_Sendrecv', 1, 120, right, 120

  close (u)
  call MPI_Finalize(ierr)
end program calls_fortran
