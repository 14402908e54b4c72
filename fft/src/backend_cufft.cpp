// SPDX-License-Identifier: BSD-3-Clause
// The cuFFT backend (see backend_cufft.hpp). Every CUDA and cuFFT call goes through check_cuda /
// check_cufft, which throw toru::error(errc::cuda) naming the call.
#include "backend_cufft.hpp"

#include <cuda_runtime_api.h>
#include <cufft.h>

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "backend_cufft_kernels.hpp"
#include "exchange.hpp"
#include "split.hpp"
#include "toru/core/device.hpp"
#include "toru/core/error.hpp"
#include "toru/core/mpi.hpp"
#include "toru/detail/cuda_check.hpp"

namespace toru::fft::detail::gpu {

using toru::detail::check_cuda;

namespace {

const char* cufft_result_name(cufftResult rc) {
  switch (rc) {
    case CUFFT_SUCCESS:
      return "CUFFT_SUCCESS";
    case CUFFT_INVALID_PLAN:
      return "CUFFT_INVALID_PLAN";
    case CUFFT_ALLOC_FAILED:
      return "CUFFT_ALLOC_FAILED";
    case CUFFT_INVALID_TYPE:
      return "CUFFT_INVALID_TYPE";
    case CUFFT_INVALID_VALUE:
      return "CUFFT_INVALID_VALUE";
    case CUFFT_INTERNAL_ERROR:
      return "CUFFT_INTERNAL_ERROR";
    case CUFFT_EXEC_FAILED:
      return "CUFFT_EXEC_FAILED";
    case CUFFT_SETUP_FAILED:
      return "CUFFT_SETUP_FAILED";
    case CUFFT_INVALID_SIZE:
      return "CUFFT_INVALID_SIZE";
    case CUFFT_INVALID_DEVICE:
      return "CUFFT_INVALID_DEVICE";
    case CUFFT_NO_WORKSPACE:
      return "CUFFT_NO_WORKSPACE";
    case CUFFT_NOT_IMPLEMENTED:
      return "CUFFT_NOT_IMPLEMENTED";
    case CUFFT_NOT_SUPPORTED:
      return "CUFFT_NOT_SUPPORTED";
    default:
      return "unknown cufftResult";
  }
}

void check_cufft(cufftResult rc, const char* call) {
  if (rc == CUFFT_SUCCESS) return;
  throw error(rc == CUFFT_ALLOC_FAILED ? errc::out_of_memory : errc::cuda,
              fmt::format("{} failed: {} ({})", call, cufft_result_name(rc), static_cast<int>(rc)));
}

}  // namespace

struct context {
  int device = 0;
  cudaStream_t stream = nullptr;
  ~context() {
    if (stream) cudaStreamDestroy(stream);
  }
};

context_ptr make_context(MPI_Comm comm) {
  validate_collectively(comm, [] {
    if (gpu_count() == 0)
      throw error(errc::no_device,
                  fmt::format("backend cufft: expected a CUDA device on every rank, this rank has none ({})",
                              gpu_absence_reason()));
  });
  auto ctx = std::make_shared<context>();
  validate_collectively(comm, [&] {
    check_cuda(cudaGetDevice(&ctx->device), "cudaGetDevice");
    // A blocking stream: comm's staging copies (cudaMemcpy on the legacy default stream) then
    // also wait for the kernels queued here.
    check_cuda(cudaStreamCreate(&ctx->stream), "cudaStreamCreate");
  });
  return ctx;
}

std::shared_ptr<void> device_alloc(std::size_t bytes) {
  if (bytes == 0) return {};
  void* p = nullptr;
  check_cuda(cudaMalloc(&p, bytes), "cudaMalloc");
  return std::shared_ptr<void>(p, [](void* q) { cudaFree(q); });
}

namespace {
// Empty when p is device (or managed) memory of `device`, else what it is.
std::string device_memory_problem(const void* p, int device) {
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
    cudaGetLastError();  // clear the error of an unknown host pointer
    return "host memory";
  }
  switch (attr.type) {
    case cudaMemoryTypeDevice:
    case cudaMemoryTypeManaged:
      if (attr.device != device) return fmt::format("memory of CUDA device {}", attr.device);
      return {};
    case cudaMemoryTypeHost:
      return "pinned host memory";
    default:
      return "host memory";
  }
}
}  // namespace

void expect_device_buffers(const context& ctx, MPI_Comm comm, const void* in, std::int64_t in_elems, const void* out,
                           std::int64_t out_elems, const void* ws) {
  validate_collectively(comm, [&] {
    auto check = [&](const char* name, const void* p, std::int64_t elems) {
      if (elems <= 0 && p == nullptr) return;
      if (p == nullptr)
        throw error(
            errc::invalid_argument,
            fmt::format("{}: expected a device buffer of {} elements on this rank, got a null pointer", name, elems));
      if (std::string what = device_memory_problem(p, ctx.device); !what.empty())
        throw error(errc::invalid_argument,
                    fmt::format("{}: the cufft backend expects device memory of CUDA device {} (cudaMalloc or "
                                "cudaMallocManaged), got {}",
                                name, ctx.device, what));
    };
    // Kernels launch on the current device; the plan's stream and cuFFT plans belong to its own.
    int current = -1;
    check_cuda(cudaGetDevice(&current), "cudaGetDevice");
    if (current != ctx.device)
      throw error(errc::invalid_argument,
                  fmt::format("current CUDA device: expected device {} (the plan was built there), got device {}",
                              ctx.device, current));
    check("in", in, in_elems);
    check("out", out, out_elems);
    if (ws) check("ws", ws, 1);
  });
}

void synchronize(const context& ctx) { check_cuda(cudaStreamSynchronize(ctx.stream), "cudaStreamSynchronize"); }

template <class T>
void scale(const context& ctx, std::complex<T>* data, std::int64_t count, T factor) {
  check_cuda(launch_scale(reinterpret_cast<T*>(data), count, factor, ctx.stream), "scale kernel launch");
}

namespace {

/// Batched cuFFT plans for a list of batch sizes (others run as pieces, the list ends with 1),
/// sharing one work area. One c2c plan serves both directions (cuFFT takes it per execution).
template <class T>
class cufft_batches {
 public:
  cufft_batches(context_ptr ctx, fft_kind kind, std::vector<int> dims, std::vector<std::int64_t> batches)
      : ctx_(std::move(ctx)), kind_(kind) {
    constexpr bool dbl = std::is_same_v<T, double>;
    const bool real = kind == fft_kind::r2c || kind == fft_kind::c2r;
    std::vector<long long> n(dims.begin(), dims.end()), cemb(n), remb(n);
    const long long last = n.back();
    cemb.back() = last / 2 + 1;
    remb.back() = 2 * (last / 2 + 1);
    auto prod = [](const std::vector<long long>& v) {
      long long p = 1;
      for (long long x : v) p *= x;
      return p;
    };
    unit_bytes_ = prod(real ? cemb : n) * static_cast<long long>(sizeof(std::complex<T>));
    cufftType type = dbl ? CUFFT_Z2Z : CUFFT_C2C;
    long long* inembed = nullptr;
    long long* onembed = nullptr;
    long long idist = prod(n), odist = prod(n);
    if (kind == fft_kind::r2c) {
      type = dbl ? CUFFT_D2Z : CUFFT_R2C;
      inembed = remb.data();
      onembed = cemb.data();
      idist = prod(remb);
      odist = prod(cemb);
    } else if (kind == fft_kind::c2r) {
      type = dbl ? CUFFT_Z2D : CUFFT_C2R;
      inembed = cemb.data();
      onembed = remb.data();
      idist = prod(cemb);
      odist = prod(remb);
    }
    batches.push_back(1);
    std::sort(batches.begin(), batches.end(), std::greater<>());
    batches.erase(std::unique(batches.begin(), batches.end()), batches.end());
    std::size_t work = 0;
    for (std::int64_t b : batches) {
      if (b <= 0) continue;
      entry e{b, 0};
      check_cufft(cufftCreate(&e.handle), "cufftCreate");
      plans_.push_back(e);
      check_cufft(cufftSetAutoAllocation(e.handle, 0), "cufftSetAutoAllocation");
      std::size_t ws = 0;
      check_cufft(cufftMakePlanMany64(e.handle, static_cast<int>(n.size()), n.data(), inembed, 1, idist, onembed, 1,
                                      odist, type, b, &ws),
                  "cufftMakePlanMany64");
      check_cufft(cufftSetStream(e.handle, ctx_->stream), "cufftSetStream");
      work = std::max(work, ws);
    }
    work_ = device_alloc(work);
    for (const entry& e : plans_) check_cufft(cufftSetWorkArea(e.handle, work_.get()), "cufftSetWorkArea");
  }
  ~cufft_batches() {
    for (const entry& e : plans_) cufftDestroy(e.handle);
  }
  cufft_batches(const cufft_batches&) = delete;
  cufft_batches& operator=(const cufft_batches&) = delete;

  void execute(std::int64_t units, void* in, void* out) const {
    auto* pin = static_cast<char*>(in);
    auto* pout = static_cast<char*>(out);
    for (const entry& e : plans_) {
      while (units >= e.batch) {
        run(e.handle, pin, pout);
        units -= e.batch;
        pin += e.batch * unit_bytes_;
        pout += e.batch * unit_bytes_;
      }
    }
  }

 private:
  struct entry {
    std::int64_t batch;
    cufftHandle handle;
  };

  void run(cufftHandle h, void* in, void* out) const {
    constexpr bool dbl = std::is_same_v<T, double>;
    const int dir = kind_ == fft_kind::c2c_forward ? CUFFT_FORWARD : CUFFT_INVERSE;
    switch (kind_) {
      case fft_kind::c2c_forward:
      case fft_kind::c2c_backward:
        if constexpr (dbl)
          check_cufft(cufftExecZ2Z(h, static_cast<cufftDoubleComplex*>(in), static_cast<cufftDoubleComplex*>(out), dir),
                      "cufftExecZ2Z");
        else
          check_cufft(cufftExecC2C(h, static_cast<cufftComplex*>(in), static_cast<cufftComplex*>(out), dir),
                      "cufftExecC2C");
        break;
      case fft_kind::r2c:
        if constexpr (dbl)
          check_cufft(cufftExecD2Z(h, static_cast<cufftDoubleReal*>(in), static_cast<cufftDoubleComplex*>(out)),
                      "cufftExecD2Z");
        else
          check_cufft(cufftExecR2C(h, static_cast<cufftReal*>(in), static_cast<cufftComplex*>(out)), "cufftExecR2C");
        break;
      case fft_kind::c2r:
        if constexpr (dbl)
          check_cufft(cufftExecZ2D(h, static_cast<cufftDoubleComplex*>(in), static_cast<cufftDoubleReal*>(out)),
                      "cufftExecZ2D");
        else
          check_cufft(cufftExecC2R(h, static_cast<cufftComplex*>(in), static_cast<cufftReal*>(out)), "cufftExecC2R");
        break;
    }
  }

  context_ptr ctx_;
  fft_kind kind_;
  long long unit_bytes_ = 0;  // padded real units take exactly the bytes of complex ones
  std::vector<entry> plans_;  // decreasing batch, ending with 1
  std::shared_ptr<void> work_;
};

template <class T>
class device_fft_step final : public step<T> {
 public:
  device_fft_step(const context_ptr& ctx, fft_kind kind, std::vector<int> dims, std::int64_t units)
      : fft_(ctx, kind, std::move(dims), {units}), units_(units) {}
  void run(const void* src, void* dst, const work_buffers&) const override {
    // cuFFT leaves the input of out-of-place c2c and r2c transforms intact (only c2r overwrites
    // it, and c2r runs in place on received lines).
    if (units_ > 0) fft_.execute(units_, const_cast<void*>(src), dst);
  }

 private:
  cufft_batches<T> fft_;
  std::int64_t units_;
};

template <class T>
class device_fft_lines final : public line_op<T> {
 public:
  device_fft_lines(const context_ptr& ctx, fft_kind kind, std::vector<int> dims, std::vector<std::int64_t> batches)
      : fft_(ctx, kind, dims, std::move(batches)) {
    const bool real = kind == fft_kind::r2c || kind == fft_kind::c2r;
    unit_ = 1;
    for (std::size_t i = 0; i + 1 < dims.size(); ++i) unit_ *= dims[i];
    unit_ *= real ? dims.back() / 2 + 1 : dims.back();
  }
  void apply(std::complex<T>* stage, std::int64_t u0, std::int64_t u1) const override {
    if (u1 <= u0) return;
    auto* p = stage + u0 * unit_;
    fft_.execute(u1 - u0, p, p);
  }

 private:
  cufft_batches<T> fft_;
  std::int64_t unit_ = 0;
};

template <class T>
class device_twiddle_fft final : public line_op<T> {
 public:
  device_twiddle_fft(const context_ptr& ctx, std::int64_t len, std::vector<std::int64_t> batches,
                     const std::vector<std::complex<T>>& tw, bool forward)
      : ctx_(ctx),
        fft_(ctx, forward ? fft_kind::c2c_forward : fft_kind::c2c_backward, {static_cast<int>(len)},
             std::move(batches)),
        len_(len),
        forward_(forward) {
    const std::size_t bytes = tw.size() * sizeof(std::complex<T>);
    tw_ = device_alloc(bytes);
    if (bytes) check_cuda(cudaMemcpy(tw_.get(), tw.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy (twiddles)");
  }
  void apply(std::complex<T>* stage, std::int64_t u0, std::int64_t u1) const override {
    if (u1 <= u0) return;
    std::complex<T>* p = stage + u0 * len_;
    const T* w = static_cast<const T*>(tw_.get()) + 2 * u0 * len_;
    const std::int64_t count = (u1 - u0) * len_;
    if (forward_) {
      fft_.execute(u1 - u0, p, p);
      check_cuda(launch_twiddle(reinterpret_cast<T*>(p), w, count, false, ctx_->stream), "twiddle kernel launch");
    } else {
      check_cuda(launch_twiddle(reinterpret_cast<T*>(p), w, count, true, ctx_->stream), "twiddle kernel launch");
      fft_.execute(u1 - u0, p, p);
    }
  }

 private:
  context_ptr ctx_;
  cufft_batches<T> fft_;
  std::shared_ptr<void> tw_;
  std::int64_t len_;
  bool forward_;
};

int to_int(std::int64_t v, const char* what) {
  if (v > INT32_MAX)
    throw error(errc::unsupported,
                fmt::format("{}: {} elements exceed the 2^31-1 an MPI count can hold; use more ranks", what, v));
  return static_cast<int>(v);
}

template <class T>
class device_transpose_step final : public step<T> {
 public:
  using cpx = std::complex<T>;
  device_transpose_step(context_ptr ctx, comm_ptr comm, transpose_geometry g, std::unique_ptr<line_op<T>> op,
                        int chunks, bool overlap, MPI_Datatype type, comm::alltoall_algorithm algorithm)
      : ctx_(std::move(ctx)), op_(std::move(op)), group_(g.group) {
    const int q = static_cast<int>(g.a_count.size());
    // The kernels recompute the balanced split instead of reading these tables.
    for (int r = 0; r < q; ++r)
      if (g.a_start[r] != part_start(g.na, q, r) || g.a_count[r] != part_count(g.na, q, r) ||
          g.b_start[r] != part_start(g.nb, q, r) || g.b_count[r] != part_count(g.nb, q, r))
        throw error(errc::internal, "cufft transpose: geometry is not the balanced split");
    geo_ = pack_geometry{g.T, g.na, g.nb, q, g.me, g.src_t_outer, g.dst_t_outer};
    const std::int64_t B = g.b_count[g.me], A = g.a_count[g.me];
    std::vector<int> sc(q), sd(q), rc(q), rd(q);
    std::int64_t st = 0, rt = 0;
    for (int d = 0; d < q; ++d) {
      // Unlike the host step, the own block also goes through the exchange: comm's staging copies
      // the whole receive range back to the device, which would overwrite a block packed there.
      sd[d] = to_int(st, "send displacement");
      sc[d] = to_int(g.T * g.a_count[d] * B, "send count");
      st += g.T * g.a_count[d] * B;
      rd[d] = to_int(rt, "receive displacement");
      rc[d] = to_int(g.T * A * g.b_count[d], "receive count");
      rt += g.T * A * g.b_count[d];
    }
    units_ = g.T * A / g.group;
    ex_ = std::make_unique<exchange>(std::move(comm), std::move(sc), std::move(sd), std::move(rc), std::move(rd), type,
                                     chunks, overlap, algorithm);
  }

  void run(const void* src, void* dst, const work_buffers& ws) const override {
    auto* send = static_cast<T*>(ws.send);
    auto* recv = static_cast<T*>(ws.recv);
    auto* out = static_cast<cpx*>(dst);
    check_cuda(launch_pack(geo_, static_cast<const T*>(src), send, ctx_->stream), "pack kernel launch");
    // MPI (or comm's staging copy) reads the send buffer from the host thread.
    check_cuda(cudaStreamSynchronize(ctx_->stream), "cudaStreamSynchronize (before the exchange)");
    // comm's own (host) workspace: the staging path runs the host algorithm on it.
    ex_->execute(send, recv, nullptr, [&](int c, int nchunks) {
      const std::int64_t u0 = c * units_ / nchunks, u1 = (c + 1) * units_ / nchunks;
      if (u1 <= u0) return;
      check_cuda(launch_unpack(geo_, recv, reinterpret_cast<T*>(out), u0 * group_, u1 * group_, ctx_->stream),
                 "unpack kernel launch");
      if (op_) op_->apply(out, u0, u1);
    });
  }

 private:
  context_ptr ctx_;
  std::unique_ptr<line_op<T>> op_;
  std::int64_t group_ = 1, units_ = 0;
  pack_geometry geo_{};
  std::unique_ptr<exchange> ex_;
};

}  // namespace

template <class T>
std::unique_ptr<step<T>> make_fft_step(const context_ptr& ctx, fft_kind kind, std::vector<int> dims,
                                       std::int64_t units) {
  return std::make_unique<device_fft_step<T>>(ctx, kind, std::move(dims), units);
}

template <class T>
std::unique_ptr<line_op<T>> make_fft_lines(const context_ptr& ctx, fft_kind kind, std::vector<int> dims,
                                           std::vector<std::int64_t> batches) {
  return std::make_unique<device_fft_lines<T>>(ctx, kind, std::move(dims), std::move(batches));
}

template <class T>
std::unique_ptr<line_op<T>> make_twiddle_fft(const context_ptr& ctx, std::int64_t len,
                                             std::vector<std::int64_t> batches, const std::vector<std::complex<T>>& tw,
                                             bool forward) {
  return std::make_unique<device_twiddle_fft<T>>(ctx, len, std::move(batches), tw, forward);
}

template <class T>
std::unique_ptr<step<T>> make_transpose(const context_ptr& ctx, comm_ptr comm, transpose_geometry g,
                                        std::unique_ptr<line_op<T>> op, int chunks, bool overlap, MPI_Datatype type,
                                        comm::alltoall_algorithm algorithm) {
  return std::make_unique<device_transpose_step<T>>(ctx, std::move(comm), std::move(g), std::move(op), chunks, overlap,
                                                    type, algorithm);
}

#define TORU_FFT_CUFFT_INSTANTIATE(T)                                                                               \
  template void scale<T>(const context&, std::complex<T>*, std::int64_t, T);                                        \
  template std::unique_ptr<step<T>> make_fft_step<T>(const context_ptr&, fft_kind, std::vector<int>, std::int64_t); \
  template std::unique_ptr<line_op<T>> make_fft_lines<T>(const context_ptr&, fft_kind, std::vector<int>,            \
                                                         std::vector<std::int64_t>);                                \
  template std::unique_ptr<line_op<T>> make_twiddle_fft<T>(                                                         \
      const context_ptr&, std::int64_t, std::vector<std::int64_t>, const std::vector<std::complex<T>>&, bool);      \
  template std::unique_ptr<step<T>> make_transpose<T>(const context_ptr&, comm_ptr, transpose_geometry,             \
                                                      std::unique_ptr<line_op<T>>, int, bool, MPI_Datatype,         \
                                                      comm::alltoall_algorithm);
TORU_FFT_CUFFT_INSTANTIATE(float)
TORU_FFT_CUFFT_INSTANTIATE(double)
#undef TORU_FFT_CUFFT_INSTANTIATE

}  // namespace toru::fft::detail::gpu
