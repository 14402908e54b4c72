// SPDX-License-Identifier: BSD-3-Clause
// toru._core.SwapGraph: toru::swap's planner over a model exported to ONNX, for toru.plan
// (python/toru/memory.py). The planning is all toru::swap's; this file only converts: the forward
// ops with their ONNX node names (which carry PyTorch's module scopes), the recompute units, the
// tuned plan's decisions, and the saved-tensor bytes of a policy as PyTorch applies it.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "toru/core/error.hpp"
#include "toru/swap/graph.hpp"
#include "toru/swap/onnx_import.hpp"
#include "toru/swap/plan.hpp"
#include "toru/swap/simulate.hpp"
#include "toru/swap/tune.hpp"

namespace toru::python {
namespace {

namespace ts = toru::swap;

// A model's training graph under one memory profile, and what planning it needs.
class swap_graph {
 public:
  swap_graph(const py::bytes& onnx, const std::string& name, std::int64_t batch, const std::string& profile)
      : profile_(ts::memory_profile_preset(profile)) {
    expect(batch > 0, "batch", "a positive batch size", std::to_string(batch));
    ts::training_options t;
    ts::apply(profile_, t, sim_);
    t.batchnorm_stats = true;  // what PyTorch saves, which saved_tensors_hooks counts
    // The planner never reads initializer values; not copying them keeps a large model cheap.
    training_ =
        ts::make_training_graph(ts::import_onnx_bytes(std::string(onnx), name, {.batch = batch, .values = false}), t);
    // Block units: PyTorch re-runs whole modules, and a residual block is one; the conv-bn-relu
    // layer units of fine_units span three sibling modules.
    units_ = ts::find_units(training_, 64, false);
  }

  const ts::graph& training() const { return training_; }
  const std::vector<ts::unit>& units() const { return units_; }

  // Forward ops: (name, type, inputs, outputs, saved), tensor ids as in tensors().
  py::list forward_ops() const {
    py::list out;
    for (const auto& o : training_.ops)
      if (o.cat == ts::category::forward) out.append(py::make_tuple(o.name, o.type, o.inputs, o.outputs, o.saved));
    return out;
  }

  // Tensors: (name, bytes, is_activation).
  py::list tensors() const {
    py::list out;
    for (const auto& t : training_.tensors)
      out.append(py::make_tuple(t.name, t.bytes, t.kind == ts::tensor_kind::activation));
    return out;
  }

  // Bytes autograd holds on the device after the forward pass when the ops in `dropped` save
  // nothing (recomputed or offloaded) and the tensors in `held` are kept (a checkpoint's inputs):
  // toru::swap::saved_bytes of the graph changed so, each tensor counted once.
  std::int64_t saved_bytes(const std::vector<int>& dropped, const std::vector<int>& held) const {
    ts::graph g = training_;
    for (int i : dropped) {
      expect(i >= 0 && i < static_cast<int>(g.ops.size()), "dropped", "op ids of the graph", std::to_string(i));
      g.ops[i].saved.clear();
    }
    for (int t : held) {
      expect(t >= 0 && t < static_cast<int>(g.tensors.size()), "held", "tensor ids of the graph", std::to_string(t));
      ts::op keep;  // a forward op of no work that only saves `t`
      keep.name = "held/" + g.tensors[t].name;
      keep.saved = {t};
      g.ops.push_back(std::move(keep));
    }
    return ts::saved_bytes(g);
  }

  ts::tune_options options(const std::string& device, std::int64_t memory_bytes,
                           const std::vector<int>* recomputable) const {
    expect(memory_bytes > 0, "budget", "a positive number of bytes", std::to_string(memory_bytes));
    ts::tune_options o;
    o.device = ts::device_preset(device);
    o.device.memory_bytes = memory_bytes;
    o.sim = sim_;
    o.fine_units = false;
    if (recomputable) {
      std::set<int> ok(recomputable->begin(), recomputable->end());
      o.can_recompute = [ok = std::move(ok)](const ts::unit& u) { return ok.contains(u.id); };
    }
    return o;
  }

  std::int64_t leanest_peak(const std::string& strategy, const std::string& device,
                            const std::vector<int>& recomputable) const {
    // Any device size will do: the leanest peak does not depend on it.
    return ts::leanest_peak(training_, ts::parse_strategy(strategy),
                            options(device, std::int64_t{1} << 40, &recomputable));
  }

  py::dict tune(const std::string& strategy, const std::string& device, std::int64_t memory_bytes,
                const std::vector<int>& recomputable) const {
    const auto o = options(device, memory_bytes, &recomputable);
    ts::tuned_plan t;
    {
      py::gil_scoped_release release;  // a search of seconds on a large model
      t = ts::tune(training_, ts::parse_strategy(strategy), o);
    }
    std::vector<int> swapped;
    for (const auto& ob : t.p.objects)
      if (ob.copy == 0 && ob.swap_out_step >= 0 && ob.tensor < static_cast<int>(training_.tensors.size()))
        swapped.push_back(ob.tensor);
    py::dict d;
    d["strategy"] = std::string(ts::to_string(t.chosen));
    d["recompute_units"] = t.recompute_units;
    d["swapped_tensors"] = swapped;
    d["peak_bytes"] = t.result.peak_bytes;
    d["budget_bytes"] = t.result.budget_bytes;
    d["persistent_bytes"] = t.result.persistent_bytes;
    d["swapped_out_bytes"] = t.result.swapped_out_bytes;
    d["step_seconds"] = t.result.step_seconds;
    d["bound_seconds"] = t.result.bound_seconds;
    d["evaluations"] = t.evaluations;
    d["planning_seconds"] = t.planning_seconds;
    return d;
  }

 private:
  ts::memory_profile profile_;
  ts::sim_options sim_;
  ts::graph training_;
  std::vector<ts::unit> units_;
};

}  // namespace

void bind_swap(py::module_& m) {
  m.def("onnx_available", &ts::onnx_available, "Whether this build of toru imports ONNX.");
  m.def("device_presets", &ts::device_preset_names, "Device presets of the planner's time model.");
  m.def("memory_profiles", &ts::memory_profile_names, "Framework memory profiles (docs/swap.md).");
  py::class_<swap_graph>(m, "SwapGraph",
                         "A model's training graph for toru::swap's planner, from ONNX bytes (toru.plan uses it).")
      .def(py::init<const py::bytes&, const std::string&, std::int64_t, const std::string&>(), py::arg("onnx"),
           py::arg("name"), py::arg("batch"), py::arg("profile") = "pytorch")
      .def("forward_ops", &swap_graph::forward_ops, "[(name, type, inputs, outputs, saved)] of the forward ops.")
      .def("tensors", &swap_graph::tensors, "[(name, bytes, is_activation)] of every tensor.")
      .def(
          "units",
          [](const swap_graph& g) {
            py::list out;
            for (const auto& u : g.units()) out.append(py::make_tuple(u.id, u.ops, u.dropped, u.bytes));
            return out;
          },
          "[(id, forward op ids, dropped tensor ids, dropped bytes)]: the recompute units (block units).")
      .def("saved_bytes", &swap_graph::saved_bytes, py::arg("dropped") = std::vector<int>{},
           py::arg("held") = std::vector<int>{},
           "Bytes autograd saves in the forward pass when the `dropped` ops save nothing and `held` tensors are kept.")
      .def("leanest_peak", &swap_graph::leanest_peak, py::arg("strategy"), py::arg("device"), py::arg("recomputable"),
           "Device bytes of the leanest plan of a strategy (recomputing only the `recomputable` units).")
      .def("tune", &swap_graph::tune, py::arg("strategy"), py::arg("device"), py::arg("memory_bytes"),
           py::arg("recomputable"),
           "toru::swap::tune under `memory_bytes` of device memory, recomputing only `recomputable` units.");
}

}  // namespace toru::python
