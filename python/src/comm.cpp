// SPDX-License-Identifier: BSD-3-Clause
// toru.alltoall and toru.alltoallv: toru::comm's drop-in all-to-alls on NumPy buffers.
//
// toru's drop-in alltoall agrees on its arguments only on the first call of a signature (later
// calls make no collective but the exchange), so a Python argument that is wrong on one rank only
// would reach it as a new signature on that rank alone. Every call therefore first agrees on the
// element size and block size and this rank's checks (one fixed-size allreduce, core's
// validate_collectively), so a bad argument raises on every rank.
#include <mpi.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <climits>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "toru/comm/alltoall.hpp"
#include "toru/core/agreement.hpp"
#include "toru/core/error.hpp"
#include "toru/core/mpi.hpp"

namespace toru::python {
namespace {

// One contiguous MPI type per element size, committed once and kept (it must outlive toru's plan
// cache, which describes types by handle): toru moves bytes, NumPy's dtype says how many.
MPI_Datatype element_type(std::size_t itemsize) {
  static std::mutex mu;
  static std::map<std::size_t, MPI_Datatype> types;
  if (itemsize == 1) return MPI_BYTE;
  const std::lock_guard lock(mu);
  auto it = types.find(itemsize);
  if (it != types.end()) return it->second;
  MPI_Datatype t = MPI_DATATYPE_NULL;
  check_mpi(MPI_Type_contiguous(static_cast<int>(itemsize), MPI_BYTE, &t), "MPI_Type_contiguous");
  check_mpi(MPI_Type_commit(&t), "MPI_Type_commit");
  types.emplace(itemsize, t);
  return t;
}

int comm_size(MPI_Comm comm) {
  int p = 0;
  check_mpi(MPI_Comm_size(comm, &p), "MPI_Comm_size");
  return p;
}

void expect_contiguous(const py::array& a, const char* argument, bool writable) {
  if (!(a.flags() & py::array::c_style) || (writable && !a.writeable()))
    expect(false, argument, writable ? "a C-contiguous, writable array" : "a C-contiguous array", describe(a));
}

std::vector<int> counts_of(py::handle v, const char* argument, int nranks) {
  const auto c = py::cast<std::vector<std::int64_t>>(v);
  expect(static_cast<int>(c.size()) == nranks, argument, std::to_string(nranks) + " values (one per rank)",
         std::to_string(c.size()) + " values");
  std::vector<int> out(c.size());
  for (std::size_t i = 0; i < c.size(); ++i) {
    expect(c[i] >= 0 && c[i] <= INT_MAX, argument, "values in [0, 2^31 - 1]",
           std::to_string(c[i]) + " at index " + std::to_string(i));
    out[i] = static_cast<int>(c[i]);
  }
  return out;
}

// Packed displacements: block j starts where block j - 1 ends.
std::vector<int> packed(const std::vector<int>& counts, const char* argument) {
  std::vector<int> d(counts.size());
  std::int64_t at = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    expect(at <= INT_MAX, argument, "offsets below 2^31 elements", std::to_string(at));
    d[i] = static_cast<int>(at);
    at += counts[i];
  }
  return d;
}

// Elements a buffer needs for these counts and displacements.
std::int64_t extent_of(const std::vector<int>& counts, const std::vector<int>& displs) {
  std::int64_t e = 0;
  for (std::size_t i = 0; i < counts.size(); ++i)
    if (counts[i] > 0) e = std::max<std::int64_t>(e, std::int64_t{displs[i]} + counts[i]);
  return e;
}

py::array alltoall(py::handle comm_arg, py::handle send_arg, py::handle recv_arg) {
  const MPI_Comm comm = mpi_comm(comm_arg);
  expect_intracommunicator(comm, "comm");
  const int nranks = comm_size(comm);
  py::array send, recv;
  std::int64_t itemsize = 0, block = 0;
  const std::exception_ptr bad = local_checks([&] {
    send = as_array(send_arg, "send");
    expect_contiguous(send, "send", false);
    itemsize = send.itemsize();
    expect(send.size() % nranks == 0, "send",
           "a number of elements divisible by the " + std::to_string(nranks) + " ranks", describe(send));
    block = send.size() / nranks;
    if (recv_arg.is_none()) {
      recv = py::array(send.dtype(), std::vector<py::ssize_t>(send.shape(), send.shape() + send.ndim()));
    } else {
      recv = as_array(recv_arg, "recv");
      expect_contiguous(recv, "recv", true);
      expect(recv.dtype().is(send.dtype()) && recv.size() == send.size(), "recv",
             "an array of send's dtype and size (" + describe(send) + ")", describe(recv));
    }
  });
  validate_collectively(
      comm, "toru.alltoall",
      {{"the element size (send.itemsize)", itemsize}, {"elements per rank (send.size / ranks)", block}}, [&] {
        if (bad) std::rethrow_exception(bad);
        expect(block <= INT_MAX, "send", "at most 2^31 - 1 elements per rank", describe(send));
      });
  const MPI_Datatype t = element_type(static_cast<std::size_t>(itemsize));
  const void* s = send.data();
  void* r = recv.mutable_data();
  {
    py::gil_scoped_release nogil;
    toru::comm::alltoall(s, static_cast<int>(block), t, r, static_cast<int>(block), t, comm);
  }
  return recv;
}

py::array alltoallv(py::handle comm_arg, py::handle send_arg, py::handle sendcounts_arg, py::handle recvcounts_arg,
                    py::handle sdispls_arg, py::handle rdispls_arg, py::handle recv_arg) {
  const MPI_Comm comm = mpi_comm(comm_arg);
  expect_intracommunicator(comm, "comm");
  const int nranks = comm_size(comm);
  py::array send, recv;
  std::vector<int> sc(static_cast<std::size_t>(nranks)), rc(sc), sd(sc), rd(sc);
  std::int64_t itemsize = 0;
  const std::exception_ptr bad = local_checks([&] {
    send = as_array(send_arg, "send");
    expect_contiguous(send, "send", false);
    itemsize = send.itemsize();
    sc = counts_of(sendcounts_arg, "sendcounts", nranks);
    rc = counts_of(recvcounts_arg, "recvcounts", nranks);
    sd = sdispls_arg.is_none() ? packed(sc, "sendcounts") : counts_of(sdispls_arg, "sdispls", nranks);
    rd = rdispls_arg.is_none() ? packed(rc, "recvcounts") : counts_of(rdispls_arg, "rdispls", nranks);
    const std::int64_t need_send = extent_of(sc, sd), need_recv = extent_of(rc, rd);
    expect(send.size() >= need_send, "send",
           "at least " + std::to_string(need_send) + " elements (sendcounts and sdispls)", describe(send));
    if (recv_arg.is_none()) {
      recv = py::array(send.dtype(), std::vector<py::ssize_t>{static_cast<py::ssize_t>(need_recv)});
    } else {
      recv = as_array(recv_arg, "recv");
      expect_contiguous(recv, "recv", true);
      expect(recv.dtype().is(send.dtype()) && recv.size() >= need_recv, "recv",
             "an array of send's dtype (" + std::string(py::str(send.dtype())) + ") of at least " +
                 std::to_string(need_recv) + " elements (recvcounts and rdispls)",
             describe(recv));
    }
  });
  validate_collectively(comm, "toru.alltoallv", {{"the element size (send.itemsize)", itemsize}}, [&] {
    if (bad) std::rethrow_exception(bad);
  });
  const MPI_Datatype t = element_type(static_cast<std::size_t>(itemsize));
  const void* s = send.data();
  void* r = recv.mutable_data();
  {
    py::gil_scoped_release nogil;
    toru::comm::alltoallv(s, sc.data(), sd.data(), t, r, rc.data(), rd.data(), t, comm);
  }
  return recv;
}

}  // namespace

void bind_comm(py::module_& m) {
  m.def("alltoall", &alltoall, py::arg("comm"), py::arg("send"), py::kw_only(), py::arg("recv") = py::none(),
        R"(Collective, as MPI_Alltoall through toru's all-to-all: send (any dtype, C-contiguous, a size
divisible by the ranks) is cut into one equal block per rank, in rank order; block j goes to rank j. Returns
recv (allocated with send's shape and dtype unless given), where block j came from rank j.)");
  m.def("alltoallv", &alltoallv, py::arg("comm"), py::arg("send"), py::arg("sendcounts"), py::arg("recvcounts"),
        py::kw_only(), py::arg("sdispls") = py::none(), py::arg("rdispls") = py::none(), py::arg("recv") = py::none(),
        R"(Collective, as MPI_Alltoallv through toru's all-to-all: counts and displacements in elements of
send's dtype, one per rank (displacements default to packed blocks). sendcounts[j] on rank i must equal
recvcounts[i] on rank j. Returns recv (1-D, allocated to fit unless given).)");
}

}  // namespace toru::python
