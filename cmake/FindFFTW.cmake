# SPDX-License-Identifier: BSD-3-Clause
# Finds FFTW 3 and defines FFTW::double, FFTW::float and FFTW::mpi (the MPI
# interface, double precision), FFTW::threads and FFTW::threads_float (the shared-memory threaded
# transforms, where libfftw3_threads / libfftw3f_threads are installed) as imported targets.
find_path(FFTW_INCLUDE_DIR fftw3.h)
find_library(FFTW_DOUBLE_LIBRARY fftw3)
find_library(FFTW_FLOAT_LIBRARY fftw3f)
find_library(FFTW_MPI_LIBRARY fftw3_mpi)
find_library(FFTW_MPI_FLOAT_LIBRARY fftw3f_mpi)
find_library(FFTW_THREADS_LIBRARY fftw3_threads)
find_library(FFTW_THREADS_FLOAT_LIBRARY fftw3f_threads)

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(FFTW
  REQUIRED_VARS FFTW_INCLUDE_DIR FFTW_DOUBLE_LIBRARY FFTW_FLOAT_LIBRARY)

foreach(kind double float mpi mpi_float threads threads_float)
  string(TOUPPER ${kind} upper)
  if(FFTW_${upper}_LIBRARY AND NOT TARGET FFTW::${kind})
    add_library(FFTW::${kind} UNKNOWN IMPORTED)
    set_target_properties(FFTW::${kind} PROPERTIES
      IMPORTED_LOCATION ${FFTW_${upper}_LIBRARY}
      INTERFACE_INCLUDE_DIRECTORIES ${FFTW_INCLUDE_DIR})
  endif()
endforeach()
mark_as_advanced(FFTW_INCLUDE_DIR FFTW_DOUBLE_LIBRARY FFTW_FLOAT_LIBRARY FFTW_MPI_LIBRARY FFTW_MPI_FLOAT_LIBRARY
  FFTW_THREADS_LIBRARY FFTW_THREADS_FLOAT_LIBRARY)
