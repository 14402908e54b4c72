// SPDX-License-Identifier: BSD-3-Clause
// train_layer_bench: achieved GFlop/s of the CPU backend's kernels per layer type (forward and
// backward, what the trainer runs: primitive plus any relayout), and for every row the bare oneDNN
// primitive on data already in its layouts (what the library alone reaches, benchdnn-style, since
// Debian ships no benchdnn), so the ratio shows what the trainer adds. FLOPs: the graph's (a MAC counts 2;
// backward = data + weight gradients). A benchmark, not a test.
//
//   train_layer_bench --benchmark_min_time=0.5
#include <benchmark/benchmark.h>

#include <random>
#include <unordered_map>

#include <dnnl.hpp>

#include "backend.hpp"
#include "toru/swap/builder.hpp"
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

using swap::builder;

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

using md = dnnl::memory::desc;
using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

// The graph's FLOPs of the layer before the loss (what `run` counts), so both rates share a count.
double graph_flops(const swap::graph& g, bool backward) {
  const auto& o = g.ops[g.ops.size() - 2];
  return backward ? o.backward_flops : o.flops;
}

template <class F>
void time_loop(benchmark::State& st, dnnl::stream& s, double flops, F&& body) {
  for (auto _ : st) {
    body();
    s.wait();
  }
  st.counters["flop/s"] = benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate);
}

// The bare oneDNN convolution on data already in its preferred layouts (benchdnn-style): forward,
// or backward = backward-data + backward-weights, as the trainer's backward.
void bare_conv(benchmark::State& st, std::int64_t n, std::int64_t c, std::int64_t hw, std::int64_t k, std::int64_t cout,
               std::int64_t stride, bool backward) {
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream s(eng);
  const std::int64_t p = k / 2, out = (hw + 2 * p - k) / stride + 1;
  const md x({n, c, hw, hw}, dt::f32, tag::any), w({cout, c, k, k}, dt::f32, tag::any),
      y({n, cout, out, out}, dt::f32, tag::any);
  const auto alg = dnnl::algorithm::convolution_direct;
  dnnl::convolution_forward::primitive_desc pd(
      dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, alg, x, w, y, {stride, stride}, {p, p},
                                      {p, p}),
      eng);
  const double fwd_flops = 2.0 * static_cast<double>(n * cout * out * out * c * k * k);
  if (!backward) {
    dnnl::memory xm(pd.src_desc(), eng), wm(pd.weights_desc(), eng), ym(pd.dst_desc(), eng);
    dnnl::convolution_forward prim(pd);
    time_loop(st, s, fwd_flops, [&] {
      prim.execute(s, {{DNNL_ARG_SRC, xm}, {DNNL_ARG_WEIGHTS, wm}, {DNNL_ARG_DST, ym}});
    });
    return;
  }
  dnnl::convolution_backward_data::primitive_desc dpd(
      dnnl::convolution_backward_data::desc(alg, x, w, y, {stride, stride}, {p, p}, {p, p}), eng, pd);
  dnnl::convolution_backward_weights::primitive_desc wpd(
      dnnl::convolution_backward_weights::desc(alg, x, w, y, {stride, stride}, {p, p}, {p, p}), eng, pd);
  dnnl::memory dx(dpd.diff_src_desc(), eng), wd(dpd.weights_desc(), eng), dyd(dpd.diff_dst_desc(), eng);
  dnnl::memory xw(wpd.src_desc(), eng), dw(wpd.diff_weights_desc(), eng), dyw(wpd.diff_dst_desc(), eng);
  dnnl::convolution_backward_data bd(dpd);
  dnnl::convolution_backward_weights bw(wpd);
  time_loop(st, s, 2 * fwd_flops, [&] {
    bd.execute(s, {{DNNL_ARG_DIFF_DST, dyd}, {DNNL_ARG_WEIGHTS, wd}, {DNNL_ARG_DIFF_SRC, dx}});
    bw.execute(s, {{DNNL_ARG_SRC, xw}, {DNNL_ARG_DIFF_DST, dyw}, {DNNL_ARG_DIFF_WEIGHTS, dw}});
  });
}

// The bare oneDNN matmul y = x W^T + b (forward), dx = dy W and dW = dy^T x (backward), plain
// row-major as the trainer keeps linear layers.
void bare_linear(benchmark::State& st, std::int64_t n, std::int64_t in, std::int64_t out, bool backward) {
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream s(eng);
  const double flops = graph_flops(linear_graph(n, in, out), backward);
  auto mm = [&](const md& a, const md& b, const md& c) {
    return dnnl::matmul(dnnl::matmul::primitive_desc(dnnl::matmul::desc(a, b, c), eng));
  };
  const md x({n, in}, dt::f32, tag::ab), wt({in, out}, dt::f32, tag::ba), y({n, out}, dt::f32, tag::ab);
  dnnl::memory xm(x, eng), wm(wt, eng), ym(y, eng);
  if (!backward) {
    const md bias({1, out}, dt::f32, tag::ab);
    dnnl::memory bm(bias, eng);
    dnnl::matmul prim(dnnl::matmul::primitive_desc(dnnl::matmul::desc(x, wt, bias, y), eng));
    time_loop(st, s, flops, [&] {
      prim.execute(s, {{DNNL_ARG_SRC, xm}, {DNNL_ARG_WEIGHTS, wm}, {DNNL_ARG_BIAS, bm}, {DNNL_ARG_DST, ym}});
    });
    return;
  }
  // dx[n, in] = dy[n, out] W[out, in]; dW[out, in] = dy^T[out, n] x[n, in].
  const md w({out, in}, dt::f32, tag::ab), dyt({out, n}, dt::f32, tag::ba), dw({out, in}, dt::f32, tag::ab);
  dnnl::memory dxm(x, eng), dwm(dw, eng), wplain(w, eng);
  dnnl::memory dyt_m(dyt, eng, ym.get_data_handle());
  auto data = mm(y, w, x), weights = mm(dyt, x, dw);
  time_loop(st, s, flops, [&] {
    data.execute(s, {{DNNL_ARG_SRC, ym}, {DNNL_ARG_WEIGHTS, wplain}, {DNNL_ARG_DST, dxm}});
    weights.execute(s, {{DNNL_ARG_SRC, dyt_m}, {DNNL_ARG_WEIGHTS, xm}, {DNNL_ARG_DST, dwm}});
  });
}

// The bare oneDNN batch normalization (training statistics, scale and shift) on nChw8c data, the
// layout a convolution hands it on AVX2.
void bare_bn(benchmark::State& st, std::int64_t n, std::int64_t c, std::int64_t hw, bool backward) {
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream s(eng);
  const double flops = graph_flops(bn_graph(n, c, hw), backward);
  const md x({n, c, hw, hw}, dt::f32, tag::nChw8c), cm({c}, dt::f32, tag::a);
  using nf = dnnl::normalization_flags;
  const auto flags = nf::use_scale | nf::use_shift;
  dnnl::batch_normalization_forward::primitive_desc fpd(
      dnnl::batch_normalization_forward::desc(dnnl::prop_kind::forward_training, x, 1e-5f, flags), eng);
  dnnl::memory xm(x, eng), ym(x, eng), sc(cm, eng), sh(cm, eng), mean(cm, eng), var(cm, eng);
  dnnl::batch_normalization_forward fwd(fpd);
  std::unordered_map<int, dnnl::memory> fargs{{DNNL_ARG_SRC, xm},   {DNNL_ARG_DST, ym},    {DNNL_ARG_SCALE, sc},
                                              {DNNL_ARG_SHIFT, sh}, {DNNL_ARG_MEAN, mean}, {DNNL_ARG_VARIANCE, var}};
  if (!backward) {
    time_loop(st, s, flops, [&] { fwd.execute(s, fargs); });
    return;
  }
  fwd.execute(s, fargs);
  dnnl::batch_normalization_backward::primitive_desc bpd(
      dnnl::batch_normalization_backward::desc(dnnl::prop_kind::backward, x, x, 1e-5f, flags), eng, fpd);
  dnnl::memory dy(x, eng), dx(x, eng), dsc(cm, eng), dsh(cm, eng);
  dnnl::batch_normalization_backward bwd(bpd);
  time_loop(st, s, flops, [&] {
    bwd.execute(s, {{DNNL_ARG_SRC, xm},
                    {DNNL_ARG_MEAN, mean},
                    {DNNL_ARG_VARIANCE, var},
                    {DNNL_ARG_DIFF_DST, dy},
                    {DNNL_ARG_SCALE, sc},
                    {DNNL_ARG_SHIFT, sh},
                    {DNNL_ARG_DIFF_SRC, dx},
                    {DNNL_ARG_DIFF_SCALE, dsc},
                    {DNNL_ARG_DIFF_SHIFT, dsh}});
  });
}

}  // namespace

// ResNet-like shapes at batch 8 (kept small for the 2-core development machine).
BENCHMARK_CAPTURE(run, conv3x3_64_56_fwd, conv_graph(8, 64, 56, 3, 64, 1), false)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(run, conv3x3_64_56_bwd, conv_graph(8, 64, 56, 3, 64, 1), true)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(bare_conv, conv3x3_64_56_onednn_fwd, 8, 64, 56, 3, 64, 1, false)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(run, conv7x7s2_3_224_fwd, conv_graph(8, 3, 224, 7, 64, 2), false)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(bare_conv, conv7x7s2_3_224_onednn_fwd, 8, 3, 224, 7, 64, 2, false)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(run, conv3x3_32_28_fashion_fwd, conv_graph(64, 32, 14, 3, 64, 1), false)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(run, conv3x3_32_28_fashion_bwd, conv_graph(64, 32, 14, 3, 64, 1), true)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(bare_conv, conv3x3_32_28_fashion_onednn_fwd, 64, 32, 14, 3, 64, 1, false)
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

// The bare oneDNN figure of each remaining row (backward convolutions, linear, batch norm).
BENCHMARK_CAPTURE(bare_conv, conv3x3_64_56_onednn_bwd, 8, 64, 56, 3, 64, 1, true)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(bare_conv, conv3x3_32_28_fashion_onednn_bwd, 64, 32, 14, 3, 64, 1, true)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(bare_linear, linear_2048_1000_onednn_fwd, 64, 2048, 1000, false)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(bare_linear, linear_2048_1000_onednn_bwd, 64, 2048, 1000, true)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(bare_linear, linear_3136_128_onednn_fwd, 256, 3136, 128, false)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(bare_linear, linear_3136_128_onednn_bwd, 256, 3136, 128, true)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(bare_bn, batchnorm_64_56_onednn_fwd, 8, 64, 56, false)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(bare_bn, batchnorm_64_56_onednn_bwd, 8, 64, 56, true)->Unit(benchmark::kMillisecond)->UseRealTime();

BENCHMARK_MAIN();
