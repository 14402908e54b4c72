! SPDX-License-Identifier: BSD-3-Clause
! Persistent requests from Fortran: a 3D c2c plan of 5x4x3 bound once to arrays a -> b
! (toru_fft_plan_init), then started twice, each time with a unit impulse at another point j in a;
! every output point must be exp(-2 pi i k.j / n) (the analytic transform of the impulse). The split
! phase (toru_fft_plan_start / _wait) once more on the third impulse. Then the same on the other
! plans' persistent forms: a batched plan of two interleaved c2c fields (toru_fft_batch_plan_init),
! field f an impulse at its own point, each field against the analytic transform; and an r2r plan,
! DCT-II x DST-III x DCT-IV (toru_fft_r2r_plan_init), each output point against the analytic
! transform of the impulse (FFTW's unnormalized kinds) and bit for bit against
! toru_fft_r2r_plan_execute.
program persistent_f_test
  use mpi
  use iso_c_binding
  use toru_fft
  implicit none
  integer :: ierr, me, bad, all_bad, round, f
  integer(c_long_long) :: n(3), alloc, jpos(3, 3), balloc, ralloc
  type(toru_fft_box) :: inbox, outbox, binbox, boutbox, rinbox, routbox
  type(c_ptr) :: plan, req, bplan, rplan
  complex(c_double_complex), allocatable, target :: a(:), b(:), c(:), d(:)
  real(c_double), allocatable, target :: ra(:), rb(:), rc(:)

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
    call check(b, outbox, 1, 0, jpos(:, round))
  end do
  if (toru_request_wait(req) /= TORU_ERROR_INVALID_ARGUMENT) bad = bad + 1  ! nothing in flight
  if (toru_request_free(req) /= TORU_SUCCESS .or. c_associated(req)) bad = bad + 1
  call impulse(jpos(:, 3))
  if (toru_fft_plan_start(plan, TORU_FFT_FORWARD, TORU_FFT_SCALE_NONE, c_loc(a), c_loc(b)) /= TORU_SUCCESS) &
    error stop "plan start failed"
  if (toru_fft_plan_wait(plan) /= TORU_SUCCESS) error stop "plan wait failed"
  call check(b, outbox, 1, 0, jpos(:, 3))
  if (toru_fft_plan_destroy(plan) /= TORU_SUCCESS) error stop "destroy failed"

  if (toru_fft_batch_plan_create_3d(MPI_COMM_WORLD, n(1), n(2), n(3), 0_c_int, 2_c_int, TORU_FFT_INTERLEAVED, &
      bplan) /= TORU_SUCCESS) error stop "batch create failed"
  if (toru_fft_batch_plan_local_size(bplan, binbox, boutbox, balloc) /= TORU_SUCCESS) error stop "batch size failed"
  allocate(c(max(balloc, 1_c_long_long)), d(max(balloc, 1_c_long_long)))
  if (toru_fft_batch_plan_init(bplan, TORU_FFT_FORWARD, TORU_FFT_SCALE_NONE, c_loc(c), c_loc(d), req) &
      /= TORU_SUCCESS) error stop "batch init failed"
  do round = 1, 2
    c = (0, 0)
    do f = 0, 1  ! field f (interleaved: element m of field f at 2 m + f) holds the impulse jpos(:, round + f)
      if (inside(binbox, jpos(:, round + f))) c(1 + 2 * offset(binbox, jpos(:, round + f)) + f) = (1, 0)
    end do
    if (toru_request_start(req) /= TORU_SUCCESS) error stop "batch start failed"
    if (toru_request_wait(req) /= TORU_SUCCESS) error stop "batch wait failed"
    do f = 0, 1
      call check(d, boutbox, 2, f, jpos(:, round + f))
    end do
  end do
  if (toru_request_free(req) /= TORU_SUCCESS .or. c_associated(req)) bad = bad + 1
  if (toru_fft_batch_plan_destroy(bplan) /= TORU_SUCCESS) error stop "batch destroy failed"

  if (toru_fft_r2r_plan_create_3d(MPI_COMM_WORLD, n(1), n(2), n(3), [TORU_FFT_DCT2, TORU_FFT_DST3, TORU_FFT_DCT4], &
      rplan) /= TORU_SUCCESS) error stop "r2r create failed"
  if (toru_fft_r2r_plan_local_size(rplan, rinbox, routbox, ralloc) /= TORU_SUCCESS) error stop "r2r size failed"
  allocate(ra(max(ralloc, 1_c_long_long)), rb(max(ralloc, 1_c_long_long)), rc(max(ralloc, 1_c_long_long)))
  if (toru_fft_r2r_plan_init(rplan, TORU_FFT_FORWARD, TORU_FFT_SCALE_NONE, c_loc(ra), c_loc(rb), req) &
      /= TORU_SUCCESS) error stop "r2r init failed"
  do round = 1, 2
    ra = 0
    ! jpos(:, 3) sits on the last index of axis 1, the input RODFT01 weighs differently.
    if (inside(rinbox, jpos(:, round + 1))) ra(1 + offset(rinbox, jpos(:, round + 1))) = 1
    if (toru_request_start(req) /= TORU_SUCCESS) error stop "r2r start failed"
    if (toru_request_wait(req) /= TORU_SUCCESS) error stop "r2r wait failed"
    if (toru_fft_r2r_plan_execute(rplan, TORU_FFT_FORWARD, TORU_FFT_SCALE_NONE, c_loc(ra), c_loc(rc)) &
        /= TORU_SUCCESS) error stop "r2r execute failed"
    call check_r2r(jpos(:, round + 1))
  end do
  if (toru_request_free(req) /= TORU_SUCCESS .or. c_associated(req)) bad = bad + 1
  if (toru_fft_r2r_plan_destroy(rplan) /= TORU_SUCCESS) error stop "r2r destroy failed"
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

  ! Field f of nf (interleaved) in v over box bx must be the transform of a unit impulse at j.
  subroutine check(v, bx, nf, f, j)
    complex(c_double_complex), intent(in) :: v(:)
    type(toru_fft_box), intent(in) :: bx
    integer, intent(in) :: nf, f
    integer(c_long_long), intent(in) :: j(3)
    integer(c_long_long) :: k(3), i0, i1, i2
    real(c_double), parameter :: two_pi = 2 * acos(-1.0_c_double)
    real(c_double) :: phase
    do i0 = bx%low(1), bx%low(1) + bx%size(1) - 1
      do i1 = bx%low(2), bx%low(2) + bx%size(2) - 1
        do i2 = bx%low(3), bx%low(3) + bx%size(3) - 1
          k = [i0, i1, i2]
          phase = -two_pi * sum(real(k * j, c_double) / real(n, c_double))
          if (abs(v(1 + nf * offset(bx, k) + f) - cmplx(cos(phase), sin(phase), c_double)) > 1e-12_c_double) &
            bad = bad + 1
        end do
      end do
    end do
  end subroutine

  ! rb against FFTW's REDFT10 x RODFT01 x REDFT11 of a unit impulse at j (a product of one factor per
  ! axis; RODFT01 weighs its last input by 1, the others by 2), and rb against rc bit for bit.
  subroutine check_r2r(j)
    integer(c_long_long), intent(in) :: j(3)
    integer(c_long_long) :: k(3), i0, i1, i2, at
    real(c_double), parameter :: pi = acos(-1.0_c_double)
    real(c_double) :: dct2, dst3, dct4
    do i0 = routbox%low(1), routbox%low(1) + routbox%size(1) - 1
      do i1 = routbox%low(2), routbox%low(2) + routbox%size(2) - 1
        do i2 = routbox%low(3), routbox%low(3) + routbox%size(3) - 1
          k = [i0, i1, i2]
          dct2 = 2 * cos(pi * (j(1) + 0.5_c_double) * k(1) / n(1))
          dst3 = 2 * sin(pi * (j(2) + 1) * (k(2) + 0.5_c_double) / n(2))
          if (j(2) == n(2) - 1) dst3 = dst3 / 2
          dct4 = 2 * cos(pi * (j(3) + 0.5_c_double) * (k(3) + 0.5_c_double) / n(3))
          at = 1 + offset(routbox, k)
          if (abs(rb(at) - dct2 * dst3 * dct4) > 1e-12_c_double) bad = bad + 1
          if (transfer(rb(at), 0_c_int64_t) /= transfer(rc(at), 0_c_int64_t)) bad = bad + 1  ! the bits
        end do
      end do
    end do
  end subroutine
end program
