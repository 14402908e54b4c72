! SPDX-License-Identifier: BSD-3-Clause
! Persistent requests from Fortran: a 3D c2c plan of 5x4x3 bound once to arrays a -> b
! (toru_fft_plan_init), then started twice, each time with a unit impulse at another point j in a;
! every output point must be exp(-2 pi i k.j / n) (the analytic transform of the impulse). The split
! phase (toru_fft_plan_start / _wait) once more on the third impulse.
program persistent_f_test
  use mpi
  use iso_c_binding
  use toru_fft
  implicit none
  integer :: ierr, me, bad, all_bad, round
  integer(c_long_long) :: n(3), alloc, jpos(3, 3)
  type(toru_fft_box) :: inbox, outbox
  type(c_ptr) :: plan, req
  complex(c_double_complex), allocatable, target :: a(:), b(:)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, me, ierr)
  n = [5_c_long_long, 4_c_long_long, 3_c_long_long]
  jpos = reshape([1_c_long_long, 2_c_long_long, 0_c_long_long, 4_c_long_long, 0_c_long_long, 2_c_long_long, &
                  0_c_long_long, 3_c_long_long, 1_c_long_long], [3, 3])
  if (toru_fft_plan_create_3d(MPI_COMM_WORLD, n(1), n(2), n(3), plan) /= TORU_SUCCESS) error stop "create failed"
  if (toru_fft_plan_local_size(plan, inbox, outbox, alloc) /= TORU_SUCCESS) error stop "local_size failed"
  allocate(a(max(alloc, 1_c_long_long)), b(max(alloc, 1_c_long_long)))
  if (toru_fft_plan_init(plan, TORU_FFT_FORWARD, TORU_FFT_SCALE_NONE, c_loc(a), c_loc(b), req) /= TORU_SUCCESS) &
    error stop "init failed"
  bad = 0
  do round = 1, 2
    call impulse(jpos(:, round))
    if (toru_request_start(req) /= TORU_SUCCESS) error stop "start failed"
    if (toru_request_wait(req) /= TORU_SUCCESS) error stop "wait failed"
    call check(jpos(:, round))
  end do
  if (toru_request_wait(req) /= TORU_ERROR_INVALID_ARGUMENT) bad = bad + 1  ! nothing in flight
  if (toru_request_free(req) /= TORU_SUCCESS .or. c_associated(req)) bad = bad + 1
  call impulse(jpos(:, 3))
  if (toru_fft_plan_start(plan, TORU_FFT_FORWARD, TORU_FFT_SCALE_NONE, c_loc(a), c_loc(b)) /= TORU_SUCCESS) &
    error stop "plan start failed"
  if (toru_fft_plan_wait(plan) /= TORU_SUCCESS) error stop "plan wait failed"
  call check(jpos(:, 3))
  if (toru_fft_plan_destroy(plan) /= TORU_SUCCESS) error stop "destroy failed"
  call MPI_Allreduce(bad, all_bad, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (me == 0) print '(a, i0, a)', "persistent FFT from Fortran: ", all_bad, " bad"
  call MPI_Finalize(ierr)
  if (all_bad /= 0) error stop 1

contains

  ! Memory offset (0-based) of global point g in box bx: order(3) is the fastest axis.
  integer(c_long_long) function offset(bx, g)
    type(toru_fft_box), intent(in) :: bx
    integer(c_long_long), intent(in) :: g(3)
    integer :: a0, a1, a2
    integer(c_long_long) :: stride
    a0 = bx%order(1) + 1
    a1 = bx%order(2) + 1
    a2 = bx%order(3) + 1
    stride = bx%row_stride
    if (stride == 0) stride = bx%size(a2)
    offset = ((g(a0) - bx%low(a0)) * bx%size(a1) + (g(a1) - bx%low(a1))) * stride + (g(a2) - bx%low(a2))
  end function

  logical function inside(bx, g)
    type(toru_fft_box), intent(in) :: bx
    integer(c_long_long), intent(in) :: g(3)
    inside = all(g >= bx%low) .and. all(g < bx%low + bx%size)
  end function

  subroutine impulse(j)
    integer(c_long_long), intent(in) :: j(3)
    a = (0, 0)
    if (inside(inbox, j)) a(1 + offset(inbox, j)) = (1, 0)
  end subroutine

  subroutine check(j)
    integer(c_long_long), intent(in) :: j(3)
    integer(c_long_long) :: k(3), i0, i1, i2
    real(c_double), parameter :: two_pi = 2 * acos(-1.0_c_double)
    real(c_double) :: phase
    do i0 = outbox%low(1), outbox%low(1) + outbox%size(1) - 1
      do i1 = outbox%low(2), outbox%low(2) + outbox%size(2) - 1
        do i2 = outbox%low(3), outbox%low(3) + outbox%size(3) - 1
          k = [i0, i1, i2]
          phase = -two_pi * sum(real(k * j, c_double) / real(n, c_double))
          if (abs(b(1 + offset(outbox, k)) - cmplx(cos(phase), sin(phase), c_double)) > 1e-12_c_double) &
            bad = bad + 1
        end do
      end do
    end do
  end subroutine
end program
