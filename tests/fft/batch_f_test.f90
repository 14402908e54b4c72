! SPDX-License-Identifier: BSD-3-Clause
! The Fortran batched r2c plan: two real fields, interleaved, field f = cos(2 pi a_f i / n0) (a
! plane wave along C axis 0). Its r2c transform is n0 n1 n2 / 2 at (a_f, 0, 0) and at
! (n0 - a_f, 0, 0) and zero elsewhere (analytic); backward with full scaling restores both fields.
! C memory order, 0-based boxes, natural output (z-pencils, axis 2 contiguous).
program batch_f_test
  use mpi
  use iso_c_binding
  use toru_fft
  implicit none
  real(c_double), parameter :: pi = 3.14159265358979323846_c_double
  integer, parameter :: nf = 2
  integer :: ierr, me, bad, all_bad, f
  integer(c_long_long) :: i, j, k, alloc, at, a(nf), g0
  integer(c_long_long) :: n(3)
  type(toru_fft_box) :: inbox, outbox
  type(c_ptr) :: plan
  real(c_double), allocatable, target :: x(:), z(:)
  complex(c_double_complex), allocatable, target :: y(:)
  complex(c_double_complex) :: want

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, me, ierr)
  n = [9_c_long_long, 5_c_long_long, 6_c_long_long]
  a = [2_c_long_long, 3_c_long_long]
  if (toru_fft_batch_plan_create_3d(MPI_COMM_WORLD, n(1), n(2), n(3), 1_c_int, int(nf, c_int), &
      TORU_FFT_INTERLEAVED, plan) /= TORU_SUCCESS) error stop "create failed"
  if (toru_fft_batch_plan_local_size(plan, inbox, outbox, alloc) /= TORU_SUCCESS) error stop "local_size failed"
  allocate(x(max(2 * alloc, 1_c_long_long)), z(max(2 * alloc, 1_c_long_long)), y(max(alloc, 1_c_long_long)))
  x = 0
  z = 0
  do i = 0, inbox%size(1) - 1
    do j = 0, inbox%size(2) - 1
      do k = 0, inbox%size(3) - 1
        do f = 1, nf
          at = 1 + ((i * inbox%size(2) + j) * inbox%row_stride + k) * nf + (f - 1)
          x(at) = cos(2 * pi * real(a(f) * (inbox%low(1) + i), c_double) / n(1))
        end do
      end do
    end do
  end do
  if (toru_fft_batch_plan_execute(plan, TORU_FFT_FORWARD, TORU_FFT_SCALE_NONE, c_loc(x), c_loc(y)) /= TORU_SUCCESS) &
    error stop "forward failed"
  bad = 0
  do i = 0, outbox%size(1) - 1
    do j = 0, outbox%size(2) - 1
      do k = 0, outbox%size(3) - 1
        do f = 1, nf
          g0 = outbox%low(1) + i
          want = 0
          if ((g0 == a(f) .or. g0 == n(1) - a(f)) .and. outbox%low(2) + j == 0 .and. outbox%low(3) + k == 0) &
            want = product(n) / 2
          at = 1 + ((i * outbox%size(2) + j) * outbox%row_stride + k) * nf + (f - 1)
          if (abs(y(at) - want) > 1e-9_c_double) bad = bad + 1
        end do
      end do
    end do
  end do
  if (toru_fft_batch_plan_execute(plan, TORU_FFT_BACKWARD, TORU_FFT_SCALE_FULL, c_loc(y), c_loc(z)) /= TORU_SUCCESS) &
    error stop "backward failed"
  do i = 0, inbox%size(1) - 1
    do j = 0, inbox%size(2) - 1
      do k = 0, inbox%size(3) - 1
        do f = 1, nf
          at = 1 + ((i * inbox%size(2) + j) * inbox%row_stride + k) * nf + (f - 1)
          if (abs(z(at) - x(at)) > 1e-12_c_double) bad = bad + 1
        end do
      end do
    end do
  end do
  if (toru_fft_batch_plan_destroy(plan) /= TORU_SUCCESS) error stop "destroy failed"
  call MPI_Allreduce(bad, all_bad, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (me == 0) print '(a, i0, a)', "batched r2c from Fortran: ", all_bad, " bad"
  call MPI_Finalize(ierr)
  if (all_bad /= 0) error stop 1
end program
