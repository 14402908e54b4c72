// SPDX-License-Identifier: BSD-3-Clause
// The CUDA backend (cuDNN + cuBLAS, train/src/cuda/) against the oneDNN CPU backend on the same
// graphs, weights, inputs and labels: every layer case of cases.hpp (forward loss and top-1 hits,
// the gradient of every parameter and of the layer's input, the batch-norm running statistics after
// the step, and an inference forward; ceil-mode max pooling included), dropout (the same
// counter-based mask on both), a ResNet
// basic block, and a whole Fashion-MNIST CNN training step (forward, backward, SGD update, second
// forward and backward). Plus the device memory's capacity and high-water mark, determinism, and
// the no-device error.
//
// Every test but `no_device` needs a GPU and is skipped (reported skipped by CTest) without one;
// `no_device` runs in a second registration with every device hidden (CUDA_VISIBLE_DEVICES=).
//
// Tolerance: norm-wise relative error 1e-4 between the backends. Both compute in fp32 (no TF32:
// cuDNN is restricted to FMA-math algorithms, cuBLAS stays in default math), but with different
// algorithms and summation orders (Winograd/FFT/implicit-GEMM convolutions, tree reductions), so
// they agree to fp32 reassociation error, not bit for bit.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "cases.hpp"
#include "cuda/cuda_context.hpp"  // train/src: the backend's device and memory, for the allocator test
#include "toru/core/device.hpp"
#include "toru/core/error.hpp"
#include "toru/train/device_memory.hpp"
#include "toru/train/model.hpp"
#include "util.hpp"

namespace toru::train::test {
namespace {

constexpr double tolerance = 1e-4;

#define TORU_REQUIRE_GPU()                                                                        \
  do {                                                                                            \
    if (toru::gpu_count() == 0) GTEST_SKIP() << "no CUDA device: " << toru::gpu_absence_reason(); \
  } while (0)

std::vector<float> to_host(std::span<float> s, memory_space space) {
  std::vector<float> h(s.size());
  if (s.empty()) return h;
  if (space == memory_space::host) {
    std::memcpy(h.data(), s.data(), s.size_bytes());
  } else {
    const cudaError_t rc = cudaMemcpy(h.data(), s.data(), s.size_bytes(), cudaMemcpyDeviceToHost);
    EXPECT_EQ(rc, cudaSuccess) << cudaGetErrorString(rc);
  }
  return h;
}

void from_host(std::span<float> s, const std::vector<float>& h, memory_space space) {
  ASSERT_EQ(s.size(), h.size());
  if (s.empty()) return;
  if (space == memory_space::host) {
    std::memcpy(s.data(), h.data(), s.size_bytes());
  } else {
    const cudaError_t rc = cudaMemcpy(s.data(), h.data(), s.size_bytes(), cudaMemcpyHostToDevice);
    ASSERT_EQ(rc, cudaSuccess) << cudaGetErrorString(rc);
  }
}

std::int64_t label_count(const swap::graph& g) {
  for (const auto& t : g.tensors)
    if (t.name == "labels") return count(t.shape);
  return 0;
}

struct step_data {
  std::vector<float> input;
  std::vector<std::int32_t> labels;
};

step_data make_data(const model& m, std::uint64_t seed) {
  return {random_floats(static_cast<std::size_t>(count(m.input_shape())), seed),
          random_labels(static_cast<std::size_t>(label_count(m.graph())), m.classes(), seed + 1)};
}

struct outcome {
  forward_result r;
  std::vector<float> grads, buffers, params;
};

outcome observe(model& m, const forward_result& r) {
  return {r, to_host(m.gradient_data(), m.space()), to_host(m.buffer_data(), m.space()),
          to_host(m.parameter_data(), m.space())};
}

/// One training forward and backward on `m`.
outcome train_step(model& m, const step_data& d, std::uint64_t step) {
  const auto r = m.forward(d.input, d.labels, {.training = true, .step = step, .first_sample = 5});
  m.backward();
  return observe(m, r);
}

void expect_close(const outcome& gpu, const outcome& cpu, const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_NEAR(gpu.r.loss, cpu.r.loss, tolerance * std::max(1.0, std::abs(cpu.r.loss)));
  EXPECT_EQ(gpu.r.correct, cpu.r.correct);
  EXPECT_LT(rel_error(gpu.grads, cpu.grads), tolerance) << "parameter (and input) gradients";
  EXPECT_LT(rel_error(gpu.buffers, cpu.buffers), tolerance) << "running statistics";
}

/// The same training step and inference forward on both backends.
void compare_backends(const swap::graph& g, const std::string& name) {
  model cpu(g, {.backend = backend_kind::cpu, .seed = 7});
  model gpu(g, {.backend = backend_kind::cuda, .seed = 7});
  ASSERT_EQ(gpu.space(), memory_space::device);
  ASSERT_EQ(gpu.parameter_count(), cpu.parameter_count());
  EXPECT_EQ(to_host(gpu.parameter_data(), gpu.space()), to_host(cpu.parameter_data(), cpu.space()))
      << name << ": the initial parameters must be identical (same seed)";
  const auto d = make_data(cpu, 3);
  expect_close(train_step(gpu, d, 2), train_step(cpu, d, 2), name + " (training step)");
  const auto rc = cpu.forward(d.input, d.labels, {.training = false});
  const auto rg = gpu.forward(d.input, d.labels, {.training = false});
  EXPECT_NEAR(rg.loss, rc.loss, tolerance * std::max(1.0, std::abs(rc.loss))) << name << " (inference forward)";
  EXPECT_EQ(rg.correct, rc.correct) << name << " (inference forward)";
}

TEST(cuda_backend, every_layer_matches_the_cpu_backend) {
  TORU_REQUIRE_GPU();
  for (const auto& c : layer_cases()) {
    SCOPED_TRACE(c.name);
    const auto g = c.make();
    compare_backends(g, c.name);
  }
}

// cuDNN pads symmetrically: ceil-mode max pooling runs on an explicitly padded input (a layer case
// above), ceil-mode average pooling, whose divisor depends on the padding, is refused by name.
TEST(cuda_backend, ceil_mode_average_pooling_is_refused) {
  TORU_REQUIRE_GPU();
  builder b("avgpool_ceil", swap::dtype::f32);
  const auto g = finish(b, b.flatten(b.avgpool(input_param(b, {1, 3, 7, 7}), 2, 2, 0, true)));
  try {
    model m(g, {.backend = backend_kind::cuda, .seed = 7});
    ADD_FAILURE() << "ceil-mode average pooling accepted by the CUDA backend";
  } catch (const toru::error& e) {
    EXPECT_EQ(e.code(), errc::unsupported) << e.what();
    EXPECT_NE(e.message().find("ceil mode"), std::string::npos) << e.message();
  }
}

// The builders' batched matmul has no CPU kernel: checked against a host computation of the
// loss and of both gradients (A = image + x through the add, B a parameter, batched or shared).
void check_matmul(bool b_batched) {
  constexpr std::int64_t batch = 2, M = 3, K = 4, N = 5;
  builder bl("matmul", swap::dtype::f32);
  const int a = input_param(bl, {batch, M, K});
  const int bp = bl.param("b", b_batched ? std::vector<std::int64_t>{batch, K, N} : std::vector<std::int64_t>{K, N});
  bl.g.tensors[static_cast<std::size_t>(bp)].init = {swap::init_kind::uniform, 0.5, {}};
  const auto g = finish(bl, bl.matmul(a, bp, {batch, M, N}, double(batch * M * N * K)), -1);
  model m(g, {.backend = backend_kind::cuda, .seed = 13});
  const auto d = make_data(m, 8);
  const auto o = train_step(m, d, 0);
  const auto& sx = m.parameters().at(0);
  const auto& sb = m.parameters().at(1);
  ASSERT_EQ(sx.name, "x");
  ASSERT_EQ(sb.name, "b");
  std::vector<double> A(batch * M * K), B(static_cast<std::size_t>(sb.count)), dA(A.size(), 0), dB(B.size(), 0);
  for (std::size_t i = 0; i < A.size(); ++i) A[i] = double(d.input[i]) + o.params[sx.offset + i];
  for (std::size_t i = 0; i < B.size(); ++i) B[i] = o.params[static_cast<std::size_t>(sb.offset) + i];
  double loss = 0;
  const double rows = batch * M;
  for (std::int64_t t = 0; t < batch; ++t)
    for (std::int64_t i = 0; i < M; ++i) {
      std::vector<double> c(N, 0);
      const std::int64_t bo = b_batched ? t * K * N : 0;
      for (std::int64_t n = 0; n < N; ++n)
        for (std::int64_t k = 0; k < K; ++k) c[n] += A[(t * M + i) * K + k] * B[bo + k * N + n];
      double mx = c[0], sum = 0;
      for (double v : c) mx = std::max(mx, v);
      for (double v : c) sum += std::exp(v - mx);
      const int label = d.labels[t * M + i];
      loss += (std::log(sum) + mx - c[label]) / rows;
      for (std::int64_t n = 0; n < N; ++n) {
        const double dc = (std::exp(c[n] - mx) / sum - (n == label ? 1 : 0)) / rows;
        for (std::int64_t k = 0; k < K; ++k) {
          dA[(t * M + i) * K + k] += dc * B[bo + k * N + n];
          dB[bo + k * N + n] += dc * A[(t * M + i) * K + k];
        }
      }
    }
  EXPECT_NEAR(o.r.loss, loss, 1e-5 * std::max(1.0, loss));
  const std::vector<float> gx(o.grads.begin() + sx.offset, o.grads.begin() + sx.offset + sx.count);
  const std::vector<float> gb(o.grads.begin() + sb.offset, o.grads.begin() + sb.offset + sb.count);
  EXPECT_LT(rel_error(gx, std::vector<float>(dA.begin(), dA.end())), tolerance) << "dA";
  EXPECT_LT(rel_error(gb, std::vector<float>(dB.begin(), dB.end())), tolerance) << "dB";
}

TEST(cuda_backend, batched_matmul_matches_a_host_reference) {
  TORU_REQUIRE_GPU();
  {
    SCOPED_TRACE("B batched");
    check_matmul(true);
  }
  {
    SCOPED_TRACE("B shared");
    check_matmul(false);
  }
}

TEST(cuda_backend, dropout_draws_the_cpu_backends_mask) {
  TORU_REQUIRE_GPU();
  builder b("dropout", swap::dtype::f32);
  const int x = input_param(b, {4, 3, 7, 5});
  const auto g = finish(b, b.linear(b.flatten(b.dropout(x, 0.3)), 6));
  compare_backends(g, "dropout");
  // Dropped elements have an exactly zero input gradient on both backends: the same mask.
  model cpu(g, {.backend = backend_kind::cpu, .seed = 11});
  model gpu(g, {.backend = backend_kind::cuda, .seed = 11});
  const auto d = make_data(cpu, 5);
  const auto oc = train_step(cpu, d, 9), og = train_step(gpu, d, 9);
  const auto& slot = cpu.parameters().front();  // "x": the dropout input
  ASSERT_EQ(slot.name, "x");
  std::int64_t dropped = 0;
  for (std::int64_t i = slot.offset; i < slot.offset + slot.count; ++i) {
    const auto k = static_cast<std::size_t>(i);
    EXPECT_EQ(oc.grads[k] == 0.0f, og.grads[k] == 0.0f) << "element " << i - slot.offset;
    dropped += oc.grads[k] == 0.0f ? 1 : 0;
  }
  EXPECT_GT(dropped, slot.count / 6);  // p = 0.3
  EXPECT_LT(dropped, slot.count / 2);
}

TEST(cuda_backend, resnet_basic_block_matches_the_cpu_backend) {
  TORU_REQUIRE_GPU();
  compare_backends(resnet_basic_block(), "resnet_block");
}

// A whole training step of the Fashion-MNIST CNN: forward, backward, an SGD update applied to both
// models' parameters, then a second forward and backward on the updated weights.
TEST(cuda_backend, fashion_cnn_training_step_matches_the_cpu_backend) {
  TORU_REQUIRE_GPU();
  const auto g = swap::build_model("fashion-cnn", {.batch = 8, .height = 28, .width = 28});
  model cpu(g, {.backend = backend_kind::cpu, .seed = 3});
  model gpu(g, {.backend = backend_kind::cuda, .seed = 3});
  const auto d1 = make_data(cpu, 21), d2 = make_data(cpu, 22);
  const auto c1 = train_step(cpu, d1, 0), g1 = train_step(gpu, d1, 0);
  expect_close(g1, c1, "step 0");
  for (auto* m : {&cpu, &gpu}) {
    auto p = to_host(m->parameter_data(), m->space());
    const auto gr = to_host(m->gradient_data(), m->space());
    for (std::size_t i = 0; i < p.size(); ++i) p[i] -= 0.05f * gr[i];
    from_host(m->parameter_data(), p, m->space());
    m->parameters_changed();
  }
  const auto c2 = train_step(cpu, d2, 1), g2 = train_step(gpu, d2, 1);
  expect_close(g2, c2, "step 1 (after the update)");
  EXPECT_LT(rel_error(g2.params, c2.params), tolerance) << "updated parameters";
}

TEST(cuda_backend, two_runs_are_bit_identical) {
  TORU_REQUIRE_GPU();
  const auto g = swap::build_model("fashion-cnn", {.batch = 4, .height = 28, .width = 28});
  model a(g, {.backend = backend_kind::cuda, .seed = 5});
  model b(g, {.backend = backend_kind::cuda, .seed = 5});
  const auto d = make_data(a, 1);
  const auto oa = train_step(a, d, 0), ob = train_step(b, d, 0);
  EXPECT_EQ(oa.r.loss, ob.r.loss);
  EXPECT_EQ(oa.grads, ob.grads);
  EXPECT_EQ(oa.buffers, ob.buffers);
}

TEST(cuda_backend, device_memory_capacity_and_high_water) {
  TORU_REQUIRE_GPU();
  detail::cuda::cuda_context ctx(0, 1 << 20);
  auto& mem = ctx.memory();
  EXPECT_EQ(mem.space(), memory_space::device);
  EXPECT_EQ(mem.capacity(), std::size_t{1} << 20);
  const std::size_t base = mem.in_use();
  {
    device_buffer a(mem, 1000, "a");  // accounted as 1024 (64-byte granules)
    device_buffer b(mem, 300 << 10, "b");
    EXPECT_EQ(mem.in_use(), base + 1024 + (300 << 10));
    const cudaError_t rc = cudaMemsetAsync(b.data(), 0, b.bytes(), ctx.stream());
    EXPECT_EQ(rc, cudaSuccess);
    try {
      device_buffer c(mem, 800 << 10, "too_big");
      ADD_FAILURE() << "allocation past the capacity succeeded";
    } catch (const toru::error& e) {
      EXPECT_EQ(e.code(), errc::out_of_memory);
      EXPECT_NE(e.message().find("too_big"), std::string::npos) << e.message();
    }
    EXPECT_EQ(mem.in_use(), base + 1024 + (300 << 10)) << "a failed allocation must not be counted";
  }
  EXPECT_EQ(mem.in_use(), base);
  EXPECT_EQ(mem.high_water(), base + 1024 + (300 << 10));
  mem.reset_high_water();
  EXPECT_EQ(mem.high_water(), base);
  ctx.synchronize();

  // A model's allocations go through its capacity: too small a capacity is a clear out_of_memory.
  const auto g = swap::build_model("fashion-cnn", {.batch = 4, .height = 28, .width = 28});
  try {
    model m(g, {.backend = backend_kind::cuda, .seed = 1, .memory_capacity = 4096});
    ADD_FAILURE() << "a 4 KiB capacity was enough for the CNN";
  } catch (const toru::error& e) {
    EXPECT_EQ(e.code(), errc::out_of_memory) << e.what();
  }
  model m(g, {.backend = backend_kind::cuda, .seed = 1});
  m.memory().reset_high_water();
  const auto before = m.memory().in_use();
  train_step(m, make_data(m, 2), 0);
  EXPECT_GT(m.memory().high_water(), before) << "activations and gradients of a step are counted";
  EXPECT_EQ(m.memory().in_use(), before) << "a step releases what it allocated";
}

// Registered twice: with the GPU tests (then it is skipped where a GPU is visible) and alone with
// every device hidden, where it must run and pass on any machine.
TEST(cuda_backend_no_device, model_construction_says_no_cuda_device) {
  if (toru::gpu_count() > 0) GTEST_SKIP() << "a CUDA device is visible: this test needs CUDA_VISIBLE_DEVICES=";
  const auto g = swap::build_model("mlp", {.batch = 2, .height = 4, .width = 4});
  try {
    model m(g, {.backend = backend_kind::cuda});
    ADD_FAILURE() << "a CUDA model was built without a device";
  } catch (const toru::error& e) {
    EXPECT_EQ(e.code(), errc::no_device) << e.what();
    EXPECT_NE(e.message().find("no CUDA device"), std::string::npos) << e.message();
  }
}

}  // namespace
}  // namespace toru::train::test
