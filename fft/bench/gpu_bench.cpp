// SPDX-License-Identifier: BSD-3-Clause
// fft_gpu_bench: toru's cufft backend on the GPU against a bare cuFFT plan of the same transform
// (cufftPlan3d / cufftPlan1d, out of place, complex double) in the same run: median time of the
// forward, GFlop/s (5 N log2 N), and the share of the device's memory bandwidth that the least
// traffic of an out-of-place transform (one read and one write of the array, 32 N bytes) makes of
// that time. The bandwidth is measured here (cudaMemcpy device to device, read + write) and the
// nominal one printed beside it. Also the largest difference between toru's and cuFFT's outputs
// (relative to the largest coefficient), so that the figure belongs to a correct transform.
// Not a test: scripts/gpu-check-fft.sh runs it after fft_gpu_test.
//
//   mpiexec -n 1 fft_gpu_bench [--n3 256,512] [--n1 67108864] [--reps 10]
#include <cuda_runtime_api.h>
#include <cufft.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "toru/fft/fft1d.hpp"
#include "toru/fft/fft3d.hpp"

namespace {

using cpx = std::complex<double>;

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "fft_gpu_bench: %s\n", what.c_str());
  MPI_Abort(MPI_COMM_WORLD, 2);
  std::exit(2);
}
void cuda(cudaError_t rc, const char* call) {
  if (rc != cudaSuccess) die(fmt::format("{}: {}", call, cudaGetErrorString(rc)));
}
void cufft(cufftResult rc, const char* call) {
  if (rc != CUFFT_SUCCESS) die(fmt::format("{}: cufftResult {}", call, static_cast<int>(rc)));
}

std::vector<std::int64_t> list(const char* text) {
  std::vector<std::int64_t> v;
  std::string s(text);
  for (std::size_t at = 0; at < s.size();) {
    const std::size_t end = std::min(s.find(',', at), s.size());
    if (end > at) v.push_back(std::stoll(s.substr(at, end - at)));
    at = end + 1;
  }
  return v;
}

struct device_buffer {
  cpx* p = nullptr;
  explicit device_buffer(std::size_t n) {
    cuda(cudaMalloc(reinterpret_cast<void**>(&p), n * sizeof(cpx)), "cudaMalloc");
  }
  ~device_buffer() { cudaFree(p); }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
};

// Median of `reps` timed calls after two untimed ones; every call ends with the device idle.
double median_seconds(int reps, const std::function<void()>& f) {
  std::vector<double> t;
  for (int r = 0; r < reps + 2; ++r) {
    cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    const auto t0 = std::chrono::steady_clock::now();
    f();
    cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    if (r >= 2) t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Read + write bytes per second of a large device-to-device copy: what a streaming kernel can reach.
double copy_bandwidth() {
  const std::size_t n = std::size_t{1} << 27;  // 2 GiB of complex double
  device_buffer a(n), b(n);
  cuda(cudaMemset(a.p, 0, n * sizeof(cpx)), "cudaMemset");
  const double t =
      median_seconds(5, [&] { cuda(cudaMemcpy(b.p, a.p, n * sizeof(cpx), cudaMemcpyDeviceToDevice), "cudaMemcpy"); });
  return 2.0 * static_cast<double>(n * sizeof(cpx)) / t;
}

double nominal_bandwidth() {
  int dev = 0, khz = 0, bits = 0;
  cudaGetDevice(&dev);
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&bits, cudaDevAttrGlobalMemoryBusWidth, dev) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return 2.0 * khz * 1e3 * bits / 8;  // double data rate
}

// Input: a deterministic pattern (values do not change the timing).
std::vector<cpx> pattern(std::size_t n) {
  std::vector<cpx> h(n);
  for (std::size_t i = 0; i < n; ++i)
    h[i] = {std::sin(0.001 * static_cast<double>(i % 100003)), std::cos(0.0007 * static_cast<double>(i % 7919))};
  return h;
}

double max_rel_diff(const cpx* a, const cpx* b, std::size_t n) {
  std::vector<cpx> x(n), y(n);
  cuda(cudaMemcpy(x.data(), a, n * sizeof(cpx), cudaMemcpyDeviceToHost), "cudaMemcpy");
  cuda(cudaMemcpy(y.data(), b, n * sizeof(cpx), cudaMemcpyDeviceToHost), "cudaMemcpy");
  double d = 0, m = 0;
  for (std::size_t i = 0; i < n; ++i) {
    d = std::max(d, std::abs(x[i] - y[i]));
    m = std::max(m, std::abs(y[i]));
  }
  return m > 0 ? d / m : d;
}

void report(const std::string& what, double N, double toru_s, double cufft_s, double diff, double bw) {
  const double flops = 5 * N * std::log2(N), bytes = 32 * N;
  fmt::print(
      "{:<14} toru {:>9.5f} s {:>7.1f} GF/s {:>5.1f}% of copy bw | cuFFT {:>9.5f} s {:>7.1f} GF/s {:>5.1f}% | "
      "toru/cuFFT {:.3f} | max rel diff {:.1e}\n",
      what, toru_s, flops / toru_s * 1e-9, 100 * bytes / toru_s / bw, cufft_s, flops / cufft_s * 1e-9,
      100 * bytes / cufft_s / bw, toru_s / cufft_s, diff);
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  std::vector<std::int64_t> n3{256, 512}, n1{std::int64_t{1} << 26};
  int reps = 10;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--n3")
      n3 = list(argv[i + 1]);
    else if (a == "--n1")
      n1 = list(argv[i + 1]);
    else if (a == "--reps")
      reps = std::max(1, std::atoi(argv[i + 1]));
    else
      die("usage: fft_gpu_bench [--n3 256,512] [--n1 67108864] [--reps 10]");
  }
  int P = 0, ndev = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  if (P != 1) die("runs on one rank (the peer is a single-GPU cuFFT plan)");
  cuda(cudaGetDeviceCount(&ndev), "cudaGetDeviceCount");
  cuda(cudaSetDevice(0), "cudaSetDevice");
  cudaDeviceProp prop{};
  cuda(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  const double bw = copy_bandwidth(), nominal = nominal_bandwidth();
  fmt::print("fft_gpu_bench: {} ({} GiB), complex double, out of place, median of {} forwards\n", prop.name,
             prop.totalGlobalMem >> 30, reps);
  fmt::print(
      "device copy bandwidth (read + write) {:.0f} GB/s; nominal {:.0f} GB/s; % below = 32 N bytes / time / "
      "copy bandwidth\n",
      bw * 1e-9, nominal * 1e-9);

  for (std::int64_t n : n3) {
    const std::size_t N = static_cast<std::size_t>(n * n * n);
    toru::fft::fft3d<double, toru::fft::cufft> plan(MPI_COMM_WORLD, {n, n, n});
    const std::size_t alloc = static_cast<std::size_t>(plan.alloc_size());
    device_buffer in(alloc), out(alloc), ref(N), ws(plan.workspace_size() / sizeof(cpx) + 1);
    const auto h = pattern(N);
    cuda(cudaMemcpy(in.p, h.data(), N * sizeof(cpx), cudaMemcpyHostToDevice), "cudaMemcpy");
    const double t_toru = median_seconds(reps, [&] { plan.forward(in.p, out.p, ws.p); });
    cufftHandle p;
    cufft(cufftPlan3d(&p, static_cast<int>(n), static_cast<int>(n), static_cast<int>(n), CUFFT_Z2Z), "cufftPlan3d");
    auto* i = reinterpret_cast<cufftDoubleComplex*>(in.p);
    auto* o = reinterpret_cast<cufftDoubleComplex*>(ref.p);
    const double t_cufft = median_seconds(reps, [&] { cufft(cufftExecZ2Z(p, i, o, CUFFT_FORWARD), "cufftExecZ2Z"); });
    cufftDestroy(p);
    report(fmt::format("3D {}^3", n), static_cast<double>(N), t_toru, t_cufft, max_rel_diff(out.p, ref.p, N), bw);
  }
  for (std::int64_t n : n1) {
    const std::size_t N = static_cast<std::size_t>(n);
    toru::fft::fft1d<double, toru::fft::cufft> plan(MPI_COMM_WORLD, n);
    const std::size_t alloc = static_cast<std::size_t>(plan.alloc_size());
    device_buffer in(alloc), out(alloc), ref(N), ws(plan.workspace_size() / sizeof(cpx) + 1);
    const auto h = pattern(N);
    cuda(cudaMemcpy(in.p, h.data(), N * sizeof(cpx), cudaMemcpyHostToDevice), "cudaMemcpy");
    const double t_toru = median_seconds(reps, [&] { plan.forward(in.p, out.p, ws.p); });
    cufftHandle p;
    cufft(cufftPlan1d(&p, static_cast<int>(n), CUFFT_Z2Z, 1), "cufftPlan1d");
    auto* i = reinterpret_cast<cufftDoubleComplex*>(in.p);
    auto* o = reinterpret_cast<cufftDoubleComplex*>(ref.p);
    const double t_cufft = median_seconds(reps, [&] { cufft(cufftExecZ2Z(p, i, o, CUFFT_FORWARD), "cufftExecZ2Z"); });
    cufftDestroy(p);
    report(fmt::format("1D 2^{}", static_cast<int>(std::log2(static_cast<double>(n)))), static_cast<double>(N), t_toru,
           t_cufft, max_rel_diff(out.p, ref.p, N), bw);
  }
  MPI_Finalize();
  return 0;
}
