// SPDX-License-Identifier: BSD-3-Clause
#include "toru/train/model.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "activation_arena.hpp"
#include "backend.hpp"
#include "model_impl.hpp"
#include "random.hpp"
#include "toru/core/error.hpp"
#include "toru/train/device_memory.hpp"
#include "toru/train/forward_hook.hpp"

namespace toru::train {

namespace {

std::int64_t numel(const std::vector<std::int64_t>& s) {
  std::int64_t n = 1;
  for (auto e : s) n *= e;
  return n;
}

// A backend library's own exception (oneDNN's dnnl::error, ...) becomes a toru::error naming the op.
template <class F>
void run_kernel(const swap::graph& g, int op, const char* pass, F&& f) {
  try {
    f();
  } catch (const toru::error&) {
    throw;
  } catch (const std::exception& e) {
    const auto& o = g.ops[static_cast<std::size_t>(op)];
    throw error(errc::internal, fmt::format("op '{}' ({}) {}: the backend failed: {}", o.name, o.type, pass, e.what()));
  }
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// model_options::share_activations: every op output's lifetime in a training step (forward op i
// at time i, backward op i at 2N - 1 - i), merged over the tensors that take one owner's bytes,
// packed into one arena. Graph outputs nothing reads stay to the end of the step.
void share_activation_memory(detail::model_access::impl& m, const std::vector<int>& owner) {
  const int N = static_cast<int>(m.g.ops.size());
  const std::size_t nt = m.g.tensors.size();
  std::vector<int> item(nt, -1);
  std::vector<detail::lifetime> life;
  for (std::size_t t = 0; t < nt; ++t) {
    if (owner[t] < 0) continue;
    const auto& ten = m.g.tensors[t];
    const int p = ten.producer;
    const auto& po = m.g.ops[static_cast<std::size_t>(p)];
    const int k =
        static_cast<int>(std::find(po.outputs.begin(), po.outputs.end(), static_cast<int>(t)) - po.outputs.begin());
    int last = p;
    if (ten.consumers.empty()) last = 2 * N;
    if (m.kernels[static_cast<std::size_t>(p)]->backward_reads_output(k)) last = std::max(last, 2 * N - 1 - p);
    for (const int c : ten.consumers) {
      last = std::max(last, c);
      const auto& in = m.g.ops[static_cast<std::size_t>(c)].inputs;
      for (std::size_t j = 0; j < in.size(); ++j)
        if (in[j] == static_cast<int>(t) &&
            m.kernels[static_cast<std::size_t>(c)]->backward_reads_input(static_cast<int>(j)))
          last = std::max(last, 2 * N - 1 - c);
    }
    auto& slot = item[static_cast<std::size_t>(owner[t])];
    if (slot < 0) {
      slot = static_cast<int>(life.size());
      life.push_back({m.storage_bytes[static_cast<std::size_t>(owner[t])], p, last});
    } else {
      auto& l = life[static_cast<std::size_t>(slot)];
      l.first = std::min(l.first, p);
      l.last = std::max(l.last, last);
    }
  }
  // Activation gradients in the same arena: tensor t's from its first write, the backward of its
  // last consumer (its first input slot reading t), to its producer's backward; every other input
  // slot reading t gets a temporary alive during that consumer's backward alone (accumulated
  // into t's at once).
  std::vector<int> grad_item(nt, -1);
  std::vector<std::vector<int>> pending_item(static_cast<std::size_t>(N));
  for (int c = 0; c < N; ++c)
    pending_item[static_cast<std::size_t>(c)].assign(m.g.ops[static_cast<std::size_t>(c)].inputs.size(), -1);
  for (std::size_t t = 0; t < nt; ++t) {
    const auto& ten = m.g.tensors[t];
    if (owner[t] < 0 || !ten.requires_grad || ten.type != swap::dtype::f32 || ten.consumers.empty()) continue;
    const int last = *std::max_element(ten.consumers.begin(), ten.consumers.end());
    const std::int64_t bytes = m.storage_bytes[t];
    grad_item[t] = static_cast<int>(life.size());
    life.push_back({bytes, 2 * N - 1 - last, 2 * N - 1 - ten.producer});
    // The consumers in backward order (an op reading t twice is listed once).
    std::vector<int> readers(ten.consumers.begin(), ten.consumers.end());
    std::sort(readers.begin(), readers.end(), std::greater<>());
    readers.erase(std::unique(readers.begin(), readers.end()), readers.end());
    bool first = true;
    for (const int c : readers) {
      const auto& in = m.g.ops[static_cast<std::size_t>(c)].inputs;
      auto& pi = pending_item[static_cast<std::size_t>(c)];
      for (std::size_t j = 0; j < in.size(); ++j) {
        if (in[j] != static_cast<int>(t)) continue;
        if (first) {
          first = false;
          continue;
        }
        pi[j] = static_cast<int>(life.size());
        life.push_back({bytes, 2 * N - 1 - c, 2 * N - 1 - c});
      }
    }
  }
  const auto layout = detail::pack_lifetimes(life, 64);
  if (layout.bytes == 0) return;
  m.activations = device_buffer(m.be->memory(), static_cast<std::size_t>(layout.bytes), "activations");
  for (std::size_t t = 0; t < nt; ++t)
    if (owner[t] == static_cast<int>(t))
      m.data[t] = m.activations.as<char>() + layout.offset[static_cast<std::size_t>(item[t])];
  auto offset = [&](int k) { return k < 0 ? std::int64_t{-1} : layout.offset[static_cast<std::size_t>(k)]; };
  m.grad_offset.assign(nt, -1);
  for (std::size_t t = 0; t < nt; ++t) m.grad_offset[t] = offset(grad_item[t]);
  m.pending_offset.assign(static_cast<std::size_t>(N), {});
  for (int c = 0; c < N; ++c)
    for (const int k : pending_item[static_cast<std::size_t>(c)])
      m.pending_offset[static_cast<std::size_t>(c)].push_back(offset(k));
}

}  // namespace

model::model(const swap::graph& forward, const model_options& options) : impl_(std::make_unique<impl>()) {
  auto& m = *impl_;
  m.g = forward;
  m.opt = options;
  for (std::size_t i = 0; i < m.g.ops.size(); ++i) {
    const auto& o = m.g.ops[i];
    if (o.cat != swap::category::forward)
      throw error(errc::invalid_argument,
                  fmt::format("model '{}': op '{}' is not a forward op; give the forward graph (before "
                              "make_training_graph)",
                              m.g.name, o.name));
    if (o.type == "loss") m.loss_op = static_cast<int>(i);
  }
  if (m.loss_op < 0)
    throw error(errc::invalid_argument, fmt::format("model '{}': expected a 'loss' op, found none", m.g.name));
  const auto& lop = m.g.ops[m.loss_op];
  if (lop.inputs.size() != 2 || m.g.tensors[lop.inputs[1]].type != swap::dtype::i32)
    throw error(
        errc::invalid_argument,
        fmt::format("model '{}': loss op '{}': expected inputs (logits, int32 class labels)", m.g.name, lop.name));
  m.labels = lop.inputs[1];
  // The image: the first graph input that is read, is not the labels and has no fixed values (ONNX
  // initializers such as running statistics or shapes have them).
  for (std::size_t t = 0; t < m.g.tensors.size(); ++t)
    if (const auto& ten = m.g.tensors[t]; ten.kind == swap::tensor_kind::input && static_cast<int>(t) != m.labels &&
                                          ten.producer < 0 && ten.init.values.empty() && !ten.consumers.empty()) {
      m.image = static_cast<int>(t);
      break;
    }
  if (m.image < 0)
    throw error(errc::invalid_argument, fmt::format("model '{}': expected an image input, found none", m.g.name));
  // Integer inputs are token ids (an embedding's indices), given to forward() as integral floats.
  if (const auto t = m.g.tensors[m.image].type; t != swap::dtype::f32 && t != swap::dtype::i32 && t != swap::dtype::i64)
    throw error(errc::unsupported,
                fmt::format("model '{}': input '{}': expected fp32, int32 or int64, got {}", m.g.name,
                            m.g.tensors[m.image].name, swap::to_string(m.g.tensors[m.image].type)));

  // Parameter slots, ordered by the forward op that first reads them.
  const std::size_t nt = m.g.tensors.size();
  m.slot_of.assign(nt, -1);
  for (std::size_t i = 0; i < m.g.ops.size(); ++i)
    for (int t : m.g.ops[i].inputs) {
      const auto& ten = m.g.tensors[t];
      if (ten.kind != swap::tensor_kind::parameter || m.slot_of[t] >= 0) continue;
      if (ten.type != swap::dtype::f32)
        throw error(errc::unsupported, fmt::format("model '{}': parameter '{}': expected fp32, got {}", m.g.name,
                                                   ten.name, swap::to_string(ten.type)));
      parameter_slot s{ten.name, ten.shape, m.nparams, numel(ten.shape), static_cast<int>(i)};
      m.nparams += s.count;
      m.slot_of[t] = static_cast<int>(m.slots.size());
      m.slots.push_back(std::move(s));
    }

  const double eps = options.label_smoothing;
  if (!(eps >= 0 && eps < 1))
    throw error(errc::invalid_argument, fmt::format("label_smoothing: expected a value in [0, 1), got {}", eps));
  switch (options.backend) {
    case backend_kind::cpu:
      m.be = detail::make_cpu_backend(options);
      break;
    case backend_kind::cuda:
      m.be = detail::make_cuda_backend(options);
      break;
  }
  auto& mem = m.be->memory();

  // Kernels in forward order (they learn their inputs' layouts from their producers).
  m.kernels.resize(m.g.ops.size());
  std::vector<std::vector<detail::buffer_spec>> specs(m.g.ops.size());
  for (std::size_t i = 0; i < m.g.ops.size(); ++i) {
    m.kernels[i] = m.be->make_kernel(m.g, static_cast<int>(i), options);
    if (static_cast<int>(i) == m.loss_op && eps != 0)
      static_cast<detail::loss_kernel&>(*m.kernels[i]).set_label_smoothing(eps);
    specs[i] = m.kernels[i]->buffer_specs();
    for (const auto& s : specs[i]) m.nbuffers += s.count;
  }

  const auto f = sizeof(float);
  m.params = device_buffer(mem, static_cast<std::size_t>(m.nparams) * f, "parameters");
  m.grads = device_buffer(mem, static_cast<std::size_t>(m.nparams) * f, "parameter gradients");
  m.buffers = device_buffer(mem, static_cast<std::size_t>(m.nbuffers) * f, "buffers (running statistics)");
  m.be->fill(m.grads.as<float>(), 0.0f, m.nparams);

  // Initial parameters, on the host, from the graph's initialisers and the seed.
  {
    std::vector<float> host(static_cast<std::size_t>(m.nparams));
    for (std::size_t k = 0; k < m.slots.size(); ++k) {
      const auto& s = m.slots[k];
      const auto& ten =
          m.g.tensors[std::find(m.slot_of.begin(), m.slot_of.end(), static_cast<int>(k)) - m.slot_of.begin()];
      float* p = host.data() + s.offset;
      const auto& in = ten.init;
      if (!in.values.empty()) {
        if (static_cast<std::int64_t>(in.values.size()) != s.count)
          throw error(errc::invalid_argument, fmt::format("parameter '{}': expected {} initial values, got {}", s.name,
                                                          s.count, in.values.size()));
        std::copy(in.values.begin(), in.values.end(), p);
        continue;
      }
      switch (in.kind) {
        case swap::init_kind::none:
        case swap::init_kind::zeros:
          std::fill(p, p + s.count, 0.0f);
          break;
        case swap::init_kind::ones:
          std::fill(p, p + s.count, 1.0f);
          break;
        case swap::init_kind::uniform: {
          const auto b = static_cast<float>(in.bound);
          for (std::int64_t e = 0; e < s.count; ++e)
            p[e] = b * (2.0f * detail::uniform01(detail::hash(options.seed, 0x1417, k, static_cast<std::uint64_t>(e))) -
                        1.0f);
          break;
        }
      }
    }
    m.be->copy_to_device(m.params.data(), host.data(), host.size() * f);
  }

  // Buffers (running statistics), per op.
  {
    std::vector<float> host(static_cast<std::size_t>(m.nbuffers));
    m.op_buffers.resize(m.g.ops.size());
    std::int64_t off = 0;
    for (std::size_t i = 0; i < m.g.ops.size(); ++i)
      for (const auto& s : specs[i]) {
        float* p = host.data() + off;
        const auto* init = s.graph_tensor >= 0 ? &m.g.tensors[s.graph_tensor].init.values : nullptr;
        if (init && static_cast<std::int64_t>(init->size()) == s.count)
          std::copy(init->begin(), init->end(), p);
        else
          std::fill(p, p + s.count, s.fill);
        m.op_buffers[i].push_back(m.buffers.as<float>() + off);
        m.buffer_slots.push_back({s.name, {s.count}, off, s.count, static_cast<int>(i)});
        off += s.count;
      }
    m.be->copy_to_device(m.buffers.data(), host.data(), host.size() * f);
  }

  // Storage: graph inputs (plain) and every op output (the kernel's layout); parameters live in the
  // flat buffer.
  m.storage.resize(nt);
  m.data.assign(nt, nullptr);
  m.storage_bytes.assign(nt, 0);
  for (std::size_t t = 0; t < nt; ++t) {
    const auto& ten = m.g.tensors[t];
    if (ten.kind == swap::tensor_kind::parameter) {
      if (m.slot_of[t] >= 0) m.data[t] = m.params.as<float>() + m.slots[m.slot_of[t]].offset;
      m.storage_bytes[t] = ten.bytes;
    } else if (ten.producer < 0) {
      m.storage_bytes[t] = ten.bytes;
      // The step's images and labels come and go with the step under an executor.
      if (options.defer_activations && (static_cast<int>(t) == m.image || static_cast<int>(t) == m.labels)) continue;
      m.storage[t] = device_buffer(mem, static_cast<std::size_t>(ten.bytes), ten.name);
      m.data[t] = m.storage[t].data();
      m.storage_bytes[t] = ten.bytes;
      if (!ten.init.values.empty() && ten.type == swap::dtype::f32 &&
          static_cast<std::int64_t>(ten.init.values.size()) * 4 == ten.bytes)
        m.be->copy_to_device(m.data[t], ten.init.values.data(), static_cast<std::size_t>(ten.bytes));
    }
  }
  // The input ReLU op i may overwrite (model_options::in_place_relu), or -1: an op output read by
  // this ReLU alone, whose producer's backward does not read it.
  auto in_place_relu_input = [&m](int i) {
    const auto& o = m.g.ops[static_cast<std::size_t>(i)];
    if (!m.opt.in_place_relu || m.opt.backend != backend_kind::cpu || !detail::is_relu(o.type) ||
        o.inputs.size() != 1 || o.outputs.size() != 1)
      return -1;
    const int x = o.inputs[0];
    const auto& ten = m.g.tensors[static_cast<std::size_t>(x)];
    if (ten.producer < 0 || ten.consumers.size() != 1 || ten.type != swap::dtype::f32) return -1;
    const auto& p = m.g.ops[static_cast<std::size_t>(ten.producer)];
    const auto k = std::find(p.outputs.begin(), p.outputs.end(), x) - p.outputs.begin();
    return m.kernels[static_cast<std::size_t>(ten.producer)]->backward_reads_output(static_cast<int>(k)) ? -1 : x;
  };
  std::int64_t ws = 0;
  m.state.resize(m.g.ops.size());
  // Each op output's bytes, and whose bytes it takes (an in-place ReLU's output: its input's).
  std::vector<int> owner(nt, -1);
  for (std::size_t i = 0; i < m.g.ops.size(); ++i) {
    const auto& o = m.g.ops[i];
    for (std::size_t k = 0; k < o.outputs.size(); ++k) {
      const int t = o.outputs[k];
      const auto bytes = m.kernels[i]->output_bytes(static_cast<int>(k));
      m.storage_bytes[t] = bytes;
      owner[t] = t;
      if (const int src = in_place_relu_input(static_cast<int>(i)); src >= 0 && m.storage_bytes[src] == bytes)
        owner[t] = owner[src];
    }
  }
  if (!options.defer_activations) {
    if (options.share_activations)
      share_activation_memory(m, owner);
    else
      for (std::size_t t = 0; t < nt; ++t)
        if (owner[t] == static_cast<int>(t)) {
          m.storage[t] = device_buffer(mem, static_cast<std::size_t>(m.storage_bytes[t]), m.g.tensors[t].name);
          m.data[t] = m.storage[t].data();
        }
    for (std::size_t t = 0; t < nt; ++t)
      if (owner[t] >= 0 && owner[t] != static_cast<int>(t)) m.data[t] = m.data[static_cast<std::size_t>(owner[t])];
  }
  for (std::size_t i = 0; i < m.g.ops.size(); ++i) {
    const auto& o = m.g.ops[i];
    if (const auto sb = m.kernels[i]->state_bytes(); sb > 0)
      m.state[i] = device_buffer(mem, static_cast<std::size_t>(sb), o.name + "/state");
    ws = std::max(ws, m.kernels[i]->workspace_bytes());
  }
  if (ws > 0) m.workspace = device_buffer(mem, static_cast<std::size_t>(ws), "workspace");
  m.times.resize(m.g.ops.size());
  for (std::size_t i = 0; i < m.times.size(); ++i) m.times[i].op = static_cast<int>(i);
  // The initialisers are in the parameters, buffers and inputs now; the graph the model keeps
  // (graph()) needs only their shapes. An imported ViT-B/16 carries 343 MB of them.
  for (auto& t : m.g.tensors) std::vector<float>().swap(t.init.values);
}

model::~model() = default;
model::model(model&&) noexcept = default;
model& model::operator=(model&&) noexcept = default;

const swap::graph& model::graph() const { return impl_->g; }
std::int64_t model::batch() const { return impl_->batch(); }
std::vector<std::int64_t> model::input_shape() const { return impl_->g.tensors[impl_->image].shape; }
int model::classes() const { return impl_->classes(); }
const std::vector<parameter_slot>& model::parameters() const { return impl_->slots; }
std::int64_t model::parameter_count() const { return impl_->nparams; }
memory_space model::space() const { return impl_->be->memory().space(); }
std::span<float> model::parameter_data() {
  return {impl_->params.as<float>(), static_cast<std::size_t>(impl_->nparams)};
}
std::span<float> model::gradient_data() { return {impl_->grads.as<float>(), static_cast<std::size_t>(impl_->nparams)}; }
std::span<float> model::buffer_data() {
  return {impl_->buffers.as<float>(), static_cast<std::size_t>(impl_->nbuffers)};
}
const std::vector<parameter_slot>& model::buffers() const { return impl_->buffer_slots; }
const std::vector<op_time>& model::op_times() const { return impl_->times; }
device_memory& model::memory() { return impl_->be->memory(); }

std::vector<float> model::read_tensor(std::string_view name) {
  auto& m = *impl_;
  for (std::size_t t = 0; t < m.g.tensors.size(); ++t) {
    const auto& ten = m.g.tensors[t];
    if (ten.name != name || ten.type != swap::dtype::f32 || !m.data[t]) continue;
    std::vector<float> host(static_cast<std::size_t>(numel(ten.shape)));
    if (ten.kind == swap::tensor_kind::parameter)
      m.be->copy_to_host(host.data(), m.data[t], host.size() * sizeof(float));
    else
      m.be->read_plain(static_cast<int>(t), m.data[t], host.data());
    return host;
  }
  throw error(
      errc::invalid_argument,
      fmt::format("model '{}' tensor: expected the name of an fp32 tensor of the graph, got '{}'", m.g.name, name));
}

void set_forward_hook(model& m, std::function<void(int op)> hook) {
  detail::model_access::get(m).forward_hook = std::move(hook);
}

void model::parameters_changed() {
  for (auto& k : impl_->kernels) k->parameters_changed();
}

forward_result model::forward(std::span<const float> input, std::span<const std::int32_t> labels,
                              const forward_options& options) {
  auto& m = *impl_;
  if (m.executor) {
    if (m.forward_hook)
      for (std::size_t i = 0; i < m.g.ops.size(); ++i) m.forward_hook(static_cast<int>(i));
    return m.executor->forward(input, labels, options);
  }
  if (m.opt.defer_activations)
    throw error(errc::invalid_argument,
                fmt::format("model '{}': activations are deferred (model_options::defer_activations); install an "
                            "executor (plan_executor) first",
                            m.g.name));
  const auto& img = m.g.tensors[m.image];
  const auto in_count = numel(img.shape);
  if (static_cast<std::int64_t>(input.size()) != in_count)
    throw error(errc::invalid_argument, fmt::format("model '{}' input: expected {} floats (shape [{}]), got {}",
                                                    m.g.name, in_count, fmt::join(img.shape, ","), input.size()));
  const auto& lab = m.g.tensors[m.labels];
  const auto lab_count = numel(lab.shape);
  if (static_cast<std::int64_t>(labels.size()) != lab_count)
    throw error(errc::invalid_argument, fmt::format("model '{}' labels: expected {} int32 values (shape [{}]), got {}",
                                                    m.g.name, lab_count, fmt::join(lab.shape, ","), labels.size()));
  const int classes = m.classes();
  for (std::size_t i = 0; i < labels.size(); ++i)
    if (labels[i] < 0 || labels[i] >= classes)
      throw error(errc::invalid_argument, fmt::format("model '{}' labels[{}]: expected a class in [0, {}), got {}",
                                                      m.g.name, i, classes, labels[i]));

  m.be->write_plain(m.image, input.data(), m.data[m.image]);
  m.be->copy_to_device(m.data[m.labels], labels.data(), labels.size() * sizeof(std::int32_t));

  detail::step_info step{options.training, options.step, options.first_sample, m.opt.seed};
  auto args_of = [&](std::size_t i) {
    const auto& o = m.g.ops[i];
    detail::forward_args a;
    for (int t : o.inputs) a.in.push_back(m.data[t]);
    for (int t : o.outputs) a.out.push_back(m.data[t]);
    a.buffers = m.op_buffers[i];
    a.state = m.state[i].data();
    a.workspace = m.workspace.data();
    a.step = step;
    return a;
  };
  for (std::size_t i = 0; i < m.g.ops.size(); ++i) {
    const detail::forward_args a = args_of(i);
    if (m.forward_hook) m.forward_hook(static_cast<int>(i));
    const auto t0 = std::chrono::steady_clock::now();
    run_kernel(m.g, static_cast<int>(i), "forward", [&] { m.kernels[i]->forward(a); });
    m.times[i] = {static_cast<int>(i), seconds_since(t0), 0.0};
  }
  m.be->synchronize();
  m.trained_forward = options.training;
  m.last_step = step;
  const auto r = static_cast<const detail::loss_kernel&>(*m.kernels[m.loss_op]).result();
  if (!std::isfinite(r.loss)) {
    // Name the first op whose output is not finite. Outputs that share memory were overwritten by
    // later ones: then the ops run again, each output checked as soon as it is made (the step
    // fails anyway; a batch norm's running statistics take this second update too).
    for (std::size_t i = 0; i < m.g.ops.size(); ++i) {
      if (m.activations.data()) {
        const detail::forward_args a = args_of(i);
        run_kernel(m.g, static_cast<int>(i), "forward", [&] { m.kernels[i]->forward(a); });
        m.be->synchronize();
      }
      for (int t : m.g.ops[i].outputs) {
        const auto& ten = m.g.tensors[t];
        if (ten.type != swap::dtype::f32) continue;
        std::vector<float> host(static_cast<std::size_t>(numel(ten.shape)));
        m.be->read_plain(t, m.data[t], host.data());
        const auto bad = std::find_if(host.begin(), host.end(), [](float v) { return !std::isfinite(v); });
        if (bad != host.end())
          throw error(errc::invalid_argument,
                      fmt::format("model '{}': non-finite loss at step {}: op '{}' ({}) produced {} at element {} of "
                                  "'{}'",
                                  m.g.name, options.step, m.g.ops[i].name, m.g.ops[i].type, *bad, bad - host.begin(),
                                  ten.name));
      }
    }
    throw error(errc::invalid_argument,
                fmt::format("model '{}': non-finite loss {} at step {}", m.g.name, r.loss, options.step));
  }
  return r;
}

void model::backward(const std::function<void(int slot)>& ready) {
  auto& m = *impl_;
  if (m.executor) return m.executor->backward(ready);
  if (!m.trained_forward)
    throw error(errc::invalid_argument,
                fmt::format("model '{}' backward: expected a preceding training forward (forward_options::training)",
                            m.g.name));
  auto& mem = m.be->memory();
  const std::size_t nt = m.g.tensors.size();
  // Activation gradients, alive from first write to the producer's backward: in the shared arena
  // where share_activation_memory placed them, else allocated here.
  std::vector<void*> grad(nt, nullptr);
  std::vector<device_buffer> grad_owned(nt);
  auto planned = [&](std::int64_t off) {
    return off >= 0 ? static_cast<void*>(m.activations.as<char>() + off) : nullptr;
  };
  std::vector<char> param_written(m.slots.size(), 0);
  // Slots become final at their first reader's backward; readers are visited in reverse order.
  std::vector<std::vector<int>> ready_at(m.g.ops.size());
  for (std::size_t k = 0; k < m.slots.size(); ++k) ready_at[m.slots[k].first_forward_op].push_back(static_cast<int>(k));

  for (int i = static_cast<int>(m.g.ops.size()) - 1; i >= 0; --i) {
    const auto& o = m.g.ops[i];
    detail::backward_args a;
    bool any_dout = i == m.loss_op;
    for (int t : o.inputs) a.in.push_back(m.data[t]);
    for (int t : o.outputs) {
      a.out.push_back(m.data[t]);
      a.d_out.push_back(grad[t]);
      any_dout = any_dout || grad[t] != nullptr;
    }
    // Temporaries for gradients that must be accumulated into an existing one.
    std::vector<std::pair<int, void*>> pending;
    std::vector<device_buffer> pending_owned;
    std::vector<std::pair<int, device_buffer>> pending_param;
    for (std::size_t j = 0; j < o.inputs.size(); ++j) {
      const int t = o.inputs[j];
      const auto& ten = m.g.tensors[t];
      void* d = nullptr;
      if (any_dout && ten.requires_grad && ten.type == swap::dtype::f32) {
        if (ten.kind == swap::tensor_kind::parameter) {
          const int s = m.slot_of[t];
          float* dst = m.grads.as<float>() + m.slots[s].offset;
          if (!param_written[s]) {
            d = dst;
          } else {
            pending_param.emplace_back(s, device_buffer(mem, static_cast<std::size_t>(ten.bytes), ten.name + "/grad"));
            d = pending_param.back().second.data();
          }
        } else if (!grad[t]) {
          grad[t] = m.grad_offset.empty() ? nullptr : planned(m.grad_offset[t]);
          if (!grad[t]) {
            grad_owned[t] = device_buffer(mem, static_cast<std::size_t>(m.storage_bytes[t]), ten.name + "/grad");
            grad[t] = grad_owned[t].data();
          }
          d = grad[t];
        } else {
          d = m.pending_offset.empty() ? nullptr : planned(m.pending_offset[static_cast<std::size_t>(i)][j]);
          if (!d) {
            pending_owned.emplace_back(mem, static_cast<std::size_t>(m.storage_bytes[t]), ten.name + "/grad");
            d = pending_owned.back().data();
          }
          pending.emplace_back(t, d);
        }
      }
      a.d_in.push_back(d);
    }
    if (any_dout) {
      a.buffers = m.op_buffers[i];
      a.state = m.state[i].data();
      a.workspace = m.workspace.data();
      a.step = m.last_step;
      // The loss seeds the chain; other ops' missing output gradients are zeros.
      std::vector<device_buffer> zeros;
      if (i != m.loss_op)
        for (std::size_t k = 0; k < o.outputs.size(); ++k)
          if (!a.d_out[k]) {
            const int t = o.outputs[k];
            zeros.emplace_back(mem, static_cast<std::size_t>(m.storage_bytes[t]), m.g.tensors[t].name + "/grad");
            m.be->fill(zeros.back().as<float>(), 0.0f, m.storage_bytes[t] / 4);
            a.d_out[k] = zeros.back().data();
          }
      const auto t0 = std::chrono::steady_clock::now();
      run_kernel(m.g, i, "backward", [&] { m.kernels[i]->backward(a); });
      m.times[i].backward_seconds = seconds_since(t0);
      for (auto& [t, b] : pending)
        m.be->accumulate(static_cast<float*>(grad[t]), static_cast<const float*>(b), m.storage_bytes[t] / 4);
      for (auto& [s, b] : pending_param)
        m.be->accumulate(m.grads.as<float>() + m.slots[s].offset, b.as<float>(), m.slots[s].count);
      for (std::size_t k = 0; k < o.inputs.size(); ++k)
        if (const int t = o.inputs[k]; m.slot_of[t] >= 0 && a.d_in[k]) param_written[m.slot_of[t]] = 1;
    }
    for (int t : o.outputs) {
      grad_owned[t].reset();
      grad[t] = nullptr;
    }
    for (int s : ready_at[i]) {
      if (!param_written[s]) m.be->fill(m.grads.as<float>() + m.slots[s].offset, 0.0f, m.slots[s].count);
      param_written[s] = 1;
      if (ready) {
        m.be->synchronize();
        ready(s);
      }
    }
  }
  m.be->synchronize();
}

void detail::loss_kernel::set_label_smoothing(double eps) {
  throw error(
      errc::unsupported,
      fmt::format("label_smoothing {}: this backend's loss has no label smoothing (the CPU backend's has)", eps));
}

}  // namespace toru::train
