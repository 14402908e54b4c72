// train_layer_bench: achieved GFlop/s of the CPU backend's kernels per layer type (forward and
// backward, what the trainer runs: primitive plus any relayout), and for convolution the bare
// oneDNN primitive on pre-reordered data (what the library alone reaches, benchdnn-style), so the
// ratio shows what the trainer's layout handling costs. FLOPs: the graph's (a MAC counts 2;
// backward = data + weight gradients). A benchmark, not a test.
//
//   train_layer_bench --benchmark_min_time=0.5
#include <benchmark/benchmark.h>

#include <random>

#include <dnnl.hpp>

#include "backend.hpp"
#include "builder.hpp"
#include "toru/train/device_memory.hpp"

namespace {

using namespace toru;
using train::device_buffer;
namespace td = toru::train::detail;

// One kernel over its own buffers: op `op` of `g`; the kernels before it are made only so that its
// inputs arrive in the layouts their producers choose (a batch norm after a convolution reads the
// convolution's blocked layout, as in a network).
struct harness {
  swap::graph g;
  std::unique_ptr<td::backend> be;
  std::unique_ptr<td::kernel> k;
  std::vector<device_buffer> keep;
  td::forward_args fa;
  td::backward_args ba;

  harness(swap::graph graph, int op) : g(std::move(graph)), be(td::make_cpu_backend({})) {
    std::vector<std::int64_t> storage(g.tensors.size());
    for (std::size_t t = 0; t < g.tensors.size(); ++t) storage[t] = g.tensors[t].bytes;
    for (int i = 0; i <= op; ++i) {
      k = be->make_kernel(g, i, {});
      for (std::size_t j = 0; j < g.ops[i].outputs.size(); ++j)
        storage[g.ops[i].outputs[j]] = k->output_bytes(static_cast<int>(j));
    }
    const auto& o = g.ops[op];
    auto& mem = be->memory();
    auto fill = [&](std::size_t bytes) {
      keep.emplace_back(mem, bytes, "bench");
      std::mt19937 r(7);
      std::uniform_real_distribution<float> u(-1, 1);
      for (std::size_t i = 0; i < bytes / 4; ++i) keep.back().as<float>()[i] = u(r);
      return keep.back().data();
    };
    for (int t : o.inputs) {
      fa.in.push_back(fill(static_cast<std::size_t>(storage[t])));
      ba.d_in.push_back(fill(static_cast<std::size_t>(storage[t])));
    }
    for (std::size_t i = 0; i < o.outputs.size(); ++i) {
      fa.out.push_back(fill(static_cast<std::size_t>(k->output_bytes(static_cast<int>(i)))));
      ba.d_out.push_back(fill(static_cast<std::size_t>(k->output_bytes(static_cast<int>(i)))));
    }
    for (const auto& s : k->buffer_specs())
      fa.buffers.push_back(static_cast<float*>(fill(static_cast<std::size_t>(s.count) * 4)));
    fa.state = fill(static_cast<std::size_t>(std::max<std::int64_t>(k->state_bytes(), 4)));
    fa.workspace = fill(static_cast<std::size_t>(std::max<std::int64_t>(k->workspace_bytes(), 4)));
    ba.in = fa.in;
    for (auto* p : fa.out) ba.out.push_back(p);
    ba.buffers = fa.buffers;
    ba.state = fa.state;
    ba.workspace = fa.workspace;
  }
};

using swap::detail::builder;

swap::graph conv_graph(std::int64_t n, std::int64_t c, std::int64_t hw, std::int64_t k, std::int64_t cout,
                       std::int64_t stride) {
  builder b("conv", swap::dtype::f32);
  // A 1x1 convolution first (except on 3-channel images), so that the measured one (the last) reads
  // a convolution's layout as inside a network.
  int x = b.input("image", {n, c, hw, hw});
  if (c > 3) x = b.conv(x, c, {1}, {1}, {0});
  b.loss(b.conv(x, cout, {k}, {stride}, {k / 2}));
  return std::move(b.g);
}
swap::graph linear_graph(std::int64_t n, std::int64_t in, std::int64_t out) {
  builder b("linear", swap::dtype::f32);
  b.loss(b.linear(b.input("image", {n, in}), out));
  return std::move(b.g);
}
// A 1x1 convolution first, so that the batch norm (op 1) reads a convolution's layout.
swap::graph bn_graph(std::int64_t n, std::int64_t c, std::int64_t hw) {
  builder b("bn", swap::dtype::f32);
  b.loss(b.batchnorm(b.conv(b.input("image", {n, c, hw, hw}), c, {1}, {1}, {0})));
  return std::move(b.g);
}

void run(benchmark::State& st, swap::graph g, bool backward) {
  const int op = static_cast<int>(g.ops.size()) - 2;  // the layer before the loss
  harness h(std::move(g), op);
  const double flops = backward ? h.g.ops[op].backward_flops : h.g.ops[op].flops;
  h.k->forward(h.fa);
  for (auto _ : st) {
    if (backward)
      h.k->backward(h.ba);
    else
      h.k->forward(h.fa);
  }
  st.counters["flop/s"] = benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate);
}

// The bare oneDNN forward convolution on data already in its preferred layouts.
void bare_conv(benchmark::State& st, std::int64_t n, std::int64_t c, std::int64_t hw, std::int64_t k, std::int64_t cout,
               std::int64_t stride) {
  using md = dnnl::memory::desc;
  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream s(eng);
  const std::int64_t p = k / 2, out = (hw + 2 * p - k) / stride + 1;
  const md x({n, c, hw, hw}, dt::f32, tag::any), w({cout, c, k, k}, dt::f32, tag::any),
      y({n, cout, out, out}, dt::f32, tag::any);
  dnnl::convolution_forward::primitive_desc pd(
      dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, x, w, y,
                                      {stride, stride}, {0, 0}, {p, p}, {p, p}),
      eng);
  dnnl::memory xm(pd.src_desc(), eng), wm(pd.weights_desc(), eng), ym(pd.dst_desc(), eng);
  dnnl::convolution_forward prim(pd);
  for (auto _ : st) {
    prim.execute(s, {{DNNL_ARG_SRC, xm}, {DNNL_ARG_WEIGHTS, wm}, {DNNL_ARG_DST, ym}});
    s.wait();
  }
  const double flops = 2.0 * static_cast<double>(n * cout * out * out * c * k * k);
  st.counters["flop/s"] = benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace

// ResNet-like shapes at batch 8 (kept small for the 2-core development machine).
BENCHMARK_CAPTURE(run, conv3x3_64_56_fwd, conv_graph(8, 64, 56, 3, 64, 1), false)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(run, conv3x3_64_56_bwd, conv_graph(8, 64, 56, 3, 64, 1), true)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(bare_conv, conv3x3_64_56_onednn_fwd, 8, 64, 56, 3, 64, 1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(run, conv7x7s2_3_224_fwd, conv_graph(8, 3, 224, 7, 64, 2), false)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(bare_conv, conv7x7s2_3_224_onednn_fwd, 8, 3, 224, 7, 64, 2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(run, conv3x3_32_28_fashion_fwd, conv_graph(64, 32, 14, 3, 64, 1), false)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(run, conv3x3_32_28_fashion_bwd, conv_graph(64, 32, 14, 3, 64, 1), true)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(bare_conv, conv3x3_32_28_fashion_onednn_fwd, 64, 32, 14, 3, 64, 1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(run, linear_2048_1000_fwd, linear_graph(64, 2048, 1000), false)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(run, linear_2048_1000_bwd, linear_graph(64, 2048, 1000), true)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(run, linear_3136_128_fwd, linear_graph(256, 3136, 128), false)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(run, linear_3136_128_bwd, linear_graph(256, 3136, 128), true)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(run, batchnorm_64_56_fwd, bn_graph(8, 64, 56), false)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(run, batchnorm_64_56_bwd, bn_graph(8, 64, 56), true)->Unit(benchmark::kMillisecond)->UseRealTime();

BENCHMARK_MAIN();
