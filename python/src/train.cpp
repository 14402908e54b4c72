// SPDX-License-Identifier: BSD-3-Clause
// toru._core.OrderedAllreduce: toru::train's ordered gradient average on NumPy float32 buffers, the
// reduction behind toru's PyTorch DDP communication hook (python/toru/ddp.py).
//
// The averaging is toru::train::data_parallel's (reduction::ordered), the engine toru-train runs:
// each element becomes ((g_0 + g_1) + ... + g_{P-1}) / P whatever the buffer's length, so DDP's
// bucketing (bucket_cap_mb) cannot change the result. One engine per buffer length, made on first
// use: every rank sees the same sequence of lengths (DDP builds the same buckets everywhere), so the
// cache is the same on every rank. Each call first agrees on the length and this rank's checks,
// so a bad buffer on one rank raises on every rank instead of leaving the others in the exchange.
#include <mpi.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "toru/comm/communicator.hpp"
#include "toru/core/agreement.hpp"
#include "toru/core/error.hpp"
#include "toru/train/data_parallel.hpp"

namespace toru::python {
namespace {

class ordered_allreduce {
 public:
  explicit ordered_allreduce(py::handle comm_arg) {
    const MPI_Comm comm = mpi_comm(comm_arg);
    expect_intracommunicator(comm, "comm");
    py::gil_scoped_release nogil;
    comm_.emplace(comm);
  }

  int size() const { return comm_->size(); }
  int rank() const { return comm_->rank(); }
  std::size_t engines() const {
    const std::lock_guard lock(mu_);
    return engines_.size();
  }

  // Collective: replaces `values` by their average over the ranks, in rank order.
  void average(py::handle values_arg) {
    py::array values;
    std::int64_t count = -1;
    const std::exception_ptr bad = local_checks([&] {
      values = as_array(values_arg, "values");
      const bool ok =
          values.dtype().is(py::dtype::of<float>()) && (values.flags() & py::array::c_style) && values.writeable();
      expect(ok, "values", "a C-contiguous, writable float32 array", describe(values));
      count = values.size();
    });
    float* data = bad ? nullptr : static_cast<float*>(values.mutable_data());
    py::gil_scoped_release nogil;
    // One caller at a time: the hook's worker thread is the usual one, but nothing stops two.
    const std::lock_guard lock(mu_);
    validate_collectively(comm_->mpi(), "toru.OrderedAllreduce.average", {{"values.size", count}}, [&] {
      if (bad) std::rethrow_exception(bad);
    });
    if (count == 0) return;
    auto& dp = engine(count);
    dp.begin_step({data, static_cast<std::size_t>(count)});
    dp.gradient_ready(0);
    dp.finish();
  }

 private:
  train::data_parallel& engine(std::int64_t count) {
    auto it = engines_.find(count);
    if (it != engines_.end()) return *it->second;
    const std::vector<train::parameter_slot> slot{{.name = "bucket", .shape = {count}, .offset = 0, .count = count}};
    // One bucket whatever the length: DDP has already bucketed; splitting again would only add calls.
    const std::int64_t whole = count * static_cast<std::int64_t>(sizeof(float));
    const train::data_parallel_options o{
        .bucket_bytes = whole, .first_bucket_bytes = whole, .algorithm = train::reduction::ordered};
    return *engines_.emplace(count, std::make_unique<train::data_parallel>(*comm_, slot, train::memory_space::host, o))
                .first->second;
  }

  std::optional<comm::communicator> comm_;
  mutable std::mutex mu_;
  std::map<std::int64_t, std::unique_ptr<train::data_parallel>> engines_;
};

}  // namespace

void bind_train(py::module_& m) {
  py::class_<ordered_allreduce>(m, "OrderedAllreduce", R"(toru's ordered, bucket-size-invariant average over the
ranks of an mpi4py communicator (toru::train::data_parallel's ordered reduction). Collective to create.)")
      .def(py::init<py::handle>(), py::arg("comm") = py::none())
      .def("average", &ordered_allreduce::average, py::arg("values"),
           R"(Collective: replaces the float32 array `values` (C-contiguous, writable, the same size on every
rank) by ((v_0 + v_1) + ... + v_{P-1}) / P, element by element in rank order, bit-identical on every rank
and independent of how the caller splits its data into calls.)")
      .def_property_readonly("size", &ordered_allreduce::size)
      .def_property_readonly("rank", &ordered_allreduce::rank)
      .def_property_readonly("engines", &ordered_allreduce::engines,
                             "Buffer lengths seen so far (one reduction engine each).");
}

}  // namespace toru::python
