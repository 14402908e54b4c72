! SPDX-License-Identifier: BSD-3-Clause
! The Fortran reshape: complex x-slabs to y-slabs of a 4x5x3 array (0-based global boxes, the C
! memory order: axis 2 fastest), every point checked against its global index.
program reshape_f_test
  use mpi
  use iso_c_binding
  use toru_fft
  implicit none
  integer :: ierr, nranks, me, bad, all_bad
  integer(c_long_long) :: i, j, k
  integer(c_long_long) :: n(3), in_size, out_size
  type(toru_fft_box) :: inbox, outbox
  type(c_ptr) :: r
  complex(c_double_complex), allocatable, target :: a(:), b(:)

  call MPI_Init(ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, me, ierr)
  n = [4_c_long_long, 5_c_long_long, 3_c_long_long]
  inbox = slab(1, me)
  outbox = slab(2, me)
  if (toru_fft_reshape_create(MPI_COMM_WORLD, n(1), n(2), n(3), inbox, outbox, TORU_FFT_ELEMENT_COMPLEX_DOUBLE, r) &
      /= TORU_SUCCESS) error stop "create failed"
  if (toru_fft_reshape_sizes(r, in_size, out_size) /= TORU_SUCCESS) error stop "sizes failed"
  allocate(a(max(in_size, 1_c_long_long)), b(max(out_size, 1_c_long_long)))
  do i = 0, inbox%size(1) - 1
    do j = 0, n(2) - 1
      do k = 0, n(3) - 1
        a(1 + (i * n(2) + j) * n(3) + k) = cmplx(global(inbox%low(1) + i, j, k), -1, c_double)
      end do
    end do
  end do
  if (toru_fft_reshape_execute(r, c_loc(a), c_loc(b)) /= TORU_SUCCESS) error stop "execute failed"
  bad = 0
  do i = 0, n(1) - 1
    do j = 0, outbox%size(2) - 1
      do k = 0, n(3) - 1
        if (b(1 + (i * outbox%size(2) + j) * n(3) + k) /= cmplx(global(i, outbox%low(2) + j, k), -1, c_double)) &
          bad = bad + 1
      end do
    end do
  end do
  if (toru_fft_reshape_destroy(r) /= TORU_SUCCESS) error stop "destroy failed"
  call MPI_Allreduce(bad, all_bad, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (me == 0) print '(a, i0, a)', "reshape from Fortran: ", all_bad, " bad"
  call MPI_Finalize(ierr)
  if (all_bad /= 0) error stop 1

contains

  type(toru_fft_box) function slab(axis, rank)
    integer, intent(in) :: axis, rank
    slab%low = 0
    slab%size = n
    slab%order = [0, 1, 2]
    slab%row_stride = 0
    slab%low(axis) = n(axis) * rank / nranks
    slab%size(axis) = n(axis) * (rank + 1) / nranks - slab%low(axis)
  end function

  real(c_double) function global(i, j, k)
    integer(c_long_long), intent(in) :: i, j, k
    global = real((i * n(2) + j) * n(3) + k, c_double)
  end function
end program
