// SPDX-License-Identifier: BSD-3-Clause
// The plan executor: runs a swap::plan's steps (compute, swap-out, swap-in, free) over the model's
// kernels, one compute stream (this thread) and the emulated device's two copy engines.
#include "toru/train/plan_executor.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "../model_impl.hpp"
#include "device_streams.hpp"
#include "executor_internal.hpp"
#include "toru/core/error.hpp"
#include "toru/swap/timeline.hpp"

namespace toru::train {

namespace detail {

namespace {

std::int64_t numel(const std::vector<std::int64_t>& s) {
  std::int64_t n = 1;
  for (auto e : s) n *= e;
  return n;
}

std::string gib(std::int64_t b) { return fmt::format("{:.3f} GiB", static_cast<double>(b) / (1024.0 * 1024 * 1024)); }

}  // namespace

class plan_executor_impl final : public step_executor {
 public:
  plan_executor_impl(model& m, const executor_options& o) : m_(m), mi_(model_access::get(m)), opt_(o) {}

  ~plan_executor_impl() override {
    try {
      if (dev_) dev_->synchronize();
    } catch (const std::exception&) {  // a device error already reported by the step that caused it
    }
    release_all();
  }

  void plan_for_budget() {
    auto& mem = mi_.be->memory();
    if (!mi_.opt.defer_activations)
      throw error(
          errc::invalid_argument,
          fmt::format("plan executor: model '{}': expected model_options::defer_activations = true", mi_.g.name));
    if (opt_.budget == 0) opt_.budget = mem.capacity();
    if (opt_.budget == 0)
      throw error(errc::invalid_argument,
                  "plan executor: expected a memory budget (executor_options::budget or the model's capacity)");
    if (mem.capacity() != 0 && mem.capacity() < opt_.budget)
      throw error(errc::invalid_argument,
                  fmt::format("plan executor: budget {} bytes exceeds the model's memory capacity of {} bytes",
                              opt_.budget, mem.capacity()));
    if (mi_.be->kind() == backend_kind::cuda) {
      // The hard limit on a GPU is the model's memory capacity (cudaMallocAsync from the default
      // pool, checked on every allocation): it must be the budget the plan is made for.
      if (mem.capacity() == 0 || mem.capacity() != opt_.budget)
        throw error(errc::invalid_argument,
                    fmt::format("plan executor on CUDA: expected model_options::memory_capacity equal to the budget "
                                "({} bytes), got {} bytes",
                                opt_.budget, mem.capacity()));
      if (opt_.emulated_compute)
        throw error(errc::invalid_argument,
                    "plan executor on CUDA: executor_options::emulated_compute is for the emulated device only");
      dev_ = make_cuda_streams(*mi_.be, opt_.budget);
    } else {
      dev_ = make_emulated_streams(opt_.link);
    }
    persistent_ = static_cast<std::int64_t>(mem.in_use());
    const auto budget = static_cast<std::int64_t>(opt_.budget);
    training_ = executor_training_graph(m_, opt_.split_weight_grad);

    swap::tune_options to;
    to.device = opt_.device;
    to.device.name = "emulated";
    to.device.memory_bytes = budget;
    to.device.host_memory_bytes = 0;
    to.device.d2h_bandwidth = opt_.link.d2h.bandwidth;
    to.device.h2d_bandwidth = opt_.link.h2d.bandwidth;
    to.sim.memory_fraction = 1.0;  // the arena has no fragmentation: the budget is exact
    to.sim.opt = swap::optimizer::sgd;
    // What simulate() counts as persistent, made equal to what the arena holds at rest.
    {
      const auto none = swap::make_plan(training_, swap::swap_options{});
      const auto base = swap::simulate(none, to.device, to.sim).persistent_bytes;
      to.sim.workspace_bytes = std::max<std::int64_t>(0, persistent_ - base);
    }
    if (persistent_ >= budget)
      throw error(errc::out_of_memory,
                  fmt::format("memory budget {} ({} bytes) is too small for model '{}': its parameters, gradients and "
                              "state alone take {} ({} bytes)",
                              gib(budget), budget, mi_.g.name, gib(persistent_), persistent_));
    if (opt_.fixed) {
      const auto units = swap::find_units(training_, 64, opt_.fixed->fine_units);
      const auto& chosen = opt_.fixed->recompute_units;
      auto graph = std::make_shared<const swap::graph>(
          chosen.empty() ? training_ : swap::apply_recompute(training_, units, chosen));
      tuned_.p = swap::make_plan(graph, opt_.fixed->swap);
      tuned_.p.recomputed_units = chosen;
      tuned_.recompute_units = chosen;
      tuned_.result = swap::simulate(tuned_.p, to.device, to.sim);
      const bool swaps = tuned_.result.swap_outs > 0;
      tuned_.requested = tuned_.chosen = chosen.empty() ? (swaps ? swap::strategy::swap : swap::strategy::none)
                                                        : (swaps ? swap::strategy::hybrid : swap::strategy::recompute);
      if (!tuned_.result.fits)
        throw error(errc::out_of_memory,
                    fmt::format("memory budget {} ({} bytes) is too small for model '{}' with the given plan: it needs "
                                "{} bytes (at {})",
                                gib(budget), budget, mi_.g.name, tuned_.result.peak_bytes, tuned_.result.overflow_at));
      device_ = to.device;
      sim_ = to.sim;
      prepare();
      return;
    }
    try {
      tuned_ = swap::tune(training_, opt_.strategy, to);
    } catch (const toru::error& e) {
      if (e.code() != errc::out_of_memory) throw;
      std::int64_t need = 0;
      try {
        need = swap::leanest_peak(
            training_, opt_.strategy == swap::strategy::automatic ? swap::strategy::hybrid : opt_.strategy, to);
      } catch (const toru::error&) {
      }
      throw error(errc::out_of_memory,
                  fmt::format("memory budget {} ({} bytes) is too small for model '{}' with strategy {}: the leanest "
                              "plan needs {} bytes ({:.2f} MiB) ({})",
                              gib(budget), budget, mi_.g.name, swap::to_string(opt_.strategy), need,
                              static_cast<double>(need) / (1024.0 * 1024.0), e.message()));
    }
    device_ = to.device;
    sim_ = to.sim;
    tune_ = to;
    prepare();
  }

  // Re-plans with the per-op times of the last step (calibration at the planned batch). Any plan
  // the tuner gives fits the same budget: fitting does not depend on times.
  void calibrate() {
    tune_.sim.measured_op_seconds.assign(training_.ops.size(), 0.0);
    for (std::size_t o = 0; o < training_.ops.size(); ++o)
      tune_.sim.measured_op_seconds[o] =
          std::isfinite(fastest_[o]) ? fastest_[o] : swap::op_seconds(training_, static_cast<int>(o), tune_.device);
    if (opt_.agree_times) opt_.agree_times(tune_.sim.measured_op_seconds);
    tuned_ = swap::tune(training_, opt_.strategy, tune_);
    sim_ = tune_.sim;
    calibrated_ = true;
    prepare();
  }

  // ---- per-plan tables ------------------------------------------------------------------------
  void prepare() {
    const auto& p = tuned_.p;
    const auto& g = *p.g;
    const int nfwd_t = static_cast<int>(mi_.g.tensors.size());
    original_.assign(g.tensors.size(), -1);
    for (int t = 0; t < static_cast<int>(g.tensors.size()); ++t) {
      if (t < nfwd_t) {
        original_[t] = t;
        continue;
      }
      const int pr = g.tensors[t].producer;
      if (pr >= 0 && g.ops[pr].cat == swap::category::recompute) {
        const auto& outs = g.ops[pr].outputs;
        const auto k = std::find(outs.begin(), outs.end(), t) - outs.begin();
        original_[t] = original_[g.ops[g.ops[pr].forward_op].outputs.at(static_cast<std::size_t>(k))];
      }
    }
    object_of_.assign(g.tensors.size(), -1);
    for (int k = 0; k < static_cast<int>(p.objects.size()); ++k)
      if (p.objects[k].copy == 0) object_of_[p.objects[k].tensor] = k;
    allocs_at_.assign(p.steps.size(), {});
    initial_.clear();
    for (int k = 0; k < static_cast<int>(p.objects.size()); ++k) {
      const auto& ob = p.objects[k];
      if (ob.alloc_step < 0)
        initial_.push_back(k);
      else
        allocs_at_[ob.alloc_step].push_back(k);
    }
    // The forward part: up to the first backward compute step.
    split_ = static_cast<int>(p.steps.size());
    for (int s = 0; s < static_cast<int>(p.steps.size()); ++s)
      if (p.steps[s].kind == swap::step_kind::compute && g.ops[p.steps[s].op].cat != swap::category::forward) {
        split_ = s;
        break;
      }
    for (int s = 0; s < split_; ++s)
      if (p.steps[s].kind == swap::step_kind::compute && p.steps[s].op == mi_.loss_op) loss_done_ = true;
    if (!loss_done_) throw error(errc::internal, "plan executor: the plan runs a backward op before the loss");
    planned_peak_ = swap::replay_memory(p).peak;
    dev_->prepare(p.objects.size(), g.ops.size());
  }

  // ---- step execution -------------------------------------------------------------------------
  forward_result forward(std::span<const float> input, std::span<const std::int32_t> labels,
                         const forward_options& options) override {
    check_inputs(input, labels);
    if (!options.training) return eval_forward(input, labels, options);
    abandon();
    if (!opt_.fixed && opt_.calibrate_after > 0 && !calibrated_ && steps_done_ >= opt_.calibrate_after) calibrate();
    auto& mem = mi_.be->memory();
    const auto& p = tuned_.p;
    ptr_.assign(p.objects.size(), nullptr);
    released_in_place_.assign(p.objects.size(), nullptr);
    op_seconds_.assign(p.g->ops.size(), 0.0);
    ran_.clear();
    meas_ = {};
    meas_.predicted_step_seconds = tuned_.result.step_seconds;
    meas_.calibrated = calibrated_;
    meas_.trace.budget_bytes = static_cast<std::int64_t>(opt_.budget);
    mem.reset_high_water();
    base_ = static_cast<std::int64_t>(mem.in_use());
    dev_->begin_step();
    step_ = {options.training, options.step, options.first_sample, mi_.opt.seed};
    for (int k : initial_) allocate(k);
    mi_.be->write_plain(mi_.image, input.data(), ptr_[object_of_[mi_.image]]);
    mi_.be->copy_to_device(ptr_[object_of_[mi_.labels]], labels.data(), labels.size() * sizeof(std::int32_t));
    written_.assign(mi_.slots.size(), 0);
    in_step_ = true;
    run_steps(0, split_, {});
    mi_.be->synchronize();
    mi_.trained_forward = true;
    mi_.last_step = step_;
    const auto r = static_cast<const loss_kernel&>(*mi_.kernels[mi_.loss_op]).result();
    if (!std::isfinite(r.loss))
      throw error(errc::invalid_argument,
                  fmt::format("model '{}': non-finite loss {} at step {}", mi_.g.name, r.loss, options.step));
    return r;
  }

  void backward(const std::function<void(int slot)>& ready) override {
    if (!in_step_ || !mi_.trained_forward)
      throw error(errc::invalid_argument,
                  fmt::format("model '{}' backward: expected a preceding training forward (forward_options::training)",
                              mi_.g.name));
    const auto& p = tuned_.p;
    run_steps(split_, static_cast<int>(p.steps.size()), ready);
    mi_.be->synchronize();
    // Slots no gradient reached: zeros, as the default schedule.
    for (std::size_t s = 0; s < mi_.slots.size(); ++s)
      if (!written_[s]) {
        mi_.be->fill(mi_.grads.as<float>() + mi_.slots[s].offset, 0.0f, mi_.slots[s].count);
        if (ready) ready(static_cast<int>(s));
      }
    const double end = dev_->synchronize();
    for (std::size_t k = 0; k < ptr_.size(); ++k)
      if (ptr_[k])
        throw error(errc::internal, fmt::format("plan executor: object {} ('{}') still allocated after the step", k,
                                                p.g->tensors[p.objects[k].tensor].name));
    auto& mem = mi_.be->memory();
    meas_.measured_peak = static_cast<std::int64_t>(mem.high_water()) - (base_ - 0);
    meas_.step_seconds = end;
    // Compute and copies into the trace (on a GPU their intervals are known only now).
    fastest_.resize(training_.ops.size(), std::numeric_limits<double>::infinity());
    for (const int o : ran_) {
      const auto [t0, t1] = dev_->op_interval(o);
      op_seconds_[static_cast<std::size_t>(o)] = t1 - t0;
      if (static_cast<std::size_t>(o) < fastest_.size())
        fastest_[static_cast<std::size_t>(o)] = std::min(fastest_[static_cast<std::size_t>(o)], t1 - t0);
      meas_.compute_seconds += t1 - t0;
      meas_.trace.trace.push_back({0, t0, t1, o, -1, p.g->ops[o].cat});
    }
    for (std::size_t k = 0; k < p.objects.size(); ++k) {
      if (!dev_->copied(static_cast<int>(k))) continue;
      const auto& ob = p.objects[k];
      const auto [t0, t1] = dev_->copy_interval(static_cast<int>(k));
      meas_.trace.trace.push_back({ob.copy == 0 ? 1 : 2, t0, t1, -1, static_cast<int>(k),
                                   ob.copy == 0 ? swap::category::forward : swap::category::backward});
      meas_.step_seconds = std::max(meas_.step_seconds, t1);
    }
    auto& tr = meas_.trace;
    tr.step_seconds = meas_.step_seconds;
    tr.peak_bytes = persistent_ + meas_.measured_peak;
    tr.persistent_bytes = persistent_;
    tr.stall_seconds = meas_.stall_seconds;
    tr.swapped_out_bytes = meas_.swapped_out_bytes;
    tr.swapped_in_bytes = meas_.swapped_in_bytes;
    in_step_ = false;
    mi_.trained_forward = false;
    ++steps_done_;
  }

  // ---- accessors ------------------------------------------------------------------------------
  const swap::tuned_plan& tuned() const { return tuned_; }
  std::int64_t persistent() const { return persistent_; }
  std::int64_t planned_peak() const { return planned_peak_; }
  const step_measurement& last() const { return meas_; }
  bool is_calibrated() const { return calibrated_; }

  swap::sim_result simulate_measured(bool trace) const {
    auto so = sim_;
    so.record_trace = trace;
    so.measured_op_seconds = op_seconds_;
    return swap::simulate(tuned_.p, device_, so);
  }

 private:
  double now() const { return dev_->now(); }

  void check_inputs(std::span<const float> input, std::span<const std::int32_t> labels) {
    const auto in_count = numel(mi_.g.tensors[mi_.image].shape);
    if (static_cast<std::int64_t>(input.size()) != in_count)
      throw error(errc::invalid_argument,
                  fmt::format("model '{}' input: expected {} floats, got {}", mi_.g.name, in_count, input.size()));
    const auto lab_count = numel(mi_.g.tensors[mi_.labels].shape);
    if (static_cast<std::int64_t>(labels.size()) != lab_count)
      throw error(errc::invalid_argument, fmt::format("model '{}' labels: expected {} int32 values, got {}", mi_.g.name,
                                                      lab_count, labels.size()));
    const int classes = mi_.classes();
    for (std::size_t i = 0; i < labels.size(); ++i)
      if (labels[i] < 0 || labels[i] >= classes)
        throw error(errc::invalid_argument, fmt::format("model '{}' labels[{}]: expected a class in [0, {}), got {}",
                                                        mi_.g.name, i, classes, labels[i]));
  }

  void allocate(int k) {
    const auto& ob = tuned_.p.objects[k];
    if (ob.bytes == 0) return;  // parameter gradients: the persistent flat buffer
    ptr_[k] = mi_.be->memory().allocate(static_cast<std::size_t>(ob.bytes), tuned_.p.g->tensors[ob.tensor].name);
  }

  void release(int k) {
    if (!ptr_[k]) return;
    if (in_step_ && tuned_.p.objects[k].copy > 0 && dev_->copied(k)) dev_->before_free(k);
    mi_.be->memory().deallocate(ptr_[k]);
    ptr_[k] = nullptr;
  }

  void release_all() {
    for (std::size_t k = 0; k < ptr_.size(); ++k)
      if (ptr_[k]) {
        mi_.be->memory().deallocate(ptr_[k]);
        ptr_[k] = nullptr;
      }
  }

  // A forward without its backward (an exception, or the caller skipped it): drop that step.
  void abandon() {
    dev_->synchronize();
    release_all();
    in_step_ = false;
  }

  void wait_for(int k) { meas_.stall_seconds += dev_->compute_wait(k); }

  // Pointer to what op `o` (plan graph) reads as its input position i.
  void* input_ptr(int o, std::size_t i) {
    const int obj = tuned_.p.input_objects[o][i];
    // An input released just before its in-place op: its storage is still intact (the arena's
    // accounting moved to the output, which may take over the same block).
    if (obj >= 0) return ptr_[obj] ? ptr_[obj] : released_in_place_[obj];
    const int t = tuned_.p.g->ops[o].inputs[i];
    return mi_.data[original_[t]];
  }

  void run_steps(int from, int to, const std::function<void(int)>& ready) {
    const auto& p = tuned_.p;
    const auto& g = *p.g;
    for (int s = from; s < to; ++s) {
      const auto& st = p.steps[s];
      switch (st.kind) {
        case swap::step_kind::compute: {
          const auto& o = g.ops[st.op];
          for (int obj : p.input_objects[st.op])
            if (obj >= 0 && p.objects[obj].copy > 0) wait_for(obj);
          for (int k : allocs_at_[s]) allocate(k);
          dev_->op_begin(st.op);
          compute(st.op, ready);
          for (int obj : p.input_objects[st.op])
            if (obj >= 0) released_in_place_[obj] = nullptr;
          dev_->op_end(st.op, opt_.emulated_compute ? swap::op_seconds(g, st.op, *opt_.emulated_compute) : 0.0);
          ran_.push_back(st.op);
          if (o.cat == swap::category::recompute) ++meas_.ops_recomputed;
          break;
        }
        case swap::step_kind::swap_out: {
          const auto& ob = p.objects[st.object];
          const auto bytes = static_cast<std::size_t>(ob.bytes);
          dev_->swap_out(st.object, dev_->host_buffer(st.object, bytes), ptr_[st.object], bytes);
          meas_.swapped_out_bytes += ob.bytes;
          break;
        }
        case swap::step_kind::swap_in: {
          const auto& ob = p.objects[st.object];
          for (int k : allocs_at_[s]) allocate(k);
          const auto bytes = static_cast<std::size_t>(ob.bytes);
          dev_->swap_in(st.object, ptr_[st.object], dev_->host_buffer(ob.source, bytes), bytes, ob.source);
          meas_.swapped_in_bytes += ob.bytes;
          break;
        }
        case swap::step_kind::free:
          // A swapped-out object's memory is reused from here on: its copy must have landed.
          if (st.fence || (p.objects[st.object].copy == 0 && dev_->copied(st.object))) wait_for(st.object);
          if (st.in_place) released_in_place_[st.object] = ptr_[st.object];
          release(st.object);
          break;
      }
      meas_.trace.memory.emplace_back(now(), static_cast<std::int64_t>(mi_.be->memory().in_use()));
    }
  }

  // Runs op `o` of the plan graph.
  void compute(int o, const std::function<void(int)>& ready) {
    const auto& p = tuned_.p;
    const auto& g = *p.g;
    const auto& op = g.ops[o];
    switch (op.cat) {
      case swap::category::update:
        return;  // the trainer's optimizer updates the flat buffers after the step
      case swap::category::forward:
      case swap::category::recompute: {
        const int f = op.cat == swap::category::forward ? o : op.forward_op;
        forward_args a;
        for (std::size_t i = 0; i < op.inputs.size(); ++i) a.in.push_back(input_ptr(o, i));
        for (int t : op.outputs) a.out.push_back(ptr_[object_of_[t]]);
        a.buffers = mi_.op_buffers[f];
        // A recomputation must not update the running statistics a second time: they are saved to
        // the host before it and restored after (no device memory outside the plan is needed).
        std::vector<float> saved;
        std::vector<std::size_t> counts;
        if (op.cat == swap::category::recompute && !a.buffers.empty()) {
          std::size_t n = 0;
          for (std::size_t j = 0; j < a.buffers.size(); ++j) {
            counts.push_back(static_cast<std::size_t>(buffer_count(f, j)));
            n += counts.back();
          }
          saved.resize(n);
          for (std::size_t j = 0, off = 0; j < a.buffers.size(); off += counts[j], ++j)
            mi_.be->copy_to_host(saved.data() + off, a.buffers[j], counts[j] * sizeof(float));
        }
        a.state = mi_.state[f].data();
        a.workspace = mi_.workspace.data();
        a.step = step_;
        mi_.kernels[f]->forward(a);
        for (std::size_t j = 0, off = 0; j < counts.size(); off += counts[j], ++j)
          mi_.be->copy_to_device(a.buffers[j], saved.data() + off, counts[j] * sizeof(float));
        return;
      }
      case swap::category::backward:
        break;
    }
    if (op.type == "add_n") return add_n(o);
    const int f = op.forward_op;
    const auto& fo = g.ops[f];
    // Map the tensors this op reads to the forward op's input and output positions.
    backward_args a;
    a.in.assign(fo.inputs.size(), nullptr);
    a.out.assign(fo.outputs.size(), nullptr);
    a.d_out.assign(fo.outputs.size(), nullptr);
    a.d_in.assign(fo.inputs.size(), nullptr);
    for (std::size_t i = 0; i < op.inputs.size(); ++i) {
      const int t = op.inputs[i];
      void* q = input_ptr(o, i);
      const int orig = original_[t];
      bool matched = false;
      for (std::size_t j = 0; j < fo.inputs.size(); ++j)
        if (fo.inputs[j] == orig) {
          a.in[j] = q;
          matched = true;
        }
      for (std::size_t j = 0; j < fo.outputs.size(); ++j) {
        if (fo.outputs[j] == orig) {
          a.out[j] = q;
          matched = true;
        }
        if (g.tensors[fo.outputs[j]].grad == t) {
          a.d_out[j] = q;
          matched = true;
        }
      }
      if (!matched)
        throw error(errc::internal, fmt::format("plan executor: op '{}' reads '{}', unknown to '{}'", op.name,
                                                g.tensors[t].name, fo.name));
    }
    for (std::size_t j = 0; j < fo.inputs.size(); ++j)
      if (g.tensors[fo.inputs[j]].kind == swap::tensor_kind::parameter && !a.in[j]) a.in[j] = mi_.data[fo.inputs[j]];
    if (is_relu(fo.type) && !a.in[0]) a.in[0] = a.out[0];
    std::vector<int> slots_done;
    for (int d : op.outputs) {
      const auto& dn = g.tensors[d].name;
      for (std::size_t j = 0; j < fo.inputs.size(); ++j) {
        const int x = fo.inputs[j];
        if ("d" + g.tensors[x].name != dn) continue;
        if (g.tensors[x].kind == swap::tensor_kind::parameter) {
          const int slot = mi_.slot_of[x];
          a.d_in[j] = mi_.grads.as<float>() + mi_.slots[slot].offset;
          slots_done.push_back(slot);
        } else {
          a.d_in[j] = ptr_[object_of_[d]];
        }
      }
    }
    // Outputs no gradient reached (multi-output ops): zeros, as the default schedule.
    std::vector<device_buffer> zeros;
    if (f != mi_.loss_op)
      for (std::size_t k = 0; k < fo.outputs.size(); ++k)
        if (!a.d_out[k]) {
          const int t = fo.outputs[k];
          zeros.emplace_back(mi_.be->memory(), static_cast<std::size_t>(mi_.storage_bytes[t]), "zero gradient");
          mi_.be->fill(zeros.back().as<float>(), 0.0f, mi_.storage_bytes[t] / 4);
          a.d_out[k] = zeros.back().data();
        }
    a.buffers = mi_.op_buffers[f];
    a.state = mi_.state[f].data();
    a.workspace = mi_.workspace.data();
    a.step = step_;
    mi_.kernels[f]->backward(a);
    for (int s : slots_done) {
      written_[s] = 1;
      if (ready) {
        mi_.be->synchronize();
        ready(s);
      }
    }
  }

  std::int64_t buffer_count(int f, std::size_t j) const {
    std::size_t seen = 0;
    for (const auto& b : mi_.buffer_slots)
      if (b.first_forward_op == f && seen++ == j) return b.count;
    return 0;
  }

  // Sum of partial gradients, in input order (the default schedule's accumulation order); the
  // output may share storage with an input (in-place).
  void add_n(int o) {
    const auto& g = *tuned_.p.g;
    const auto& op = g.ops[o];
    auto* out = static_cast<float*>(ptr_[object_of_[op.outputs[0]]]);
    const std::int64_t n = g.tensors[op.outputs[0]].bytes / 4;
    std::vector<const float*> in;
    for (std::size_t i = 0; i < op.inputs.size(); ++i) in.push_back(static_cast<const float*>(input_ptr(o, i)));
    const auto alias = std::find(in.begin(), in.end(), out) - in.begin();
    if (alias == 0 || (alias == 1 && in.size() == 2)) {
      // out already holds one term; a + b == b + a exactly.
      for (std::size_t i = 0; i < in.size(); ++i)
        if (static_cast<std::ptrdiff_t>(i) != alias) mi_.be->accumulate(out, in[i], n);
      return;
    }
    if (alias < static_cast<std::ptrdiff_t>(in.size()))
      throw error(errc::unsupported,
                  fmt::format("plan executor: in-place '{}' over its input {} of {}", op.name, alias, in.size()));
    if (mi_.be->kind() == backend_kind::cpu) {
      std::memcpy(out, in[0], static_cast<std::size_t>(n) * 4);
    } else {  // device memory: 0 + x == x exactly (up to the sign of a zero)
      mi_.be->fill(out, 0.0f, n);
      mi_.be->accumulate(out, in[0], n);
    }
    for (std::size_t i = 1; i < in.size(); ++i) mi_.be->accumulate(out, in[i], n);
  }

  // Inference: forward ops in order, each tensor freed after its last reader.
  forward_result eval_forward(std::span<const float> input, std::span<const std::int32_t> labels,
                              const forward_options& options) {
    abandon();
    const auto& g = mi_.g;
    auto& mem = mi_.be->memory();
    std::vector<int> last(g.tensors.size(), -1);
    for (int i = 0; i < static_cast<int>(g.ops.size()); ++i)
      for (int t : g.ops[i].inputs) last[t] = i;
    std::vector<device_buffer> buf(g.tensors.size());
    for (int t : {mi_.image, mi_.labels}) {
      buf[t] = device_buffer(mem, static_cast<std::size_t>(mi_.storage_bytes[t]), g.tensors[t].name);
      mi_.data[t] = buf[t].data();
    }
    mi_.be->write_plain(mi_.image, input.data(), buf[mi_.image].data());
    mi_.be->copy_to_device(buf[mi_.labels].data(), labels.data(), labels.size() * sizeof(std::int32_t));
    const step_info st{false, options.step, options.first_sample, mi_.opt.seed};
    for (int i = 0; i < static_cast<int>(g.ops.size()); ++i) {
      const auto& o = g.ops[i];
      for (int t : o.outputs)
        buf[t] = device_buffer(mem, static_cast<std::size_t>(mi_.storage_bytes[t]), g.tensors[t].name);
      forward_args a;
      for (int t : o.inputs) a.in.push_back(buf[t].data() ? buf[t].data() : mi_.data[t]);
      for (int t : o.outputs) a.out.push_back(buf[t].data());
      a.buffers = mi_.op_buffers[i];
      a.state = mi_.state[i].data();
      a.workspace = mi_.workspace.data();
      a.step = st;
      mi_.kernels[i]->forward(a);
      for (int t : o.inputs)
        if (last[t] == i && t != mi_.image && t != mi_.labels && g.tensors[t].producer >= 0) buf[t].reset();
    }
    mi_.be->synchronize();
    mi_.data[mi_.image] = nullptr;
    mi_.data[mi_.labels] = nullptr;
    mi_.trained_forward = false;
    return static_cast<const loss_kernel&>(*mi_.kernels[mi_.loss_op]).result();
  }

  model& m_;
  model_access::impl& mi_;
  executor_options opt_;
  std::unique_ptr<device_streams> dev_;
  swap::graph training_;
  swap::tuned_plan tuned_;
  swap::device_spec device_;
  swap::sim_options sim_;
  swap::tune_options tune_;
  bool calibrated_ = false;
  int steps_done_ = 0;
  std::int64_t persistent_ = 0, planned_peak_ = 0, base_ = 0;
  std::vector<int> original_, object_of_, initial_;
  std::vector<std::vector<int>> allocs_at_;
  int split_ = 0;
  bool loss_done_ = false;
  // Per step
  std::vector<void*> ptr_, released_in_place_;
  std::vector<double> op_seconds_;
  std::vector<int> ran_;  // compute ops in issue order
  // Per training-graph op: the fastest time measured so far. Interference on a shared host only
  // ever adds time, so the minimum over the steps before the calibration is its estimate.
  std::vector<double> fastest_;
  std::vector<char> written_;
  step_info step_;
  bool in_step_ = false;
  step_measurement meas_;
};

}  // namespace detail

std::shared_ptr<plan_executor> plan_executor::install(model& m, const executor_options& options) {
  auto impl = std::make_unique<detail::plan_executor_impl>(m, options);
  impl->plan_for_budget();
  auto ex = std::shared_ptr<plan_executor>(new plan_executor(std::move(impl)));
  // The model owns the step executor; the handle shares it.
  detail::model_access::get(m).executor = std::shared_ptr<detail::step_executor>(ex, ex->impl_.get());
  return ex;
}

plan_executor::plan_executor(std::unique_ptr<detail::plan_executor_impl> impl) : impl_(std::move(impl)) {}
plan_executor::~plan_executor() = default;

const swap::plan& plan_executor::plan() const { return impl_->tuned().p; }
const swap::tuned_plan& plan_executor::tuned() const { return impl_->tuned(); }
std::int64_t plan_executor::persistent_bytes() const { return impl_->persistent(); }
std::int64_t plan_executor::planned_peak() const { return impl_->planned_peak(); }
const step_measurement& plan_executor::last_step() const { return impl_->last(); }
bool plan_executor::calibrated() const { return impl_->is_calibrated(); }
swap::sim_result plan_executor::simulate_measured_ops() const { return impl_->simulate_measured(false); }

std::string plan_executor::timeline_svg(const std::string& title) const {
  const auto planned = impl_->simulate_measured(true);
  const auto& measured = impl_->last().trace;
  if (measured.trace.empty())
    throw error(errc::invalid_argument, "timeline: expected an executed training step, found none");
  auto planned_svg = swap::timeline_svg(plan(), planned, title + " — planned (measured op times)");
  auto measured_svg = swap::timeline_svg(plan(), measured, title + " — measured on the emulated device");
  // Two documents stacked: the outer one places each at its height.
  auto height = [](const std::string& s) {
    const auto at = s.find("height=\"");
    return std::stod(s.substr(at + 8));
  };
  const double h1 = height(planned_svg), h2 = height(measured_svg);
  std::string out =
      fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"1200\" height=\"{:.0f}\">\n", h1 + h2);
  out += planned_svg;
  measured_svg.replace(measured_svg.find("<svg "), 5, fmt::format("<svg y=\"{:.0f}\" ", h1));
  out += measured_svg;
  out += "</svg>\n";
  return out;
}

}  // namespace toru::train
