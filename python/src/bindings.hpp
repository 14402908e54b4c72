// SPDX-License-Identifier: BSD-3-Clause
// What the binding files share: the mpi4py communicator of an argument, the rule that checks of
// Python arguments ride on toru's agreement, and array descriptions for error messages.
#pragma once

#include <mpi.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "toru/core/error.hpp"

namespace toru::python {

namespace py = pybind11;

/// The MPI_Comm of an mpi4py communicator (None: MPI.COMM_WORLD). A non-communicator raises
/// TypeError on the ranks that pass it: without a communicator nobody can be told (as
/// MPI_COMM_NULL in the C++ API).
MPI_Comm mpi_comm(py::handle comm);

/// Runs this rank's checks of its Python arguments and keeps their failure, as a toru::error,
/// instead of raising it: the caller hands it to toru::defer_error (or to its own agreement), so
/// that it is raised on every rank by the collective that follows. A rank that raised alone would
/// leave the others waiting in that collective.
template <class F>
std::exception_ptr local_checks(F&& f) {
  try {
    f();
  } catch (const toru::error&) {
    return std::current_exception();
  } catch (const py::error_already_set& e) {
    return std::make_exception_ptr(toru::error(errc::invalid_argument, e.what()));
  } catch (const std::exception& e) {
    return std::make_exception_ptr(toru::error(errc::invalid_argument, e.what()));
  }
  return nullptr;
}

/// "complex128 array of shape (4, 9, 11)" (and ", not C-contiguous" / ", read-only" where so).
std::string describe(const py::array& a);
/// "(4, 9, 11)".
std::string shape_text(const std::vector<std::int64_t>& shape);

/// Throws toru::error(invalid_argument) naming `argument` unless `a` is a C-contiguous array of
/// dtype T and this shape (writable too when `writable`).
template <class T>
void expect_array(const py::array& a, const char* argument, const std::vector<std::int64_t>& shape,
                  bool writable = false) {
  bool ok = a.dtype().is(py::dtype::of<T>()) && (a.flags() & py::array::c_style) &&
            a.ndim() == static_cast<py::ssize_t>(shape.size()) && (!writable || a.writeable());
  for (py::ssize_t d = 0; ok && d < a.ndim(); ++d) ok = a.shape(d) == shape[static_cast<std::size_t>(d)];
  if (!ok) {
    expect(false, argument,
           "a C-contiguous" + std::string(writable ? ", writable " : " ") + std::string(py::str(py::dtype::of<T>())) +
               " array of shape " + shape_text(shape),
           describe(a));
  }
}

/// The array `a` converts to, or throws toru::error(invalid_argument) naming `argument` when it is
/// no array (a list is accepted as NumPy would read it).
py::array as_array(py::handle a, const char* argument);

void bind_fft(py::module_& m);
void bind_comm(py::module_& m);
void bind_train(py::module_& m);
void bind_swap(py::module_& m);

}  // namespace toru::python
