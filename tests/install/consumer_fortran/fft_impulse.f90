! SPDX-License-Identifier: BSD-3-Clause
! A Fortran code linking the installed toru, through CMake or through pkg-config alone: the 3D
! FFT of a unit impulse at the origin is 1 everywhere. Exit status 0 = pass.
program toru_fortran_only
  use, intrinsic :: iso_c_binding
  use mpi
  use toru_fft
  implicit none
  type(c_ptr) :: plan
  type(toru_fft_box) :: inbox, outbox
  integer(c_long_long) :: alloc, i, j, k, s0, s1, s2, at
  complex(c_double_complex), allocatable, target :: a(:), b(:)
  integer :: ierr, rank, bad, any_bad
  integer(c_int) :: r

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  r = toru_fft_plan_create_3d(MPI_COMM_WORLD, 4_c_long_long, 3_c_long_long, 5_c_long_long, plan)
  if (r /= TORU_SUCCESS) then
    print *, 'plan failed: ', toru_fft_error_message()
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
  end if
  r = toru_fft_plan_local_size(plan, inbox, outbox, alloc)
  allocate(a(alloc + 1), b(alloc + 1))
  a = (0.0_c_double, 0.0_c_double)
  b = a
  if (all(inbox%low == 0) .and. product(inbox%size) > 0) a(1) = (1.0_c_double, 0.0_c_double)
  bad = 0
  r = toru_fft_plan_execute(plan, TORU_FFT_FORWARD, TORU_FFT_SCALE_NONE, c_loc(a), c_loc(b))
  if (r /= TORU_SUCCESS) bad = 1
  s0 = outbox%size(outbox%order(1) + 1)
  s1 = outbox%size(outbox%order(2) + 1)
  s2 = outbox%size(outbox%order(3) + 1)
  do i = 0, s0 - 1
    do j = 0, s1 - 1
      do k = 0, s2 - 1
        at = (i * s1 + j) * outbox%row_stride + k + 1
        if (abs(b(at) - (1.0_c_double, 0.0_c_double)) > 1e-12_c_double) bad = 1
      end do
    end do
  end do
  r = toru_fft_plan_destroy(plan)
  call MPI_Allreduce(bad, any_bad, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a,a)', 'toru from Fortran: impulse FFT ', merge('WRONG', 'ok   ', any_bad /= 0)
  call MPI_Finalize(ierr)
  if (any_bad /= 0) stop 1
end program toru_fortran_only
