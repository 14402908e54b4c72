// SPDX-License-Identifier: BSD-3-Clause
// toru._core: the extension module behind the toru package (docs/python.md).
#include <fftw3.h>
#include <mpi.h>
#include <mpi4py/mpi4py.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "toru/core/error.hpp"
#include "toru/version.h"

namespace toru::python {

MPI_Comm mpi_comm(py::handle comm) {
  py::object c =
      comm.is_none() ? py::module_::import("mpi4py.MPI").attr("COMM_WORLD") : py::reinterpret_borrow<py::object>(comm);
  MPI_Comm* p = PyMPIComm_Get(c.ptr());
  if (!p) throw py::error_already_set();
  return *p;
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

std::string describe(const py::array& a) {
  std::vector<std::int64_t> shape(a.shape(), a.shape() + a.ndim());
  std::string s = std::string(py::str(a.dtype())) + " array of shape " + shape_text(shape);
  if (!(a.flags() & py::array::c_style)) s += ", not C-contiguous";
  if (!a.writeable()) s += ", read-only";
  return s;
}

py::array as_array(py::handle a, const char* argument) {
  if (!py::isinstance<py::array>(a))
    expect(false, argument, "a numpy.ndarray", std::string(py::str(py::type::of(a).attr("__name__"))));
  return py::reinterpret_borrow<py::array>(a);
}

}  // namespace toru::python

PYBIND11_MODULE(_core, m) {
  namespace py = pybind11;
  // mpi4py's C API (PyMPIComm_Get); importing it also initialises MPI (MPI_THREAD_MULTIPLE).
  if (import_mpi4py() < 0) throw py::error_already_set();
  // FFTW 3.3's fftw_plan_with_nthreads calls fftw_cleanup() when FFTW's threads were never
  // initialised, which invalidates every existing FFTW plan: mpi4py-fft calls it on each plan, and
  // toru's plans then crashed when destroyed (a segfault in fftw_destroy_plan, seen with 64^3 plans
  // of both libraries in one process). Initialised here, before any toru plan exists, it never
  // cleans up. Transforms stay single-threaded: FFTW's default thread count is 1. The same holds for
  // single precision (fftwf_*, mpi4py-fft's complex64 / float32 plans).
  if (fftw_init_threads() == 0) throw std::runtime_error("toru: fftw_init_threads failed");
  if (fftwf_init_threads() == 0) throw std::runtime_error("toru: fftwf_init_threads failed");
  m.doc() = "toru's parallel FFTs and all-to-alls on NumPy arrays and mpi4py communicators";
  m.attr("__version__") = TORU_VERSION_STRING;

  // Invalid and mismatched arguments are the caller's (ValueError); the rest is the run's. toru
  // agrees on its errors across ranks, so every rank raises the same one.
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const toru::error& e) {
      const bool caller = e.code() == toru::errc::invalid_argument || e.code() == toru::errc::mismatch;
      PyErr_SetString(caller ? PyExc_ValueError : PyExc_RuntimeError, e.what());
    }
  });

  toru::python::bind_fft(m);
  toru::python::bind_comm(m);
  toru::python::bind_train(m);
  toru::python::bind_swap(m);
}
