! SPDX-License-Identifier: BSD-3-Clause
! One injected bottleneck, in Fortran (mpif.h bindings): rank 0 computes 0.1 s before it sends,
! rank 1 receives at once.
program late_sender_f
  implicit none
  include 'mpif.h'
  integer :: ierr, rank, size, it, status(MPI_STATUS_SIZE)
  double precision :: buf(16)
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  buf = 0
  do it = 1, 6
    if (rank == 0) then
      call sleep_s(0.1d0)
      call MPI_Send(buf, 16, MPI_DOUBLE_PRECISION, 1, 0, MPI_COMM_WORLD, ierr)
    else if (rank == 1) then
      call MPI_Recv(buf, 16, MPI_DOUBLE_PRECISION, 0, 0, MPI_COMM_WORLD, status, ierr) ! INJECT(late_sender)
    end if
  end do
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Finalize(ierr)
contains
  subroutine sleep_s(seconds)
    double precision, intent(in) :: seconds
    integer(8) :: c0, c, rate
    call system_clock(c0, rate)
    do
      call system_clock(c)
      if (dble(c - c0) / dble(rate) >= seconds) exit
    end do
  end subroutine sleep_s
end program late_sender_f
