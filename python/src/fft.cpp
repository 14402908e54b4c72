// SPDX-License-Identifier: BSD-3-Clause
// toru.FFT3D, toru.FFT3DR2C and toru.FFT1D: toru::fft's double-precision plans on NumPy arrays.
//
// toru's buffers are larger than a rank's box (alloc_size(): the largest intermediate layout) and
// r2c rows are padded; NumPy users hand over and get back arrays of exactly the box. So results
// are written into a buffer of alloc_size() elements and returned as a view of its first box
// (no copy), while padded real rows are copied in and out. out= reuses the caller's array: the
// transform runs in the plan's own buffer and the box is copied into out.
#include <mpi.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <array>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <tuple>
#include <vector>

#include "bindings.hpp"
#include "toru/core/agreement.hpp"
#include "toru/core/error.hpp"
#include "toru/fft/fft1d.hpp"
#include "toru/fft/fft3d.hpp"

namespace toru::python {
namespace {

using cpx = std::complex<double>;
using fft::scale;

scale parse_scale(py::handle s, const char* argument) {
  const std::string v = py::cast<std::string>(s);
  if (v == "none") return scale::none;
  if (v == "full") return scale::full;
  if (v == "symmetric") return scale::symmetric;
  expect(false, argument, "'none', 'full' or 'symmetric'", "'" + v + "'");
  return scale::none;
}

fft::order parse_order(const std::string& v) {
  if (v == "natural") return fft::order::natural;
  if (v == "transposed") return fft::order::transposed;
  expect(false, "output", "'natural' or 'transposed'", "'" + v + "'");
  return fft::order::natural;
}

fft::effort parse_planner(const std::string& v) {
  if (v == "estimate") return fft::effort::estimate;
  if (v == "measure") return fft::effort::measure;
  expect(false, "planner", "'estimate' or 'measure'", "'" + v + "'");
  return fft::effort::estimate;
}

fft::options3d parse3d(py::handle decomposition, py::handle grid, py::handle output, py::handle planner) {
  fft::options3d o;
  const std::string d = py::cast<std::string>(decomposition);
  if (d == "auto")
    o.decomp = fft::decomposition::automatic;
  else if (d == "slab")
    o.decomp = fft::decomposition::slab;
  else if (d == "pencil")
    o.decomp = fft::decomposition::pencil;
  else
    expect(false, "decomposition", "'auto', 'slab' or 'pencil'", "'" + d + "'");
  if (!grid.is_none()) {
    const auto g = py::cast<std::vector<int>>(grid);
    expect(g.size() == 2, "grid", "two process counts (p0, p1)", std::to_string(g.size()) + " values");
    o.grid = {g[0], g[1]};
  }
  o.output = parse_order(py::cast<std::string>(output));
  o.planner = parse_planner(py::cast<std::string>(planner));
  return o;
}

std::array<std::int64_t, 3> parse_shape3(py::handle shape) {
  const auto v = py::cast<std::vector<std::int64_t>>(shape);
  expect(v.size() == 3, "shape", "three sizes (n0, n1, n2)", std::to_string(v.size()) + " values");
  return {v[0], v[1], v[2]};
}

// A box as NumPy sees the local array: its shape and global offsets in memory order, and which
// global axis each local axis is (natural order: (0, 1, 2)).
std::vector<std::int64_t> mem_shape(const fft::box3d& b) {
  return {b.size[b.order[0]], b.size[b.order[1]], b.size[b.order[2]]};
}
std::vector<std::int64_t> mem_offset(const fft::box3d& b) {
  return {b.low[b.order[0]], b.low[b.order[1]], b.low[b.order[2]]};
}
py::tuple tuple_of(const std::vector<std::int64_t>& v) { return py::cast(v); }
py::tuple axes_of(const fft::box3d& b) { return py::make_tuple(b.order[0], b.order[1], b.order[2]); }

// A fresh NumPy buffer of `count` elements and the view of its first box of `shape`.
template <class T>
py::array_t<T> fresh(std::int64_t count) {
  return py::array_t<T>(static_cast<py::ssize_t>(std::max<std::int64_t>(count, 1)));
}
template <class T>
py::array view(const py::array_t<T>& buf, const std::vector<std::int64_t>& shape) {
  std::vector<py::ssize_t> s(shape.begin(), shape.end());
  return py::array(py::dtype::of<T>(), s, std::vector<py::ssize_t>{}, buf.data(), buf);
}

// A buffer a plan keeps for out= (allocated on first use, never zeroed: toru writes it whole).
class scratch {
 public:
  cpx* get(std::int64_t count) {
    if (!p_) {
      p_.reset(
          static_cast<cpx*>(std::malloc(static_cast<std::size_t>(std::max<std::int64_t>(count, 1)) * sizeof(cpx))));
      if (!p_)
        throw toru::error(errc::out_of_memory, "toru: a plan's output buffer of " + std::to_string(count) +
                                                   " complex elements could not be allocated");
    }
    return p_.get();
  }

 private:
  struct release {
    void operator()(void* p) const { std::free(p); }
  };
  std::unique_ptr<cpx, release> p_;
};

// A plan outlived by MPI (a module global freed after mpi4py finalised MPI) is leaked rather than
// destroyed: its communicators can no longer be freed.
template <class Plan>
struct plan_holder {
  std::unique_ptr<Plan> plan;
  ~plan_holder() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) (void)plan.release();
  }
};

// The checks of an execute's Python arguments, deferred to the plan's agreement (bindings.hpp).
struct call_args {
  py::array in, out;
  bool has_out = false;  // a default py::array is an empty array, not None
  scale s = scale::none;
  std::exception_ptr bad;
};

template <class In, class Out>
call_args check_call(py::handle in, const std::vector<std::int64_t>& in_shape, py::handle out,
                     const std::vector<std::int64_t>& out_shape, py::handle s) {
  call_args a;
  a.bad = local_checks([&] {
    a.in = as_array(in, "a");
    expect_array<In>(a.in, "a", in_shape);
    a.s = parse_scale(s, "scale");
    if (!out.is_none()) {
      a.out = as_array(out, "out");
      a.has_out = true;
      expect_array<Out>(a.out, "out", out_shape, true);
    }
  });
  return a;
}

template <class Plan>
std::string strategy_of(const Plan& p) {
  return p.strategy();
}

std::string decomposition_name(fft::decomposition d) { return std::string(fft::to_string(d)); }

// ---- 3D complex-to-complex ----
// A c2c plan's forward or backward on NumPy arrays: the input checked (through the call's
// agreement), the result in `out` (through the scratch: plans write alloc_size() elements) or in a
// fresh array shaped as the destination box.
template <class Plan>
py::array run_c2c(const Plan& p, scratch& sc, bool forward, py::handle a_in, std::vector<std::int64_t> src_shape,
                  py::handle out, std::vector<std::int64_t> dst_shape, std::int64_t dst_count, py::handle s) {
  call_args a = check_call<cpx, cpx>(a_in, src_shape, out, dst_shape, s);
  py::array_t<cpx> buf;
  cpx* o = nullptr;
  if (a.has_out) {
    o = sc.get(p.alloc_size());
  } else {
    buf = fresh<cpx>(p.alloc_size());
    o = buf.mutable_data();
  }
  const cpx* i = a.bad ? o : static_cast<const cpx*>(a.in.data());
  {
    py::gil_scoped_release nogil;
    const defer_error checks(a.bad);
    if (forward)
      p.forward(i, o, a.s);
    else
      p.backward(i, o, a.s);
    if (a.has_out) std::memcpy(a.out.mutable_data(), o, static_cast<std::size_t>(dst_count) * sizeof(cpx));
  }
  return a.has_out ? a.out : view(buf, dst_shape);
}

class py_fft3d {
 public:
  py_fft3d(py::handle comm, py::handle shape, py::handle decomposition, py::handle grid, py::handle output,
           py::handle planner) {
    const MPI_Comm c = mpi_comm(comm);
    std::array<std::int64_t, 3> n{1, 1, 1};
    fft::options3d o;
    const std::exception_ptr bad = local_checks([&] {
      n = parse_shape3(shape);
      o = parse3d(decomposition, grid, output, planner);
    });
    py::gil_scoped_release nogil;
    const defer_error checks(bad);
    h_.plan = std::make_unique<fft::fft3d<double>>(c, n, o);
    n_ = n;
  }

  py::array forward(py::handle a, py::handle out, py::handle s) { return run(true, a, out, s); }
  py::array backward(py::handle a, py::handle out, py::handle s) { return run(false, a, out, s); }

  const fft::fft3d<double>& plan() const { return *h_.plan; }
  std::array<std::int64_t, 3> shape() const { return n_; }

 private:
  py::array run(bool forward, py::handle a_in, py::handle out, py::handle s) {
    const auto& p = *h_.plan;
    const fft::box3d& src = forward ? p.inbox() : p.outbox();
    const fft::box3d& dst = forward ? p.outbox() : p.inbox();
    return run_c2c(p, scratch_, forward, a_in, mem_shape(src), out, mem_shape(dst), dst.count(), s);
  }

  plan_holder<fft::fft3d<double>> h_;
  std::array<std::int64_t, 3> n_{};
  scratch scratch_;
};

// ---- 3D real-to-complex ----
class py_fft3d_r2c {
 public:
  py_fft3d_r2c(py::handle comm, py::handle shape, py::handle decomposition, py::handle grid, py::handle output,
               py::handle planner) {
    const MPI_Comm c = mpi_comm(comm);
    std::array<std::int64_t, 3> n{1, 1, 1};
    fft::options3d o;
    const std::exception_ptr bad = local_checks([&] {
      n = parse_shape3(shape);
      o = parse3d(decomposition, grid, output, planner);
    });
    py::gil_scoped_release nogil;
    const defer_error checks(bad);
    h_.plan = std::make_unique<fft::fft3d_r2c<double>>(c, n, o);
    n_ = n;
  }

  const fft::fft3d_r2c<double>& plan() const { return *h_.plan; }
  std::array<std::int64_t, 3> shape() const { return n_; }

  // Real rows are padded in toru's layout (row_stride reals), so the input is copied into the
  // output buffer's padded rows and transformed in place there.
  py::array forward(py::handle a_in, py::handle out, py::handle s) {
    const auto& p = *h_.plan;
    const fft::box3d& rb = p.inbox();
    call_args a = check_call<double, cpx>(a_in, mem_shape(rb), out, mem_shape(p.outbox()), s);
    py::array_t<cpx> buf;
    cpx* o = nullptr;
    if (a.has_out) {
      o = scratch_.get(p.alloc_size());
    } else {
      buf = fresh<cpx>(p.alloc_size());
      o = buf.mutable_data();
    }
    {
      py::gil_scoped_release nogil;
      auto* r = reinterpret_cast<double*>(o);
      if (!a.bad) {
        const auto* in = static_cast<const double*>(a.in.data());
        const std::int64_t rows = rb.size[0] * rb.size[1], len = rb.size[2];
        for (std::int64_t row = 0; row < rows; ++row)
          std::memcpy(r + row * rb.row_stride, in + row * len, static_cast<std::size_t>(len) * sizeof(double));
      }
      const defer_error checks(a.bad);
      p.forward(r, o, a.s);
      if (a.has_out) std::memcpy(a.out.mutable_data(), o, static_cast<std::size_t>(p.outbox().count()) * sizeof(cpx));
    }
    return a.has_out ? a.out : view(buf, mem_shape(p.outbox()));
  }

  py::array backward(py::handle a_in, py::handle out, py::handle s) {
    const auto& p = *h_.plan;
    const fft::box3d& rb = p.inbox();
    const std::vector<std::int64_t> real_shape = mem_shape(rb);
    call_args a = check_call<cpx, double>(a_in, mem_shape(p.outbox()), out, real_shape, s);
    cpx* work = scratch_.get(p.alloc_size());
    py::array result =
        a.has_out ? a.out : py::array_t<double>(std::vector<py::ssize_t>(real_shape.begin(), real_shape.end()));
    {
      py::gil_scoped_release nogil;
      const cpx* i = a.bad ? work : static_cast<const cpx*>(a.in.data());
      auto* r = reinterpret_cast<double*>(work);
      {
        const defer_error checks(a.bad);
        p.backward(i, r, a.s);
      }
      auto* dst = static_cast<double*>(result.mutable_data());
      const std::int64_t rows = rb.size[0] * rb.size[1], len = rb.size[2];
      for (std::int64_t row = 0; row < rows; ++row)
        std::memcpy(dst + row * len, r + row * rb.row_stride, static_cast<std::size_t>(len) * sizeof(double));
    }
    return result;
  }

 private:
  plan_holder<fft::fft3d_r2c<double>> h_;
  std::array<std::int64_t, 3> n_{};
  scratch scratch_;
};

// ---- 1D complex ----
class py_fft1d {
 public:
  py_fft1d(py::handle comm, py::handle n, py::handle n1, py::handle output, py::handle planner) {
    const MPI_Comm c = mpi_comm(comm);
    std::int64_t size = 1;
    fft::options1d o;
    const std::exception_ptr bad = local_checks([&] {
      size = py::cast<std::int64_t>(n);
      o.n1 = py::cast<std::int64_t>(n1);
      o.output = parse_order(py::cast<std::string>(output));
      o.planner = parse_planner(py::cast<std::string>(planner));
    });
    py::gil_scoped_release nogil;
    const defer_error checks(bad);
    h_.plan = std::make_unique<fft::fft1d<double>>(c, size, o);
  }

  const fft::fft1d<double>& plan() const { return *h_.plan; }

  py::array forward(py::handle a, py::handle out, py::handle s) { return run(true, a, out, s); }
  py::array backward(py::handle a, py::handle out, py::handle s) { return run(false, a, out, s); }

 private:
  py::array run(bool forward, py::handle a_in, py::handle out, py::handle s) {
    const auto& p = *h_.plan;
    const std::int64_t src = forward ? p.in_count() : p.out_count(), dst = forward ? p.out_count() : p.in_count();
    return run_c2c(p, scratch_, forward, a_in, {src}, out, {dst}, dst, s);
  }

  plan_holder<fft::fft1d<double>> h_;
  scratch scratch_;
};

// The properties the 3D plans share.
template <class Py>
void bind_3d_common(py::class_<Py>& c) {
  c.def_property_readonly(
       "shape",
       [](const Py& p) {
         return tuple_of({p.shape()[0], p.shape()[1], p.shape()[2]});
       },
       "The global array shape (n0, n1, n2).")
      .def_property_readonly(
          "in_shape", [](const Py& p) { return tuple_of(mem_shape(p.plan().inbox())); },
          "Shape of this rank's input array (forward's argument, backward's result).")
      .def_property_readonly(
          "in_offset", [](const Py& p) { return tuple_of(mem_offset(p.plan().inbox())); },
          "Global index of this rank's input element [0, 0, 0].")
      .def_property_readonly(
          "out_shape", [](const Py& p) { return tuple_of(mem_shape(p.plan().outbox())); },
          "Shape of this rank's output array (forward's result, backward's argument).")
      .def_property_readonly(
          "out_offset", [](const Py& p) { return tuple_of(mem_offset(p.plan().outbox())); },
          "Global index (along out_axes) of this rank's output element [0, 0, 0].")
      .def_property_readonly(
          "out_axes", [](const Py& p) { return axes_of(p.plan().outbox()); },
          "The global axis of each output axis: (0, 1, 2) unless output='transposed'.")
      .def_property_readonly("decomposition", [](const Py& p) { return decomposition_name(p.plan().decomp()); })
      .def_property_readonly("grid", [](const Py& p) { return py::make_tuple(p.plan().grid()[0], p.plan().grid()[1]); })
      .def_property_readonly("strategy", [](const Py& p) { return strategy_of(p.plan()); });
}

constexpr const char* doc3d = R"(Parallel 3D FFT plan of a global array of `shape` over the mpi4py communicator `comm`
(None: MPI.COMM_WORLD). Collective. The decomposition is chosen by toru unless forced; each rank
reads its part from in_shape/in_offset and out_shape/out_offset/out_axes.
Keywords: decomposition='auto'|'slab'|'pencil', grid=(p0, p1) for pencils, output='natural'|'transposed',
planner='estimate'|'measure'.)";

}  // namespace

void bind_fft(py::module_& m) {
  py::class_<py_fft3d> c3(m, "FFT3D", doc3d);
  c3.def(py::init<py::handle, py::handle, py::handle, py::handle, py::handle, py::handle>(), py::arg("comm"),
         py::arg("shape"), py::kw_only(), py::arg("decomposition") = "auto", py::arg("grid") = py::none(),
         py::arg("output") = "natural", py::arg("planner") = "estimate")
      .def("forward", &py_fft3d::forward, py::arg("a"), py::kw_only(), py::arg("out") = py::none(),
           py::arg("scale") = "none",
           "Collective. a: complex128 of in_shape. Returns the transform, complex128 of out_shape "
           "(exp(-2 pi i jk/n), unscaled unless scale='full' or 'symmetric').")
      .def("backward", &py_fft3d::backward, py::arg("a"), py::kw_only(), py::arg("out") = py::none(),
           py::arg("scale") = "full",
           "Collective. a: complex128 of out_shape. Returns the inverse, complex128 of in_shape, scaled by "
           "1/N by default (as numpy.fft.ifftn).");
  bind_3d_common(c3);

  py::class_<py_fft3d_r2c> r3(m, "FFT3DR2C", doc3d);
  r3.def(py::init<py::handle, py::handle, py::handle, py::handle, py::handle, py::handle>(), py::arg("comm"),
         py::arg("shape"), py::kw_only(), py::arg("decomposition") = "auto", py::arg("grid") = py::none(),
         py::arg("output") = "natural", py::arg("planner") = "estimate")
      .def("forward", &py_fft3d_r2c::forward, py::arg("a"), py::kw_only(), py::arg("out") = py::none(),
           py::arg("scale") = "none",
           "Collective. a: float64 of in_shape. Returns complex128 of out_shape (the n2//2+1 coefficients of "
           "the last axis, as numpy.fft.rfftn).")
      .def("backward", &py_fft3d_r2c::backward, py::arg("a"), py::kw_only(), py::arg("out") = py::none(),
           py::arg("scale") = "full", "Collective. a: complex128 of out_shape. Returns float64 of in_shape.");
  bind_3d_common(r3);

  py::class_<py_fft1d>(m, "FFT1D",
                       R"(Distributed 1D complex FFT of n points over `comm` (six-step, n = n1 * n2). Collective.
Input: global elements [in_offset[0], in_offset[0] + in_shape[0]). Natural output: coefficients
[out_offset[0], out_offset[0] + out_shape[0]); output='transposed' (scrambled): local index
(k1 - k1_start) * n2 + k2 holds X[k1 + n1 * k2]. n1=0 lets toru choose the factor.)")
      .def(py::init<py::handle, py::handle, py::handle, py::handle, py::handle>(), py::arg("comm"), py::arg("n"),
           py::kw_only(), py::arg("n1") = 0, py::arg("output") = "natural", py::arg("planner") = "estimate")
      .def("forward", &py_fft1d::forward, py::arg("a"), py::kw_only(), py::arg("out") = py::none(),
           py::arg("scale") = "none")
      .def("backward", &py_fft1d::backward, py::arg("a"), py::kw_only(), py::arg("out") = py::none(),
           py::arg("scale") = "full")
      .def_property_readonly("n", [](const py_fft1d& p) { return p.plan().size(); })
      .def_property_readonly("n1", [](const py_fft1d& p) { return p.plan().n1(); })
      .def_property_readonly("n2", [](const py_fft1d& p) { return p.plan().n2(); })
      .def_property_readonly("in_shape", [](const py_fft1d& p) { return py::make_tuple(p.plan().in_count()); })
      .def_property_readonly("in_offset", [](const py_fft1d& p) { return py::make_tuple(p.plan().in_start()); })
      .def_property_readonly("out_shape", [](const py_fft1d& p) { return py::make_tuple(p.plan().out_count()); })
      .def_property_readonly("out_offset", [](const py_fft1d& p) { return py::make_tuple(p.plan().out_start()); })
      .def_property_readonly("strategy", [](const py_fft1d& p) { return strategy_of(p.plan()); });
}

}  // namespace toru::python
