// SPDX-License-Identifier: BSD-3-Clause
// toru.FFT3D, toru.FFT3DR2C and toru.FFT1D: toru::fft's double- and single-precision plans on NumPy
// arrays (dtype= at plan creation picks fft3d<double> or fft3d<float>, and so on).
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

#include <algorithm>
#include <array>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "toru/core/agreement.hpp"
#include "toru/core/error.hpp"
#include "toru/fft/fft1d.hpp"
#include "toru/fft/fft3d.hpp"

namespace toru::python {
namespace {

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
  template <class C>
  C* get(std::int64_t count) {
    const std::size_t bytes = static_cast<std::size_t>(std::max<std::int64_t>(count, 1)) * sizeof(C);
    if (bytes > bytes_) {
      p_.reset(std::malloc(bytes));
      bytes_ = p_ ? bytes : 0;
      if (!p_)
        throw toru::error(errc::out_of_memory,
                          "toru: a plan's work buffer of " + std::to_string(bytes) + " bytes could not be allocated");
    }
    return static_cast<C*>(p_.get());
  }

 private:
  struct release {
    void operator()(void* p) const { std::free(p); }
  };
  std::unique_ptr<void, release> p_;
  std::size_t bytes_ = 0;
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

// A Python plan holds toru's plan of the precision its dtype chose: double or float.
template <template <class> class Plan>
struct either_precision {
  plan_holder<Plan<double>> d;
  plan_holder<Plan<float>> f;
  bool single = false;

  // Collective: builds the plan of the chosen precision. A rank whose arguments failed its own
  // checks (bad) builds a double plan and raises their error on every rank at its agreement.
  template <class... Args>
  void build(bool single_precision, Args&&... args) {
    single = single_precision;
    if (single)
      f.plan = std::make_unique<Plan<float>>(std::forward<Args>(args)...);
    else
      d.plan = std::make_unique<Plan<double>>(std::forward<Args>(args)...);
  }
  // f(plan) on the plan of this precision.
  template <class F>
  decltype(auto) visit(F&& fn) const {
    return single ? fn(*f.plan) : fn(*d.plan);
  }
};

// The dtype= of a plan: the forward input's element type. False: double precision.
bool parse_single(py::handle dtype, bool real) {
  const char* expected = real ? "float64 or float32 (the real input of an r2c plan)"
                              : "complex128 or complex64 (toru.FFT3DR2C takes real input)";
  py::dtype d;
  try {
    d = py::dtype::from_args(py::reinterpret_borrow<py::object>(dtype));
  } catch (const py::error_already_set&) {
    expect(false, "dtype", expected, std::string(py::repr(dtype)) + ", which is no NumPy dtype");
  }
  const py::dtype dbl = real ? py::dtype::of<double>() : py::dtype::of<std::complex<double>>();
  const py::dtype sgl = real ? py::dtype::of<float>() : py::dtype::of<std::complex<float>>();
  if (d.is(dbl)) return false;
  if (d.is(sgl)) return true;
  expect(false, "dtype", expected, std::string(py::str(py::handle(d))));
  return false;
}

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

// Collective on the first call: a 3D plan's shared_out() (docs/fft.md, "Shared output"), kept in
// `cached` for the later calls.
template <class Either>
void* shared_out_of(const Either& plans, void*& cached) {
  if (!cached) {
    py::gil_scoped_release nogil;
    cached = plans.visit([](auto& p) -> void* { return p.shared_out(); });
  }
  return cached;
}

std::string decomposition_name(fft::decomposition d) { return std::string(fft::to_string(d)); }

// Where a transform writes: the caller's out= where it holds the plan's alloc_size() elements
// (more than dst_count where an intermediate layout is larger), else the plan's scratch (copied out
// afterwards); without out=, a fresh uninitialised array of alloc_size() kept in buf.
// The plan's shared_out() array (`shared`, or null) holds alloc_size() elements and goes straight in.
bool writes_out_directly(const call_args& a, std::int64_t alloc, std::int64_t dst_count, const void* shared) {
  return alloc <= std::max<std::int64_t>(dst_count, 1) || (shared && a.has_out && a.out.data() == shared);
}
template <class C>
C* output_buffer(call_args& a, scratch& sc, std::int64_t alloc, std::int64_t dst_count, py::array_t<C>& buf,
                 const void* shared = nullptr) {
  if (a.has_out)
    return writes_out_directly(a, alloc, dst_count, shared) ? static_cast<C*>(a.out.mutable_data()) : sc.get<C>(alloc);
  buf = fresh<C>(alloc);
  return buf.mutable_data();
}

// What the Python side reads of a 3D plan, whatever its precision.
struct plan3d_info {
  std::array<std::int64_t, 3> n{};
  fft::box3d in, out;
  fft::decomposition decomp = fft::decomposition::slab;
  std::array<int, 2> grid{1, 1};
  std::string strategy;
  bool single = false;

  template <class Plan>
  static plan3d_info of(const Plan& p, std::array<std::int64_t, 3> n, bool single) {
    return {n, p.inbox(), p.outbox(), p.decomp(), p.grid(), p.strategy(), single};
  }
};

// ---- 3D complex-to-complex ----
// A c2c plan's forward or backward on NumPy arrays: the input checked (through the call's
// agreement), the result in `out` or in a fresh uninitialised array shaped as the destination box.
// Plans write alloc_size() elements; where that is more than the box (an intermediate layout is
// larger), out= goes through the plan's scratch and a copy, and a fresh array is a view of a
// buffer of alloc_size().
template <class Plan>
py::array run_c2c(const Plan& p, scratch& sc, bool forward, py::handle a_in, std::vector<std::int64_t> src_shape,
                  py::handle out, std::vector<std::int64_t> dst_shape, std::int64_t dst_count, py::handle s,
                  const void* shared) {
  using cpx = typename Plan::complex_type;
  call_args a = check_call<cpx, cpx>(a_in, src_shape, out, dst_shape, s);
  const bool fits = writes_out_directly(a, p.alloc_size(), dst_count, shared);
  py::array_t<cpx> buf;
  cpx* o = output_buffer(a, sc, p.alloc_size(), dst_count, buf, shared);
  const cpx* i = a.bad ? o : static_cast<const cpx*>(a.in.data());
  {
    py::gil_scoped_release nogil;
    const defer_error checks(a.bad);
    if (forward)
      p.forward(i, o, a.s);
    else
      p.backward(i, o, a.s);
    if (a.has_out && !fits) std::memcpy(a.out.mutable_data(), o, static_cast<std::size_t>(dst_count) * sizeof(cpx));
  }
  return a.has_out ? a.out : view(buf, dst_shape);
}

template <class T>
using fft3d_of = fft::fft3d<T>;
template <class T>
using fft3d_r2c_of = fft::fft3d_r2c<T>;
template <class T>
using fft1d_of = fft::fft1d<T>;

class py_fft3d {
 public:
  py_fft3d(py::handle comm, py::handle shape, py::handle decomposition, py::handle grid, py::handle output,
           py::handle planner, py::handle dtype) {
    const MPI_Comm c = mpi_comm(comm);
    std::array<std::int64_t, 3> n{1, 1, 1};
    fft::options3d o;
    bool single = false;
    const std::exception_ptr bad = local_checks([&] {
      n = parse_shape3(shape);
      o = parse3d(decomposition, grid, output, planner);
      single = parse_single(dtype, false);
    });
    py::gil_scoped_release nogil;
    const defer_error checks(bad);
    p_.build(single, c, n, o);
    info_ = p_.visit([&](const auto& p) { return plan3d_info::of(p, n, single); });
  }

  py::array forward(py::handle a, py::handle out, py::handle s) { return run(true, a, out, s); }
  py::array backward(py::handle a, py::handle out, py::handle s) { return run(false, a, out, s); }

  const plan3d_info& info() const { return info_; }

 private:
  py::array run(bool forward, py::handle a_in, py::handle out, py::handle s) {
    const fft::box3d& src = forward ? info_.in : info_.out;
    const fft::box3d& dst = forward ? info_.out : info_.in;
    return p_.visit([&](const auto& p) {
      return run_c2c(p, scratch_, forward, a_in, mem_shape(src), out, mem_shape(dst), dst.count(), s, shared_);
    });
  }

  either_precision<fft3d_of> p_;
  plan3d_info info_;
  scratch scratch_;
  void* shared_ = nullptr;

 public:
  void* shared_out() { return shared_out_of(p_, shared_); }
};

// ---- 3D real-to-complex ----
// The plans are built with packed real rows (options3d::rows), NumPy's: the transform reads and
// writes the caller's arrays as they are (straight on the one-node direct window, through one local
// copy inside the plan elsewhere), and its buffers need hold only the boxes.
template <class T>
py::array r2c_forward(const fft::fft3d_r2c<T>& p, scratch& sc, py::handle a_in, py::handle out, py::handle s,
                      const void* shared) {
  using cpx = std::complex<T>;
  const fft::box3d& rb = p.inbox();
  const std::int64_t count = p.outbox().count();
  call_args a = check_call<T, cpx>(a_in, mem_shape(rb), out, mem_shape(p.outbox()), s);
  const bool fits = writes_out_directly(a, p.alloc_size(), count, shared);
  py::array_t<cpx> buf;
  cpx* o = output_buffer(a, sc, p.alloc_size(), count, buf, shared);
  {
    py::gil_scoped_release nogil;
    const T* r = a.bad ? reinterpret_cast<const T*>(o) : static_cast<const T*>(a.in.data());
    const defer_error checks(a.bad);
    p.forward(r, o, a.s);
    if (a.has_out && !fits) std::memcpy(a.out.mutable_data(), o, static_cast<std::size_t>(count) * sizeof(cpx));
  }
  return a.has_out ? a.out : view(buf, mem_shape(p.outbox()));
}

template <class T>
py::array r2c_backward(const fft::fft3d_r2c<T>& p, py::handle a_in, py::handle out, py::handle s) {
  using cpx = std::complex<T>;
  const fft::box3d& rb = p.inbox();
  const std::vector<std::int64_t> real_shape = mem_shape(rb);
  call_args a = check_call<cpx, T>(a_in, mem_shape(p.outbox()), out, real_shape, s);
  // Packed rows: the plan writes the real box and nothing more.
  py::array result = a.has_out ? a.out : py::array_t<T>(std::vector<py::ssize_t>(real_shape.begin(), real_shape.end()));
  T* r = static_cast<T*>(result.mutable_data());
  {
    py::gil_scoped_release nogil;
    const cpx* i = a.bad ? reinterpret_cast<const cpx*>(r) : static_cast<const cpx*>(a.in.data());
    {
      const defer_error checks(a.bad);
      p.backward(i, r, a.s);
    }
  }
  return result;
}

class py_fft3d_r2c {
 public:
  py_fft3d_r2c(py::handle comm, py::handle shape, py::handle decomposition, py::handle grid, py::handle output,
               py::handle planner, py::handle dtype) {
    const MPI_Comm c = mpi_comm(comm);
    std::array<std::int64_t, 3> n{1, 1, 1};
    fft::options3d o;
    bool single = false;
    const std::exception_ptr bad = local_checks([&] {
      n = parse_shape3(shape);
      o = parse3d(decomposition, grid, output, planner);
      o.rows = fft::real_rows::packed;  // NumPy's rows: read and written in place on the direct window
      single = parse_single(dtype, true);
    });
    py::gil_scoped_release nogil;
    {
      const defer_error checks(bad);
      p_.build(single, c, n, o);
    }
    info_ = p_.visit([&](const auto& p) { return plan3d_info::of(p, n, single); });
  }

  const plan3d_info& info() const { return info_; }

  py::array forward(py::handle a, py::handle out, py::handle s) {
    return p_.visit([&](const auto& p) { return r2c_forward(p, scratch_, a, out, s, shared_); });
  }
  py::array backward(py::handle a, py::handle out, py::handle s) {
    return p_.visit([&](const auto& p) { return r2c_backward(p, a, out, s); });
  }

 private:
  either_precision<fft3d_r2c_of> p_;
  plan3d_info info_;
  scratch scratch_;
  void* shared_ = nullptr;

 public:
  void* shared_out() { return shared_out_of(p_, shared_); }
};

// ---- 1D complex ----
class py_fft1d {
 public:
  py_fft1d(py::handle comm, py::handle n, py::handle n1, py::handle output, py::handle planner, py::handle dtype) {
    const MPI_Comm c = mpi_comm(comm);
    std::int64_t size = 1;
    fft::options1d o;
    bool single = false;
    const std::exception_ptr bad = local_checks([&] {
      size = py::cast<std::int64_t>(n);
      o.n1 = py::cast<std::int64_t>(n1);
      o.output = parse_order(py::cast<std::string>(output));
      o.planner = parse_planner(py::cast<std::string>(planner));
      single = parse_single(dtype, false);
    });
    py::gil_scoped_release nogil;
    const defer_error checks(bad);
    p_.build(single, c, size, o);
    p_.visit([&](const auto& p) {
      size_ = p.size();
      n1_ = p.n1();
      n2_ = p.n2();
      in_ = {p.in_start(), p.in_count()};
      out_ = {p.out_start(), p.out_count()};
      strategy_ = p.strategy();
    });
  }

  py::array forward(py::handle a, py::handle out, py::handle s) { return run(true, a, out, s); }
  py::array backward(py::handle a, py::handle out, py::handle s) { return run(false, a, out, s); }

  std::int64_t size() const { return size_; }
  std::int64_t n1() const { return n1_; }
  std::int64_t n2() const { return n2_; }
  // {start, count} of this rank's input and output blocks.
  std::array<std::int64_t, 2> in_block() const { return in_; }
  std::array<std::int64_t, 2> out_block() const { return out_; }
  const std::string& strategy() const { return strategy_; }
  bool single() const { return p_.single; }

 private:
  py::array run(bool forward, py::handle a_in, py::handle out, py::handle s) {
    const std::int64_t src = forward ? in_[1] : out_[1], dst = forward ? out_[1] : in_[1];
    return p_.visit(
        [&](const auto& p) { return run_c2c(p, scratch_, forward, a_in, {src}, out, {dst}, dst, s, nullptr); });
  }

  either_precision<fft1d_of> p_;
  std::int64_t size_ = 0, n1_ = 0, n2_ = 0;
  std::array<std::int64_t, 2> in_{}, out_{};
  std::string strategy_;
  scratch scratch_;
};

// The dtype of a plan's forward input (numpy.dtype).
py::dtype input_dtype(bool single, bool real) {
  if (real) return single ? py::dtype::of<float>() : py::dtype::of<double>();
  return single ? py::dtype::of<std::complex<float>>() : py::dtype::of<std::complex<double>>();
}

// The properties the 3D plans share.
template <class Py>
void bind_3d_common(py::class_<Py>& c, bool real) {
  c.def(
       "shared_out",
       [](py::object self) {
         Py& p = self.cast<Py&>();
         void* ptr = p.shared_out();
         const std::vector<std::int64_t> m = mem_shape(p.info().out);
         const std::vector<py::ssize_t> shape(m.begin(), m.end());
         if (p.info().single)
           return py::array(py::array_t<std::complex<float>>(shape, static_cast<std::complex<float>*>(ptr), self));
         return py::array(py::array_t<std::complex<double>>(shape, static_cast<std::complex<double>*>(ptr), self));
       },
       "Collective on the first call (later calls view the same memory): this rank's output array "
       "(out_shape, out_dtype) in node memory, owned by the plan. Passed as forward's out= (and "
       "backward's argument) on every rank, it lets the plan on one node write every rank's part "
       "directly: two passes over the array instead of three in natural order. Pass it on every rank "
       "or on none.")
      .def_property_readonly(
          "shape",
          [](const Py& p) {
            const auto& n = p.info().n;
            return tuple_of({n[0], n[1], n[2]});
          },
          "The global array shape (n0, n1, n2).")
      .def_property_readonly(
          "in_shape", [](const Py& p) { return tuple_of(mem_shape(p.info().in)); },
          "Shape of this rank's input array (forward's argument, backward's result).")
      .def_property_readonly(
          "in_offset", [](const Py& p) { return tuple_of(mem_offset(p.info().in)); },
          "Global index of this rank's input element [0, 0, 0].")
      .def_property_readonly(
          "out_shape", [](const Py& p) { return tuple_of(mem_shape(p.info().out)); },
          "Shape of this rank's output array (forward's result, backward's argument).")
      .def_property_readonly(
          "out_offset", [](const Py& p) { return tuple_of(mem_offset(p.info().out)); },
          "Global index (along out_axes) of this rank's output element [0, 0, 0].")
      .def_property_readonly(
          "out_axes", [](const Py& p) { return axes_of(p.info().out); },
          "The global axis of each output axis: (0, 1, 2) unless output='transposed'.")
      .def_property_readonly(
          "dtype", [real](const Py& p) { return input_dtype(p.info().single, real); },
          "The dtype of forward's input (and backward's result).")
      .def_property_readonly(
          "out_dtype", [](const Py& p) { return input_dtype(p.info().single, false); },
          "The dtype of forward's result (and backward's input).")
      .def_property_readonly("decomposition", [](const Py& p) { return decomposition_name(p.info().decomp); })
      .def_property_readonly("grid", [](const Py& p) { return py::make_tuple(p.info().grid[0], p.info().grid[1]); })
      .def_property_readonly("strategy", [](const Py& p) { return p.info().strategy; });
}

constexpr const char* doc3d = R"(Parallel 3D FFT plan of a global array of `shape` over the mpi4py communicator `comm`
(None: MPI.COMM_WORLD). Collective. The decomposition is chosen by toru unless forced; each rank
reads its part from in_shape/in_offset and out_shape/out_offset/out_axes.
Keywords: decomposition='auto'|'slab'|'pencil', grid=(p0, p1) for pencils, output='natural'|'transposed',
planner='estimate'|'measure', dtype= forward's input: complex128 or complex64 (FFT3D), float64 or
float32 (FFT3DR2C); the single-precision types run toru's float plans.)";

}  // namespace

void bind_fft(py::module_& m) {
  using h = py::handle;
  py::class_<py_fft3d> c3(m, "FFT3D", doc3d);
  c3.def(py::init<h, h, h, h, h, h, h>(), py::arg("comm"), py::arg("shape"), py::kw_only(),
         py::arg("decomposition") = "auto", py::arg("grid") = py::none(), py::arg("output") = "natural",
         py::arg("planner") = "estimate", py::arg("dtype") = "complex128")
      .def("forward", &py_fft3d::forward, py::arg("a"), py::kw_only(), py::arg("out") = py::none(),
           py::arg("scale") = "none",
           "Collective. a: dtype of in_shape. Returns the transform, dtype of out_shape "
           "(exp(-2 pi i jk/n), unscaled unless scale='full' or 'symmetric').")
      .def("backward", &py_fft3d::backward, py::arg("a"), py::kw_only(), py::arg("out") = py::none(),
           py::arg("scale") = "full",
           "Collective. a: dtype of out_shape. Returns the inverse, dtype of in_shape, scaled by "
           "1/N by default (as numpy.fft.ifftn).");
  bind_3d_common(c3, false);

  py::class_<py_fft3d_r2c> r3(m, "FFT3DR2C", doc3d);
  r3.def(py::init<h, h, h, h, h, h, h>(), py::arg("comm"), py::arg("shape"), py::kw_only(),
         py::arg("decomposition") = "auto", py::arg("grid") = py::none(), py::arg("output") = "natural",
         py::arg("planner") = "estimate", py::arg("dtype") = "float64")
      .def("forward", &py_fft3d_r2c::forward, py::arg("a"), py::kw_only(), py::arg("out") = py::none(),
           py::arg("scale") = "none",
           "Collective. a: dtype (float64 or float32) of in_shape. Returns out_dtype (complex128 or complex64) "
           "of out_shape (the n2//2+1 coefficients of the last axis, as numpy.fft.rfftn).")
      .def("backward", &py_fft3d_r2c::backward, py::arg("a"), py::kw_only(), py::arg("out") = py::none(),
           py::arg("scale") = "full", "Collective. a: out_dtype of out_shape. Returns dtype of in_shape.");
  bind_3d_common(r3, true);

  py::class_<py_fft1d>(m, "FFT1D",
                       R"(Distributed 1D complex FFT of n points over `comm` (six-step, n = n1 * n2). Collective.
Input: global elements [in_offset[0], in_offset[0] + in_shape[0]). Natural output: coefficients
[out_offset[0], out_offset[0] + out_shape[0]); output='transposed' (scrambled): local index
(k1 - k1_start) * n2 + k2 holds X[k1 + n1 * k2]. n1=0 lets toru choose the factor.
dtype=complex128 (default) or complex64 (toru's float plan).)")
      .def(py::init<h, h, h, h, h, h>(), py::arg("comm"), py::arg("n"), py::kw_only(), py::arg("n1") = 0,
           py::arg("output") = "natural", py::arg("planner") = "estimate", py::arg("dtype") = "complex128")
      .def("forward", &py_fft1d::forward, py::arg("a"), py::kw_only(), py::arg("out") = py::none(),
           py::arg("scale") = "none")
      .def("backward", &py_fft1d::backward, py::arg("a"), py::kw_only(), py::arg("out") = py::none(),
           py::arg("scale") = "full")
      .def_property_readonly("n", &py_fft1d::size)
      .def_property_readonly("n1", &py_fft1d::n1)
      .def_property_readonly("n2", &py_fft1d::n2)
      .def_property_readonly("in_shape", [](const py_fft1d& p) { return py::make_tuple(p.in_block()[1]); })
      .def_property_readonly("in_offset", [](const py_fft1d& p) { return py::make_tuple(p.in_block()[0]); })
      .def_property_readonly("out_shape", [](const py_fft1d& p) { return py::make_tuple(p.out_block()[1]); })
      .def_property_readonly("out_offset", [](const py_fft1d& p) { return py::make_tuple(p.out_block()[0]); })
      .def_property_readonly("dtype", [](const py_fft1d& p) { return input_dtype(p.single(), false); })
      .def_property_readonly("out_dtype", [](const py_fft1d& p) { return input_dtype(p.single(), false); })
      .def_property_readonly("strategy", &py_fft1d::strategy);
}

}  // namespace toru::python
