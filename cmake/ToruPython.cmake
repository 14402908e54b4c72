# SPDX-License-Identifier: BSD-3-Clause
# The Python package (python/): pybind11 bindings over fft/ and comm/ for NumPy arrays and mpi4py
# communicators. The interpreter is TORU_PYTHON_EXECUTABLE (default /usr/bin/python3, the one whose
# mpi4py and NumPy the package is built for), queried directly rather than through
# find_package(Python3): that call already picked the interpreter that writes the libraries' export
# lists (cmake/ToruDependencies.cmake), which may be another Python (a pyenv on PATH) without them.
set(toru_python_default /usr/bin/python3)
if(NOT EXISTS ${toru_python_default} AND Python3_EXECUTABLE)
  set(toru_python_default ${Python3_EXECUTABLE})
endif()
set(TORU_PYTHON_EXECUTABLE ${toru_python_default} CACHE FILEPATH "Python the toru package is built for")

set(toru_python_why "")
# pybind11's config would look for a Python of its own; toru tells it which one instead.
set(PYBIND11_NOPYTHON ON)
find_package(pybind11 2.6 CONFIG QUIET)
if(NOT pybind11_FOUND)
  set(toru_python_why "pybind11 not found (Debian pybind11-dev)")
elseif(NOT TARGET FFTW::threads OR NOT TARGET FFTW::threads_float)
  set(toru_python_why "libfftw3_threads / libfftw3f_threads not found (Debian libfftw3-dev); the module initialises FFTW's threads")
elseif(TORU_SANITIZE)
  set(toru_python_why "sanitized builds cannot be loaded by an uninstrumented Python")
elseif(NOT EXISTS ${TORU_PYTHON_EXECUTABLE})
  set(toru_python_why "no Python at ${TORU_PYTHON_EXECUTABLE} (TORU_PYTHON_EXECUTABLE)")
else()
  execute_process(
    COMMAND ${TORU_PYTHON_EXECUTABLE} -c [=[
import sys, sysconfig
import numpy, mpi4py
plat = sysconfig.get_path("platlib")
tail = "dist-packages" if plat.rstrip("/").endswith("dist-packages") else "site-packages"
print(sysconfig.get_paths()["include"])
print(sysconfig.get_config_var("EXT_SUFFIX"))
print("lib/python%d.%d/%s" % (sys.version_info[0], sys.version_info[1], tail))
print(mpi4py.get_include())
print("%d.%d.%d" % sys.version_info[:3])
]=]
    RESULT_VARIABLE toru_py_rc OUTPUT_VARIABLE toru_py_out ERROR_VARIABLE toru_py_err
    OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT toru_py_rc EQUAL 0)
    string(REGEX REPLACE ".*\n([^\n]+)\n?$" "\\1" toru_py_err "${toru_py_err}")
    set(toru_python_why "${TORU_PYTHON_EXECUTABLE} lacks NumPy or mpi4py (${toru_py_err})")
  else()
    string(REPLACE "\n" ";" toru_py_out "${toru_py_out}")
    list(GET toru_py_out 0 TORU_PYTHON_INCLUDE_DIR)
    list(GET toru_py_out 1 TORU_PYTHON_EXT_SUFFIX)
    list(GET toru_py_out 2 toru_py_platlib)
    list(GET toru_py_out 3 TORU_MPI4PY_INCLUDE_DIR)
    list(GET toru_py_out 4 TORU_PYTHON_VERSION)
    if(NOT EXISTS ${TORU_PYTHON_INCLUDE_DIR}/Python.h)
      set(toru_python_why "no Python.h in ${TORU_PYTHON_INCLUDE_DIR} (Debian python3-dev)")
    elseif(NOT EXISTS ${TORU_MPI4PY_INCLUDE_DIR}/mpi4py/mpi4py.h)
      set(toru_python_why "no mpi4py/mpi4py.h in ${TORU_MPI4PY_INCLUDE_DIR}")
    endif()
  endif()
endif()

if(toru_python_why STREQUAL "")
  set(toru_python_default_on ON)
else()
  set(toru_python_default_on OFF)
endif()
option(TORU_BUILD_PYTHON "Build the toru Python package (python/)" ${toru_python_default_on})
if(TORU_BUILD_PYTHON AND NOT toru_python_why STREQUAL "")
  message(FATAL_ERROR "TORU_BUILD_PYTHON=ON, but ${toru_python_why}")
elseif(NOT TORU_BUILD_PYTHON AND NOT toru_python_why STREQUAL "")
  message(STATUS "Python package off: ${toru_python_why}")
endif()
# Relative to CMAKE_INSTALL_PREFIX: the interpreter's platlib layout (lib/python3.11/dist-packages
# on Debian, which /usr/local's Python reads).
set(TORU_PYTHON_INSTALL_DIR "${toru_py_platlib}" CACHE STRING "Where install() puts the toru package, under the prefix")
