! SPDX-License-Identifier: BSD-3-Clause
! Spectral Poisson solver on the periodic box [0, 2 pi)^3 through toru's C API (the toru_fft module):
!
!   laplacian(u) = f,   f = -14 sin(x) cos(2y) sin(3z) - 10.5 cos(2x - y + 4z)
!
! whose zero-mean solution is u = sin(x) cos(2y) sin(3z) + 0.5 cos(2x - y + 4z): a real-to-complex
! forward FFT of f, a division by -|k|^2 (the zero mode, the mean, set to 0), a complex-to-real
! backward FFT scaled by 1/N. Every mode is resolved, so the answer is exact up to round-off: the
! program fails unless max |u - u_exact| < 1e-10. Axes are numbered as in C (axis 3 = the last C
! index, contiguous in memory); boxes hold 0-based global indices.
!
! Usage: mpiexec -n P poisson_fortran   (grids 24x18x30 and 10x14x15, odd last axis)
program toru_poisson
  use, intrinsic :: iso_c_binding
  use mpi
  use toru_fft
  implicit none
  integer, parameter :: dp = c_double
  real(dp), parameter :: two_pi = 6.283185307179586476925286766559_dp
  integer(c_long_long) :: grids(3, 2)
  real(dp) :: err
  integer :: ierr, rank, nranks, g, provided
  logical :: failed

  ! toru's pipelined all-to-all drives its two phases from two threads when MPI allows it.
  call MPI_Init_thread(MPI_THREAD_MULTIPLE, provided, ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  grids = reshape([24_c_long_long, 18_c_long_long, 30_c_long_long, 10_c_long_long, 14_c_long_long, 15_c_long_long], &
                  [3, 2])
  failed = .false.
  do g = 1, 2
    err = solve(grids(:, g))
    failed = failed .or. .not. (err < 1e-10_dp)
    if (rank == 0) print '(a, i0, "x", i0, "x", i0, a, i0, a, es10.3, 1x, a)', 'poisson (Fortran): ', grids(:, g), &
      ' on ', nranks, ' rank(s): max error ', err, trim(merge('ok    ', 'FAILED', err < 1e-10_dp))
  end do
  call MPI_Finalize(ierr)
  if (failed) stop 1

contains

  real(dp) function exact_u(x, y, z)
    real(dp), intent(in) :: x, y, z
    exact_u = sin(x) * cos(2 * y) * sin(3 * z) + 0.5_dp * cos(2 * x - y + 4 * z)
  end function

  real(dp) function rhs_f(x, y, z)
    real(dp), intent(in) :: x, y, z
    rhs_f = -14 * sin(x) * cos(2 * y) * sin(3 * z) - 0.5_dp * 21 * cos(2 * x - y + 4 * z)
  end function

  ! 1-based position of local coordinates l (per axis) in a box's memory: axes nest order(1)
  ! (slowest) to order(3) (fastest), rows of the fastest axis row_stride elements apart.
  integer(c_long_long) function pos(b, l)
    type(toru_fft_box), intent(in) :: b
    integer(c_long_long), intent(in) :: l(3)
    integer :: o(3)
    o = b%order + 1
    pos = 1 + (l(o(1)) * b%size(o(2)) + l(o(2))) * b%row_stride + l(o(3))
  end function

  ! The signed wavenumber of global index i on an axis of n points.
  integer(c_long_long) function wavenumber(i, n)
    integer(c_long_long), intent(in) :: i, n
    if (2 * i <= n) then
      wavenumber = i
    else
      wavenumber = i - n
    end if
  end function

  ! Solves on an n(1) x n(2) x n(3) grid; returns the largest error over all ranks.
  real(dp) function solve(n) result(max_err)
    integer(c_long_long), intent(in) :: n(3)
    type(c_ptr) :: plan
    type(toru_fft_box) :: inbox, outbox
    type(toru_fft_options) :: opts
    integer(c_long_long) :: alloc, l(3), i, j, k, k2
    integer(c_int) :: r
    real(c_double), allocatable, target :: f(:), u(:)
    complex(c_double_complex), allocatable, target :: spec(:)
    real(dp) :: err, x(3)

    opts = toru_fft_options_default()
    ! The solver scales the spectrum pointwise, so it can stay in the plan's transposed order.
    opts%transposed_out = 1
    r = toru_fft_plan_create_r2c_3d(MPI_COMM_WORLD, n(1), n(2), n(3), plan, opts)
    call check(r, 'toru_fft_plan_create_r2c_3d')
    r = toru_fft_plan_local_size(plan, inbox, outbox, alloc)
    call check(r, 'toru_fft_plan_local_size')
    ! Real arrays: 2 * alloc reals, rows padded to 2 (n3/2 + 1); the spectrum: alloc complex.
    allocate(f(2 * alloc), u(2 * alloc), spec(alloc))
    f = 0
    do i = 0, inbox%size(1) - 1
      do j = 0, inbox%size(2) - 1
        do k = 0, inbox%size(3) - 1
          l = [i, j, k]
          x = two_pi * real(inbox%low + l, dp) / real(n, dp)
          f(pos(inbox, l)) = rhs_f(x(1), x(2), x(3))
        end do
      end do
    end do
    r = toru_fft_plan_execute(plan, TORU_FFT_FORWARD, TORU_FFT_SCALE_NONE, c_loc(f), c_loc(spec))
    call check(r, 'toru_fft_plan_execute (forward)')
    do i = 0, outbox%size(1) - 1
      do j = 0, outbox%size(2) - 1
        do k = 0, outbox%size(3) - 1
          l = [i, j, k]
          ! The r2c side keeps wavenumbers 0..n3/2 of the last axis, all signed ones of the others.
          k2 = wavenumber(outbox%low(1) + i, n(1))**2 + wavenumber(outbox%low(2) + j, n(2))**2 + (outbox%low(3) + k)**2
          if (k2 == 0) then
            spec(pos(outbox, l)) = 0
          else
            spec(pos(outbox, l)) = -spec(pos(outbox, l)) / real(k2, dp)
          end if
        end do
      end do
    end do
    r = toru_fft_plan_execute(plan, TORU_FFT_BACKWARD, TORU_FFT_SCALE_FULL, c_loc(spec), c_loc(u))
    call check(r, 'toru_fft_plan_execute (backward)')
    err = 0
    do i = 0, inbox%size(1) - 1
      do j = 0, inbox%size(2) - 1
        do k = 0, inbox%size(3) - 1
          l = [i, j, k]
          x = two_pi * real(inbox%low + l, dp) / real(n, dp)
          err = max(err, abs(u(pos(inbox, l)) - exact_u(x(1), x(2), x(3))))
        end do
      end do
    end do
    call MPI_Allreduce(err, max_err, 1, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, ierr)
    r = toru_fft_plan_destroy(plan)
  end function

  subroutine check(r, what)
    integer(c_int), intent(in) :: r
    character(*), intent(in) :: what
    integer :: e
    if (r /= TORU_SUCCESS) then
      print '(a, a, a, a)', 'poisson: ', what, ' failed: ', toru_fft_error_message()
      call MPI_Abort(MPI_COMM_WORLD, 1, e)
    end if
  end subroutine
end program toru_poisson
