! SPDX-License-Identifier: BSD-3-Clause
! The Fortran mixed plan on a channel (periodic x and y, DCT-II in z): the transform of the mode
! exp(2 pi i (a0 x / n0 + a1 y / n1)) cos(pi k2 (z + 1/2) / n2) is n0 n1 n2 at (a0, a1, k2) and zero
! elsewhere (analytic); backward with full scaling restores it. C memory order, 0-based boxes.
! The real-data mixed plan (DCT-II in y, r2c in z) on cos(2 pi (a0 x / n0 + a2 z / n2)) cos(pi k1 (y + 1/2) / n1):
! n0 n1 n2 / 2 at (a0, k1, a2) in the Hermitian half, zero elsewhere; backward restores it.
program mixed_f_test
  use mpi
  use iso_c_binding
  use toru_fft
  implicit none
  real(c_double), parameter :: pi = 3.14159265358979323846_c_double
  integer :: ierr, me, bad, all_bad
  integer(c_long_long) :: i, j, k, alloc, at
  integer(c_long_long) :: n(3), peak(3)
  type(toru_fft_box) :: inbox, outbox
  type(c_ptr) :: plan
  complex(c_double_complex), allocatable, target :: x(:), y(:), z(:)
  complex(c_double_complex) :: want
  real(c_double), allocatable, target :: r(:), back(:)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, me, ierr)
  n = [6_c_long_long, 5_c_long_long, 7_c_long_long]
  peak = [4_c_long_long, 2_c_long_long, 3_c_long_long]
  if (toru_fft_r2r_plan_create_mixed_3d(MPI_COMM_WORLD, n(1), n(2), n(3), &
      [TORU_FFT_PERIODIC, TORU_FFT_PERIODIC, TORU_FFT_DCT2], plan) /= TORU_SUCCESS) error stop "create failed"
  if (toru_fft_r2r_plan_local_size(plan, inbox, outbox, alloc) /= TORU_SUCCESS) error stop "local_size failed"
  allocate(x(max(alloc, 1_c_long_long)), y(max(alloc, 1_c_long_long)), z(max(alloc, 1_c_long_long)))
  x = 0
  do i = 0, inbox%size(1) - 1
    do j = 0, inbox%size(2) - 1
      do k = 0, inbox%size(3) - 1
        x(1 + (i * inbox%size(2) + j) * inbox%row_stride + k) = &
          exp(cmplx(0, 2 * pi * (real(peak(1) * (inbox%low(1) + i), c_double) / n(1) + &
                                 real(peak(2) * (inbox%low(2) + j), c_double) / n(2)), c_double)) * &
          cos(pi * peak(3) * (inbox%low(3) + k + 0.5_c_double) / n(3))
      end do
    end do
  end do
  if (toru_fft_r2r_plan_execute(plan, TORU_FFT_FORWARD, TORU_FFT_SCALE_NONE, c_loc(x), c_loc(y)) /= TORU_SUCCESS) &
    error stop "forward failed"
  bad = 0
  do i = 0, outbox%size(1) - 1
    do j = 0, outbox%size(2) - 1
      do k = 0, outbox%size(3) - 1
        want = 0
        if (all([outbox%low(1) + i, outbox%low(2) + j, outbox%low(3) + k] == peak)) want = product(n)
        at = 1 + (i * outbox%size(2) + j) * outbox%row_stride + k
        if (abs(y(at) - want) > 1e-9_c_double) bad = bad + 1
      end do
    end do
  end do
  if (toru_fft_r2r_plan_execute(plan, TORU_FFT_BACKWARD, TORU_FFT_SCALE_FULL, c_loc(y), c_loc(z)) /= TORU_SUCCESS) &
    error stop "backward failed"
  do i = 1, min(alloc, product(inbox%size))
    if (abs(z(i) - x(i)) > 1e-12_c_double) bad = bad + 1
  end do
  if (toru_fft_r2r_plan_destroy(plan) /= TORU_SUCCESS) error stop "destroy failed"

  if (toru_fft_r2r_plan_create_mixed_r2c_3d(MPI_COMM_WORLD, n(1), n(2), n(3), &
      [TORU_FFT_PERIODIC, TORU_FFT_DCT2, TORU_FFT_PERIODIC], plan) /= TORU_SUCCESS) error stop "create r2c failed"
  if (toru_fft_r2r_plan_local_size(plan, inbox, outbox, alloc) /= TORU_SUCCESS) error stop "local_size failed"
  if (inbox%row_stride /= 2 * (n(3) / 2 + 1)) bad = bad + 1
  allocate(r(2 * max(alloc, 1_c_long_long)), back(2 * max(alloc, 1_c_long_long)))
  r = 0
  y = 0
  do i = 0, inbox%size(1) - 1
    do j = 0, inbox%size(2) - 1
      do k = 0, inbox%size(3) - 1
        r(1 + (i * inbox%size(2) + j) * inbox%row_stride + k) = &
          cos(2 * pi * (real(peak(1) * (inbox%low(1) + i), c_double) / n(1) + &
                        real(peak(3) * (inbox%low(3) + k), c_double) / n(3))) * &
          cos(pi * peak(2) * (inbox%low(2) + j + 0.5_c_double) / n(2))
      end do
    end do
  end do
  if (toru_fft_r2r_plan_execute(plan, TORU_FFT_FORWARD, TORU_FFT_SCALE_NONE, c_loc(r), c_loc(y)) /= TORU_SUCCESS) &
    error stop "r2c forward failed"
  do i = 0, outbox%size(1) - 1
    do j = 0, outbox%size(2) - 1
      do k = 0, outbox%size(3) - 1
        want = 0
        if (all([outbox%low(1) + i, outbox%low(2) + j, outbox%low(3) + k] == peak)) want = product(n) / 2.0_c_double
        at = 1 + (i * outbox%size(2) + j) * outbox%row_stride + k
        if (abs(y(at) - want) > 1e-9_c_double) bad = bad + 1
      end do
    end do
  end do
  if (toru_fft_r2r_plan_execute(plan, TORU_FFT_BACKWARD, TORU_FFT_SCALE_FULL, c_loc(y), c_loc(back)) /= TORU_SUCCESS) &
    error stop "c2r backward failed"
  do i = 0, inbox%size(1) - 1
    do j = 0, inbox%size(2) - 1
      do k = 0, inbox%size(3) - 1
        at = 1 + (i * inbox%size(2) + j) * inbox%row_stride + k
        if (abs(back(at) - r(at)) > 1e-12_c_double) bad = bad + 1
      end do
    end do
  end do
  if (toru_fft_r2r_plan_destroy(plan) /= TORU_SUCCESS) error stop "destroy failed"
  call MPI_Allreduce(bad, all_bad, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (me == 0) print '(a, i0, a)', "mixed from Fortran: ", all_bad, " bad"
  call MPI_Finalize(ierr)
  if (all_bad /= 0) error stop 1
end program
