! SPDX-License-Identifier: BSD-3-Clause
! Fortran example, run as a test: a 3D real-to-complex FFT and its inverse through the toru_fft
! module. The input is a cosine along the last C axis (contiguous), whose transform has one
! non-zero coefficient n0*n1*n2/2 at (0, 0, m); the inverse runs with a caller workspace. Then a
! distributed 1D FFT with scrambled output, read with the plan's factors n1 x n2, against the
! exact transform of a plane wave. Exit status 0 = pass.
program toru_fft_example
  use, intrinsic :: iso_c_binding
  use mpi
  use toru_fft
  implicit none
  integer, parameter :: dp = c_double
  integer(c_long_long), parameter :: n0 = 8, n1 = 6, n2 = 9, m = 2
  real(dp), parameter :: two_pi = 6.283185307179586476925286766559_dp
  type(c_ptr) :: plan
  type(toru_fft_box) :: inbox, outbox, qin, qout
  type(toru_fft_options) :: opts
  integer(c_long_long) :: alloc, qalloc, i, j, k, gi(3), f1, f2, kk
  integer(c_long_long), parameter :: n1d = 120, m1d = 7
  integer(c_size_t) :: wsbytes
  character(kind=c_char), allocatable, target :: ws(:)
  complex(c_double_complex), allocatable, target :: u(:), v(:)
  complex(c_double_complex), allocatable, target :: spec(:)
  complex(c_double_complex), pointer :: shared(:)
  type(c_ptr) :: shared_ptr
  real(c_double), allocatable, target :: x(:), y(:)
  real(dp) :: err, want, total
  integer :: ierr, rank, o1, o2, o3
  integer(c_int) :: r

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  opts = toru_fft_options_default()
  opts%decomposition = TORU_FFT_DECOMPOSITION_AUTO
  r = toru_fft_plan_create_r2c_3d(MPI_COMM_WORLD, n0, n1, n2, plan, opts)
  if (r /= TORU_SUCCESS) then
    print *, 'plan failed: ', toru_fft_error_message()
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
  end if
  r = toru_fft_plan_local_size(plan, inbox, outbox, alloc)
  ! The plan-less query (like fftw_mpi_local_size_3d) must agree with the plan.
  r = toru_fft_local_size_3d(MPI_COMM_WORLD, n0, n1, n2, .true., qin, qout, qalloc, opts)
  if (r /= TORU_SUCCESS .or. qalloc /= alloc .or. any(qin%low /= inbox%low) .or. any(qin%size /= inbox%size) &
      .or. qin%row_stride /= inbox%row_stride .or. any(qout%size /= outbox%size)) then
    print *, 'local size query disagrees with the plan'
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
  end if
  allocate(spec(alloc), x(2 * alloc), y(2 * alloc))
  x = 0
  ! Real input: rows along axis 2 are padded to row_stride reals.
  do i = 0, inbox%size(1) - 1
    do j = 0, inbox%size(2) - 1
      do k = 0, inbox%size(3) - 1
        x(1 + (i * inbox%size(2) + j) * inbox%row_stride + k) = cos(two_pi * real(m * (inbox%low(3) + k), dp) / n2)
      end do
    end do
  end do
  r = toru_fft_plan_execute(plan, TORU_FFT_FORWARD, TORU_FFT_SCALE_NONE, c_loc(x), c_loc(spec))
  err = 0
  o1 = outbox%order(1) + 1
  o2 = outbox%order(2) + 1
  o3 = outbox%order(3) + 1
  do i = 0, outbox%size(o1) - 1
    do j = 0, outbox%size(o2) - 1
      do k = 0, outbox%size(o3) - 1
        gi(o1) = outbox%low(o1) + i
        gi(o2) = outbox%low(o2) + j
        gi(o3) = outbox%low(o3) + k
        want = 0
        if (gi(1) == 0 .and. gi(2) == 0 .and. gi(3) == m) want = real(n0 * n1 * n2, dp) / 2
        err = max(err, abs(spec(1 + (i * outbox%size(o2) + j) * outbox%row_stride + k) - want))
      end do
    end do
  end do
  ! The same forward into the plan's shared_out(): the same spectrum.
  r = toru_fft_plan_shared_out(plan, shared_ptr)
  if (r /= TORU_SUCCESS) then
    print *, 'shared_out failed: ', toru_fft_error_message()
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
  end if
  call c_f_pointer(shared_ptr, shared, [alloc])
  r = toru_fft_plan_execute(plan, TORU_FFT_FORWARD, TORU_FFT_SCALE_NONE, c_loc(x), shared_ptr)
  if (r /= TORU_SUCCESS) err = 1
  do i = 0, outbox%size(o1) - 1
    do j = 0, outbox%size(o2) - 1
      do k = 1, outbox%size(o3)
        kk = (i * outbox%size(o2) + j) * outbox%row_stride + k
        err = max(err, abs(shared(kk) - spec(kk)))
      end do
    end do
  end do
  r = toru_fft_plan_workspace_size(plan, wsbytes)
  allocate(ws(max(wsbytes, 1_c_size_t)))
  r = toru_fft_plan_execute_ws(plan, TORU_FFT_BACKWARD, TORU_FFT_SCALE_FULL, c_loc(spec), c_loc(y), c_loc(ws))
  if (r /= TORU_SUCCESS) err = 1
  do i = 0, inbox%size(1) - 1
    do j = 0, inbox%size(2) - 1
      do k = 1, inbox%size(3)
        err = max(err, abs(y((i * inbox%size(2) + j) * inbox%row_stride + k) - &
                           x((i * inbox%size(2) + j) * inbox%row_stride + k)))
      end do
    end do
  end do
  r = toru_fft_plan_destroy(plan)

  ! 1D, scrambled: x(j) = exp(2 pi i m j / n) has the single coefficient X(m) = n, which lies at
  ! global position j = k1 * n2 + k2 where m = k1 + n1 * k2.
  opts = toru_fft_options_default()
  opts%transposed_out = 1
  r = toru_fft_plan_create_1d(MPI_COMM_WORLD, n1d, plan, opts)
  if (r /= TORU_SUCCESS) then
    print *, '1D plan failed: ', toru_fft_error_message()
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
  end if
  r = toru_fft_plan_local_size(plan, inbox, outbox, alloc)
  r = toru_fft_plan_factors_1d(plan, f1, f2)
  if (r /= TORU_SUCCESS .or. f1 * f2 /= n1d .or. inbox%row_stride /= 1) err = 1
  allocate(u(alloc), v(alloc))
  do i = 0, inbox%size(1) - 1
    u(1 + i) = exp(cmplx(0, two_pi * real(m1d * (inbox%low(1) + i), dp) / n1d, c_double_complex))
  end do
  r = toru_fft_plan_execute(plan, TORU_FFT_FORWARD, TORU_FFT_SCALE_NONE, c_loc(u), c_loc(v))
  do i = 0, outbox%size(1) - 1
    j = outbox%low(1) + i
    kk = j / f2 + f1 * mod(j, f2)
    want = 0
    if (kk == m1d) want = real(n1d, dp)
    err = max(err, abs(v(1 + i) - want))
  end do
  r = toru_fft_plan_destroy(plan)

  ! Bad input gives a result code, not a crash; the later codes are there too.
  r = toru_fft_plan_create_3d(MPI_COMM_WORLD, 4_c_long_long, -1_c_long_long, 4_c_long_long, plan)
  if (r /= TORU_ERROR_INVALID_ARGUMENT) err = 1
  r = toru_fft_plan_create_1d(MPI_COMM_WORLD, 72057594037927936_c_long_long, plan)
  if (r /= TORU_ERROR_OUT_OF_MEMORY) err = 1

  call MPI_Allreduce(err, total, 1, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    if (total < 1e-10_dp) then
      print '(a)', 'toru Fortran example: passed'
    else
      print '(a, es10.3)', 'toru Fortran example: FAILED, error ', total
    end if
  end if
  call MPI_Finalize(ierr)
  if (total >= 1e-10_dp) stop 1
end program toru_fft_example
