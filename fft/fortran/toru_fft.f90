! SPDX-License-Identifier: BSD-3-Clause
! toru_fft: Fortran bindings (ISO_C_BINDING) for toru's parallel 3D and distributed 1D FFTs.
!
!   use mpi
!   use toru_fft
!   type(c_ptr) :: plan
!   type(toru_fft_box) :: inbox, outbox
!   integer(c_long_long) :: alloc
!   complex(c_double_complex), allocatable, target :: a(:), b(:)
!   ierr = toru_fft_plan_create_3d(MPI_COMM_WORLD, n0, n1, n2, plan)          ! collective
!   ierr = toru_fft_plan_local_size(plan, inbox, outbox, alloc)
!   allocate(a(alloc), b(alloc))
!   ierr = toru_fft_plan_execute(plan, TORU_FFT_FORWARD, TORU_FFT_SCALE_NONE, c_loc(a), c_loc(b))
!   ierr = toru_fft_plan_destroy(plan)
!
! The names are toru/fft.h's; the names of toru 0.1 (toru_fft_plan_3d, toru_fft_execute,
! toru_fft_destroy, ...) still work and forward to them.
!
! Arrays follow the C layout of toru/fft.h: a box's fastest axis is order(3) (0-based axis
! numbers, axis 2 = the last C index = the contiguous one). Every function returns a toru_result
! (TORU_SUCCESS = 0); toru_fft_error_message() gives the text of the last failure.
module toru_fft
  use, intrinsic :: iso_c_binding
  implicit none
  private

  integer(c_int), parameter, public :: TORU_SUCCESS = 0
  ! The result codes of toru.h's toru_result.
  integer(c_int), parameter, public :: TORU_ERROR_INVALID_ARGUMENT = 1, TORU_ERROR_MISMATCH = 2
  integer(c_int), parameter, public :: TORU_ERROR_UNSUPPORTED = 3, TORU_ERROR_MPI = 4, TORU_ERROR_FFTW = 5
  integer(c_int), parameter, public :: TORU_ERROR_HWLOC = 6, TORU_ERROR_CUDA = 7, TORU_ERROR_NO_DEVICE = 8
  integer(c_int), parameter, public :: TORU_ERROR_IO = 9, TORU_ERROR_OUT_OF_MEMORY = 10, TORU_ERROR_INTERNAL = 11
  integer(c_int), parameter, public :: TORU_FFT_DOUBLE = 0, TORU_FFT_FLOAT = 1
  integer(c_int), parameter, public :: TORU_FFT_DCT1 = 0, TORU_FFT_DCT2 = 1, TORU_FFT_DCT3 = 2, TORU_FFT_DCT4 = 3, &
    TORU_FFT_DST1 = 4, TORU_FFT_DST2 = 5, TORU_FFT_DST3 = 6, TORU_FFT_DST4 = 7, TORU_FFT_PERIODIC = -1
  integer(c_int), parameter, public :: TORU_FFT_ELEMENT_DOUBLE = 0, TORU_FFT_ELEMENT_FLOAT = 1, &
    TORU_FFT_ELEMENT_COMPLEX_DOUBLE = 2, TORU_FFT_ELEMENT_COMPLEX_FLOAT = 3
  integer(c_int), parameter, public :: TORU_FFT_INTERLEAVED = 0, TORU_FFT_PLANAR = 1
  integer(c_int), parameter, public :: TORU_FFT_FORWARD = -1, TORU_FFT_BACKWARD = 1
  integer(c_int), parameter, public :: TORU_FFT_SCALE_NONE = 0, TORU_FFT_SCALE_FULL = 1, TORU_FFT_SCALE_SYMMETRIC = 2
  integer(c_int), parameter, public :: TORU_FFT_DECOMPOSITION_AUTO = 0, TORU_FFT_DECOMPOSITION_SLAB = 1, &
                                       TORU_FFT_DECOMPOSITION_PENCIL = 2
  integer(c_int), parameter, public :: TORU_FFT_ROWS_PADDED = 0, TORU_FFT_ROWS_PACKED = 1

  ! Mirrors struct toru_fft_options; start from toru_fft_options_default(), which sets size (the
  ! struct's length, so that a later library reads only the fields this module knows).
  type, bind(c), public :: toru_fft_options
    integer(c_size_t) :: size
    integer(c_int) :: precision
    integer(c_int) :: decomposition
    integer(c_int) :: grid(2)
    integer(c_int) :: transposed_out
    integer(c_int) :: measure
    integer(c_int) :: overlap
    integer(c_int) :: chunks
    integer(c_long_long) :: n1
    ! Torus of comm and rank order, as C strings (c_loc of a NUL-terminated character target), or
    ! c_null_ptr (the default): see toru_fft_options in toru/fft.h.
    type(c_ptr) :: torus
    type(c_ptr) :: order
    integer(c_int) :: rows  ! TORU_FFT_ROWS_PADDED (default) or TORU_FFT_ROWS_PACKED; r2c plans only
  end type

  ! Mirrors struct toru_fft_box (0-based global indices).
  type, bind(c), public :: toru_fft_box
    integer(c_long_long) :: low(3)
    integer(c_long_long) :: size(3)
    integer(c_int) :: order(3)
    integer(c_long_long) :: row_stride
  end type

  public :: toru_fft_options_default, toru_fft_plan_create_3d, toru_fft_plan_create_r2c_3d, toru_fft_plan_create_1d
  public :: toru_fft_plan_local_size, toru_fft_local_size_3d, toru_fft_plan_workspace_size, toru_fft_plan_execute
  public :: toru_fft_plan_destroy, toru_fft_plan_execute_ws, toru_fft_plan_factors_1d, toru_fft_plan_shared_out
  public :: toru_fft_plan_start, toru_fft_plan_wait, toru_fft_plan_init
  public :: toru_request_start, toru_request_wait, toru_request_free
  public :: toru_fft_error_message
  public :: toru_fft_plan_create_boxes_3d
  public :: toru_fft_r2r_plan_create_3d, toru_fft_r2r_plan_local_size, toru_fft_r2r_plan_execute
  public :: toru_fft_r2r_plan_destroy, toru_fft_r2r_plan_create_mixed_3d, toru_fft_r2r_plan_init
  public :: toru_fft_r2r_plan_create_mixed_r2c_3d
  public :: toru_fft_reshape_create, toru_fft_reshape_sizes, toru_fft_reshape_execute, toru_fft_reshape_destroy
  public :: toru_fft_batch_plan_create_3d, toru_fft_batch_plan_local_size, toru_fft_batch_plan_execute
  public :: toru_fft_batch_plan_destroy, toru_fft_batch_plan_init
  ! toru 0.1's names, forwarding to the ones above.
  public :: toru_fft_plan_3d, toru_fft_plan_r2c_3d, toru_fft_plan_1d, toru_fft_local_size, toru_fft_workspace_size
  public :: toru_fft_execute, toru_fft_execute_ws, toru_fft_factors_1d, toru_fft_destroy

  interface
    function toru_fft_options_default() bind(c, name='toru_fft_options_default') result(o)
      import :: toru_fft_options
      type(toru_fft_options) :: o
    end function

    function c_plan_3d(comm, n0, n1, n2, options, plan) bind(c, name='toru_fft_plan_create_3d_f') result(r)
      import :: c_int, c_long_long, c_ptr, toru_fft_options
      integer(c_int), value :: comm
      integer(c_long_long), value :: n0, n1, n2
      type(toru_fft_options), intent(in) :: options
      type(c_ptr), intent(out) :: plan
      integer(c_int) :: r
    end function

    function c_plan_r2c_3d(comm, n0, n1, n2, options, plan) bind(c, name='toru_fft_plan_create_r2c_3d_f') result(r)
      import :: c_int, c_long_long, c_ptr, toru_fft_options
      integer(c_int), value :: comm
      integer(c_long_long), value :: n0, n1, n2
      type(toru_fft_options), intent(in) :: options
      type(c_ptr), intent(out) :: plan
      integer(c_int) :: r
    end function

    function c_plan_1d(comm, n, options, plan) bind(c, name='toru_fft_plan_create_1d_f') result(r)
      import :: c_int, c_long_long, c_ptr, toru_fft_options
      integer(c_int), value :: comm
      integer(c_long_long), value :: n
      type(toru_fft_options), intent(in) :: options
      type(c_ptr), intent(out) :: plan
      integer(c_int) :: r
    end function

    !> Not collective: this rank's input and output boxes and the complex elements per buffer.
    function toru_fft_plan_local_size(plan, inbox, outbox, alloc) bind(c, name='toru_fft_plan_local_size') result(r)
      import :: c_int, c_long_long, c_ptr, toru_fft_box
      type(c_ptr), value :: plan
      type(toru_fft_box), intent(out) :: inbox, outbox
      integer(c_long_long), intent(out) :: alloc
      integer(c_int) :: r
    end function

    function c_local_size_3d(comm, n0, n1, n2, r2c, options, inbox, outbox, alloc) &
        bind(c, name='toru_fft_local_size_3d_f') result(r)
      import :: c_int, c_long_long, toru_fft_options, toru_fft_box
      integer(c_int), value :: comm
      integer(c_long_long), value :: n0, n1, n2
      integer(c_int), value :: r2c
      type(toru_fft_options), intent(in) :: options
      type(toru_fft_box), intent(out) :: inbox, outbox
      integer(c_long_long), intent(out) :: alloc
      integer(c_int) :: r
    end function

    function toru_fft_plan_workspace_size(plan, bytes) bind(c, name='toru_fft_plan_workspace_size') result(r)
      import :: c_int, c_size_t, c_ptr
      type(c_ptr), value :: plan
      integer(c_size_t), intent(out) :: bytes
      integer(c_int) :: r
    end function

    !> Collective on the first call: buffer = this rank's alloc complex elements in node memory, owned
    !> by the 3D plan, for its complex side (forward's out, backward's in: c_f_pointer it). Passed on
    !> every rank, the plan on one node writes every rank's part directly (docs/fft.md, "Shared output").
    function toru_fft_plan_shared_out(plan, buffer) bind(c, name='toru_fft_plan_shared_out') result(r)
      import :: c_int, c_ptr
      type(c_ptr), value :: plan
      type(c_ptr), intent(out) :: buffer
      integer(c_int) :: r
    end function

    !> Collective. in and out are c_loc of the arrays (equal for in place).
    function toru_fft_plan_execute(plan, direction, scale, in, out) bind(c, name='toru_fft_plan_execute') result(r)
      import :: c_int, c_ptr
      type(c_ptr), value :: plan
      integer(c_int), value :: direction, scale
      type(c_ptr), value :: in, out
      integer(c_int) :: r
    end function

    !> Split phase (toru/fft.h): start begins the transform and returns, wait completes it. Meanwhile
    !> the caller touches neither array and runs nothing else on the plan.
    function toru_fft_plan_start(plan, direction, scale, in, out) bind(c, name='toru_fft_plan_start') result(r)
      import :: c_int, c_ptr
      type(c_ptr), value :: plan
      integer(c_int), value :: direction, scale
      type(c_ptr), value :: in, out
      integer(c_int) :: r
    end function

    function toru_fft_plan_wait(plan) bind(c, name='toru_fft_plan_wait') result(r)
      import :: c_int, c_ptr
      type(c_ptr), value :: plan
      integer(c_int) :: r
    end function

    !> Persistent request (toru/request.h, MPI-4's MPI_Alltoall_init): collective; checks direction,
    !> scale and the arrays once and binds them to request; each toru_request_start then runs that
    !> transform with no checks, toru_request_wait completes it. toru_request_free before the plan.
    function toru_fft_plan_init(plan, direction, scale, in, out, request) bind(c, name='toru_fft_plan_init') result(r)
      import :: c_int, c_ptr
      type(c_ptr), value :: plan
      integer(c_int), value :: direction, scale
      type(c_ptr), value :: in, out
      type(c_ptr), intent(out) :: request
      integer(c_int) :: r
    end function

    function toru_request_start(request) bind(c, name='toru_request_start') result(r)
      import :: c_int, c_ptr
      type(c_ptr), value :: request
      integer(c_int) :: r
    end function

    function toru_request_wait(request) bind(c, name='toru_request_wait') result(r)
      import :: c_int, c_ptr
      type(c_ptr), value :: request
      integer(c_int) :: r
    end function

    !> Frees the request (waiting for a transform in flight) and sets it to c_null_ptr.
    function toru_request_free(request) bind(c, name='toru_request_free') result(r)
      import :: c_int, c_ptr
      type(c_ptr), intent(inout) :: request
      integer(c_int) :: r
    end function

    !> Collective. As toru_fft_plan_execute, with a caller workspace ws = c_loc of at least
    !> toru_fft_plan_workspace_size bytes.
    function toru_fft_plan_execute_ws(plan, direction, scale, in, out, ws) &
        bind(c, name='toru_fft_plan_execute_ws') result(r)
      import :: c_int, c_ptr
      type(c_ptr), value :: plan
      integer(c_int), value :: direction, scale
      type(c_ptr), value :: in, out, ws
      integer(c_int) :: r
    end function

    !> Not collective: the six-step factors n = n1 * n2 of a 1D plan. Scrambled output
    !> (transposed_out) holds at global position j = k1 * n2 + k2 the coefficient X(k1 + n1 * k2).
    function toru_fft_plan_factors_1d(plan, n1, n2) bind(c, name='toru_fft_plan_factors_1d') result(r)
      import :: c_int, c_long_long, c_ptr
      type(c_ptr), value :: plan
      integer(c_long_long), intent(out) :: n1, n2
      integer(c_int) :: r
    end function

    function toru_fft_plan_destroy(plan) bind(c, name='toru_fft_plan_destroy') result(r)
      import :: c_int, c_ptr
      type(c_ptr), value :: plan
      integer(c_int) :: r
    end function

    function c_plan_boxes_3d(comm, n0, n1, n2, r2c, inbox, outbox, options, plan) &
        bind(c, name='toru_fft_plan_create_boxes_3d_f') result(r)
      import :: c_int, c_long_long, c_ptr, toru_fft_box, toru_fft_options
      integer(c_int), value :: comm, r2c
      integer(c_long_long), value :: n0, n1, n2
      type(toru_fft_box), intent(in) :: inbox, outbox
      type(toru_fft_options), intent(in) :: options
      type(c_ptr), intent(out) :: plan
      integer(c_int) :: r
    end function

    function c_r2r_plan_3d(comm, n0, n1, n2, kinds, options, plan) &
        bind(c, name='toru_fft_r2r_plan_create_3d_f') result(r)
      import :: c_int, c_long_long, c_ptr, toru_fft_options
      integer(c_int), value :: comm
      integer(c_long_long), value :: n0, n1, n2
      integer(c_int), intent(in) :: kinds(3)
      type(toru_fft_options), intent(in) :: options
      type(c_ptr), intent(out) :: plan
      integer(c_int) :: r
    end function

    function c_mixed_plan_3d(comm, n0, n1, n2, kinds, options, plan) &
        bind(c, name='toru_fft_r2r_plan_create_mixed_3d_f') result(r)
      import :: c_int, c_long_long, c_ptr, toru_fft_options
      integer(c_int), value :: comm
      integer(c_long_long), value :: n0, n1, n2
      integer(c_int), intent(in) :: kinds(3)
      type(toru_fft_options), intent(in) :: options
      type(c_ptr), intent(out) :: plan
      integer(c_int) :: r
    end function

    function c_mixed_r2c_plan_3d(comm, n0, n1, n2, kinds, options, plan) &
        bind(c, name='toru_fft_r2r_plan_create_mixed_r2c_3d_f') result(r)
      import :: c_int, c_long_long, c_ptr, toru_fft_options
      integer(c_int), value :: comm
      integer(c_long_long), value :: n0, n1, n2
      integer(c_int), intent(in) :: kinds(3)
      type(toru_fft_options), intent(in) :: options
      type(c_ptr), intent(out) :: plan
      integer(c_int) :: r
    end function

    !> Not collective: this rank's boxes and the elements each buffer must hold (reals; complex
    !> values for a mixed plan).
    function toru_fft_r2r_plan_local_size(plan, inbox, outbox, alloc) &
        bind(c, name='toru_fft_r2r_plan_local_size') result(r)
      import :: c_int, c_long_long, c_ptr, toru_fft_box
      type(c_ptr), value :: plan
      type(toru_fft_box), intent(out) :: inbox, outbox
      integer(c_long_long), intent(out) :: alloc
      integer(c_int) :: r
    end function

    !> Collective: in = c_loc(a), out = c_loc(b); TORU_FFT_BACKWARD applies the inverse kinds.
    function toru_fft_r2r_plan_execute(plan, direction, scale, in, out) &
        bind(c, name='toru_fft_r2r_plan_execute') result(r)
      import :: c_int, c_ptr
      type(c_ptr), value :: plan
      integer(c_int), value :: direction, scale
      type(c_ptr), value :: in, out
      integer(c_int) :: r
    end function

    !> Persistent request, as toru_fft_plan_init: collective; checks the arguments once and binds
    !> them (in = c_loc(a), out = c_loc(b)); each toru_request_start runs the transform. r2r and
    !> mixed plans; toru_request_free before the plan.
    function toru_fft_r2r_plan_init(plan, direction, scale, in, out, request) &
        bind(c, name='toru_fft_r2r_plan_init') result(r)
      import :: c_int, c_ptr
      type(c_ptr), value :: plan
      integer(c_int), value :: direction, scale
      type(c_ptr), value :: in, out
      type(c_ptr), intent(out) :: request
      integer(c_int) :: r
    end function

    function toru_fft_r2r_plan_destroy(plan) bind(c, name='toru_fft_r2r_plan_destroy') result(r)
      import :: c_int, c_ptr
      type(c_ptr), value :: plan
      integer(c_int) :: r
    end function

    function c_batch_plan_3d(comm, n0, n1, n2, r2c, howmany, layout, options, plan) &
        bind(c, name='toru_fft_batch_plan_create_3d_f') result(r)
      import :: c_int, c_long_long, c_ptr, toru_fft_options
      integer(c_int), value :: comm, r2c, howmany, layout
      integer(c_long_long), value :: n0, n1, n2
      type(toru_fft_options), intent(in) :: options
      type(c_ptr), intent(out) :: plan
      integer(c_int) :: r
    end function

    !> Not collective: one field's boxes and the complex elements a buffer holds for all fields
    !> (a real buffer of an r2c plan holds twice as many reals).
    function toru_fft_batch_plan_local_size(plan, inbox, outbox, alloc) &
        bind(c, name='toru_fft_batch_plan_local_size') result(r)
      import :: c_int, c_long_long, c_ptr, toru_fft_box
      type(c_ptr), value :: plan
      type(toru_fft_box), intent(out) :: inbox, outbox
      integer(c_long_long), intent(out) :: alloc
      integer(c_int) :: r
    end function

    !> Collective: in = c_loc(a), out = c_loc(b); forward r2c / backward c2r for an r2c plan.
    function toru_fft_batch_plan_execute(plan, direction, scale, in, out) &
        bind(c, name='toru_fft_batch_plan_execute') result(r)
      import :: c_int, c_ptr
      type(c_ptr), value :: plan
      integer(c_int), value :: direction, scale
      type(c_ptr), value :: in, out
      integer(c_int) :: r
    end function

    !> Persistent request, as toru_fft_plan_init: collective; binds all fields' arrays once; each
    !> toru_request_start runs the batched transform. toru_request_free before the plan.
    function toru_fft_batch_plan_init(plan, direction, scale, in, out, request) &
        bind(c, name='toru_fft_batch_plan_init') result(r)
      import :: c_int, c_ptr
      type(c_ptr), value :: plan
      integer(c_int), value :: direction, scale
      type(c_ptr), value :: in, out
      type(c_ptr), intent(out) :: request
      integer(c_int) :: r
    end function

    function toru_fft_batch_plan_destroy(plan) bind(c, name='toru_fft_batch_plan_destroy') result(r)
      import :: c_int, c_ptr
      type(c_ptr), value :: plan
      integer(c_int) :: r
    end function

    function c_reshape_create(comm, n0, n1, n2, inbox, outbox, element, reshape) &
        bind(c, name='toru_fft_reshape_create_f') result(r)
      import :: c_int, c_long_long, c_ptr, toru_fft_box
      integer(c_int), value :: comm
      integer(c_long_long), value :: n0, n1, n2
      type(toru_fft_box), intent(in) :: inbox, outbox
      integer(c_int), value :: element
      type(c_ptr), intent(out) :: reshape
      integer(c_int) :: r
    end function

    !> Not collective: elements of this rank's in and out arrays (padding included).
    function toru_fft_reshape_sizes(reshape, in_size, out_size) bind(c, name='toru_fft_reshape_sizes') result(r)
      import :: c_int, c_long_long, c_ptr
      type(c_ptr), value :: reshape
      integer(c_long_long), intent(out) :: in_size, out_size
      integer(c_int) :: r
    end function

    !> Collective: in = c_loc(a), out = c_loc(b); they must not overlap.
    function toru_fft_reshape_execute(reshape, in, out) bind(c, name='toru_fft_reshape_execute') result(r)
      import :: c_int, c_ptr
      type(c_ptr), value :: reshape, in, out
      integer(c_int) :: r
    end function

    function toru_fft_reshape_destroy(reshape) bind(c, name='toru_fft_reshape_destroy') result(r)
      import :: c_int, c_ptr
      type(c_ptr), value :: reshape
      integer(c_int) :: r
    end function

    function c_last_error() bind(c, name='toru_last_error') result(p)
      import :: c_ptr
      type(c_ptr) :: p
    end function

    function c_strlen(s) bind(c, name='strlen') result(n)
      import :: c_ptr, c_size_t
      type(c_ptr), value :: s
      integer(c_size_t) :: n
    end function
  end interface

contains

  !> Collective over comm: a 3D plan (r2c = .true.: r2c/c2r) between the caller's own boxes (0-based
  !> global boxes whose union over the ranks tiles the grid). options is optional.
  function toru_fft_plan_create_boxes_3d(comm, n0, n1, n2, r2c, inbox, outbox, plan, options) result(r)
    integer, intent(in) :: comm
    integer(c_long_long), intent(in) :: n0, n1, n2
    logical, intent(in) :: r2c
    type(toru_fft_box), intent(in) :: inbox, outbox
    type(c_ptr), intent(out) :: plan
    type(toru_fft_options), intent(in), optional :: options
    integer(c_int) :: r, kind
    kind = 0
    if (r2c) kind = 1
    if (present(options)) then
      r = c_plan_boxes_3d(int(comm, c_int), n0, n1, n2, kind, inbox, outbox, options, plan)
    else
      r = c_plan_boxes_3d(int(comm, c_int), n0, n1, n2, kind, inbox, outbox, toru_fft_options_default(), plan)
    end if
  end function

  !> Collective over comm: a real-to-real plan, kinds(a) (TORU_FFT_DCT1 .. TORU_FFT_DST4) along C
  !> axis a - 1 (axis 2 the contiguous one). options is optional.
  function toru_fft_r2r_plan_create_3d(comm, n0, n1, n2, kinds, plan, options) result(r)
    integer, intent(in) :: comm
    integer(c_long_long), intent(in) :: n0, n1, n2
    integer(c_int), intent(in) :: kinds(3)
    type(c_ptr), intent(out) :: plan
    type(toru_fft_options), intent(in), optional :: options
    integer(c_int) :: r
    if (present(options)) then
      r = c_r2r_plan_3d(int(comm, c_int), n0, n1, n2, kinds, options, plan)
    else
      r = c_r2r_plan_3d(int(comm, c_int), n0, n1, n2, kinds, toru_fft_options_default(), plan)
    end if
  end function

  !> Collective over comm: a mixed plan on complex data, kinds(a) TORU_FFT_PERIODIC (the DFT) or an
  !> r2r kind applied to the real and imaginary parts, along C axis a - 1. options is optional.
  function toru_fft_r2r_plan_create_mixed_3d(comm, n0, n1, n2, kinds, plan, options) result(r)
    integer, intent(in) :: comm
    integer(c_long_long), intent(in) :: n0, n1, n2
    integer(c_int), intent(in) :: kinds(3)
    type(c_ptr), intent(out) :: plan
    type(toru_fft_options), intent(in), optional :: options
    integer(c_int) :: r
    if (present(options)) then
      r = c_mixed_plan_3d(int(comm, c_int), n0, n1, n2, kinds, options, plan)
    else
      r = c_mixed_plan_3d(int(comm, c_int), n0, n1, n2, kinds, toru_fft_options_default(), plan)
    end if
  end function

  !> Collective over comm: a mixed plan on real data: r2c along C axis 2 (kinds(3) must be
  !> TORU_FFT_PERIODIC), then kinds(2) and kinds(1) on the complex result; backward c2r last. Real
  !> rows padded to 2*(n2/2+1) reals, as the r2c plans; alloc counts complex values. options is optional.
  function toru_fft_r2r_plan_create_mixed_r2c_3d(comm, n0, n1, n2, kinds, plan, options) result(r)
    integer, intent(in) :: comm
    integer(c_long_long), intent(in) :: n0, n1, n2
    integer(c_int), intent(in) :: kinds(3)
    type(c_ptr), intent(out) :: plan
    type(toru_fft_options), intent(in), optional :: options
    integer(c_int) :: r
    if (present(options)) then
      r = c_mixed_r2c_plan_3d(int(comm, c_int), n0, n1, n2, kinds, options, plan)
    else
      r = c_mixed_r2c_plan_3d(int(comm, c_int), n0, n1, n2, kinds, toru_fft_options_default(), plan)
    end if
  end function

  !> Collective over comm: howmany fields in one plan (the single plan field by field); r2c /= 0
  !> real fields (forward r2c, backward c2r), else complex; layout TORU_FFT_INTERLEAVED or
  !> TORU_FFT_PLANAR (C memory order, 0-based boxes). options is optional.
  function toru_fft_batch_plan_create_3d(comm, n0, n1, n2, r2c, howmany, layout, plan, options) result(r)
    integer, intent(in) :: comm
    integer(c_long_long), intent(in) :: n0, n1, n2
    integer(c_int), intent(in) :: r2c, howmany, layout
    type(c_ptr), intent(out) :: plan
    type(toru_fft_options), intent(in), optional :: options
    integer(c_int) :: r
    if (present(options)) then
      r = c_batch_plan_3d(int(comm, c_int), n0, n1, n2, r2c, howmany, layout, options, plan)
    else
      r = c_batch_plan_3d(int(comm, c_int), n0, n1, n2, r2c, howmany, layout, toru_fft_options_default(), plan)
    end if
  end function

  !> Collective over comm: a reshape of an n0 x n1 x n2 array of element (TORU_FFT_ELEMENT_*) from
  !> inbox to outbox (0-based global boxes, one per rank; the boxes of all ranks must tile the grid).
  function toru_fft_reshape_create(comm, n0, n1, n2, inbox, outbox, element, reshape) result(r)
    integer, intent(in) :: comm
    integer(c_long_long), intent(in) :: n0, n1, n2
    type(toru_fft_box), intent(in) :: inbox, outbox
    integer(c_int), intent(in) :: element
    type(c_ptr), intent(out) :: reshape
    integer(c_int) :: r
    r = c_reshape_create(int(comm, c_int), n0, n1, n2, inbox, outbox, element, reshape)
  end function

  !> Collective over comm (a Fortran MPI communicator handle). options is optional.
  function toru_fft_plan_create_3d(comm, n0, n1, n2, plan, options) result(r)
    integer, intent(in) :: comm
    integer(c_long_long), intent(in) :: n0, n1, n2
    type(c_ptr), intent(out) :: plan
    type(toru_fft_options), intent(in), optional :: options
    integer(c_int) :: r
    if (present(options)) then
      r = c_plan_3d(int(comm, c_int), n0, n1, n2, options, plan)
    else
      r = c_plan_3d(int(comm, c_int), n0, n1, n2, toru_fft_options_default(), plan)
    end if
  end function

  function toru_fft_plan_create_r2c_3d(comm, n0, n1, n2, plan, options) result(r)
    integer, intent(in) :: comm
    integer(c_long_long), intent(in) :: n0, n1, n2
    type(c_ptr), intent(out) :: plan
    type(toru_fft_options), intent(in), optional :: options
    integer(c_int) :: r
    if (present(options)) then
      r = c_plan_r2c_3d(int(comm, c_int), n0, n1, n2, options, plan)
    else
      r = c_plan_r2c_3d(int(comm, c_int), n0, n1, n2, toru_fft_options_default(), plan)
    end if
  end function

  function toru_fft_plan_create_1d(comm, n, plan, options) result(r)
    integer, intent(in) :: comm
    integer(c_long_long), intent(in) :: n
    type(c_ptr), intent(out) :: plan
    type(toru_fft_options), intent(in), optional :: options
    integer(c_int) :: r
    if (present(options)) then
      r = c_plan_1d(int(comm, c_int), n, options, plan)
    else
      r = c_plan_1d(int(comm, c_int), n, toru_fft_options_default(), plan)
    end if
  end function

  !> Not collective, no plan needed: the boxes and alloc of a 3D plan (r2c = .true. for r2c plans).
  function toru_fft_local_size_3d(comm, n0, n1, n2, r2c, inbox, outbox, alloc, options) result(r)
    integer, intent(in) :: comm
    integer(c_long_long), intent(in) :: n0, n1, n2
    logical, intent(in) :: r2c
    type(toru_fft_box), intent(out) :: inbox, outbox
    integer(c_long_long), intent(out) :: alloc
    type(toru_fft_options), intent(in), optional :: options
    integer(c_int) :: r, flag
    flag = 0
    if (r2c) flag = 1
    if (present(options)) then
      r = c_local_size_3d(int(comm, c_int), n0, n1, n2, flag, options, inbox, outbox, alloc)
    else
      r = c_local_size_3d(int(comm, c_int), n0, n1, n2, flag, toru_fft_options_default(), inbox, outbox, alloc)
    end if
  end function

  !> The message of the last failed toru call on this thread (toru_last_error).
  function toru_fft_error_message() result(msg)
    character(len=:), allocatable :: msg
    type(c_ptr) :: p
    character(kind=c_char), pointer :: chars(:)
    integer :: i, n
    p = c_last_error()
    n = int(c_strlen(p))
    call c_f_pointer(p, chars, [n])
    allocate(character(len=n) :: msg)
    do i = 1, n
      msg(i:i) = chars(i)
    end do
  end function

  ! ---- toru 0.1's names ----

  function toru_fft_plan_3d(comm, n0, n1, n2, plan, options) result(r)
    integer, intent(in) :: comm
    integer(c_long_long), intent(in) :: n0, n1, n2
    type(c_ptr), intent(out) :: plan
    type(toru_fft_options), intent(in), optional :: options
    integer(c_int) :: r
    r = toru_fft_plan_create_3d(comm, n0, n1, n2, plan, options)
  end function

  function toru_fft_plan_r2c_3d(comm, n0, n1, n2, plan, options) result(r)
    integer, intent(in) :: comm
    integer(c_long_long), intent(in) :: n0, n1, n2
    type(c_ptr), intent(out) :: plan
    type(toru_fft_options), intent(in), optional :: options
    integer(c_int) :: r
    r = toru_fft_plan_create_r2c_3d(comm, n0, n1, n2, plan, options)
  end function

  function toru_fft_plan_1d(comm, n, plan, options) result(r)
    integer, intent(in) :: comm
    integer(c_long_long), intent(in) :: n
    type(c_ptr), intent(out) :: plan
    type(toru_fft_options), intent(in), optional :: options
    integer(c_int) :: r
    r = toru_fft_plan_create_1d(comm, n, plan, options)
  end function

  function toru_fft_local_size(plan, inbox, outbox, alloc) result(r)
    type(c_ptr), intent(in) :: plan
    type(toru_fft_box), intent(out) :: inbox, outbox
    integer(c_long_long), intent(out) :: alloc
    integer(c_int) :: r
    r = toru_fft_plan_local_size(plan, inbox, outbox, alloc)
  end function

  function toru_fft_workspace_size(plan, bytes) result(r)
    type(c_ptr), intent(in) :: plan
    integer(c_size_t), intent(out) :: bytes
    integer(c_int) :: r
    r = toru_fft_plan_workspace_size(plan, bytes)
  end function

  function toru_fft_execute(plan, direction, scale, in, out) result(r)
    type(c_ptr), intent(in) :: plan, in, out
    integer(c_int), intent(in) :: direction, scale
    integer(c_int) :: r
    r = toru_fft_plan_execute(plan, direction, scale, in, out)
  end function

  function toru_fft_execute_ws(plan, direction, scale, in, out, ws) result(r)
    type(c_ptr), intent(in) :: plan, in, out, ws
    integer(c_int), intent(in) :: direction, scale
    integer(c_int) :: r
    r = toru_fft_plan_execute_ws(plan, direction, scale, in, out, ws)
  end function

  function toru_fft_factors_1d(plan, n1, n2) result(r)
    type(c_ptr), intent(in) :: plan
    integer(c_long_long), intent(out) :: n1, n2
    integer(c_int) :: r
    r = toru_fft_plan_factors_1d(plan, n1, n2)
  end function

  function toru_fft_destroy(plan) result(r)
    type(c_ptr), intent(in) :: plan
    integer(c_int) :: r
    r = toru_fft_plan_destroy(plan)
  end function

end module toru_fft
