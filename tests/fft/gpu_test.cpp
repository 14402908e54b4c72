// SPDX-License-Identifier: BSD-3-Clause
// The cuFFT backend against the FFTW backend on the same random input: the output of a
// toru::fft::cufft plan against that of the toru::fft::fftw plan with the same options (rank by
// rank where the boxes agree; gathered by global index where they do not: the transposed slab
// layouts differ between the backends, docs/fft.md); round trips; device-buffer validation. Every test
// needs a GPU on every rank and is skipped (reported as skipped by CTest) otherwise. The no-device
// error path runs without a GPU in gpu_nodevice_test.cpp.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <memory>

#include "fft_test_util.hpp"
#include "mpi_test.hpp"
#include "toru/core/error.hpp"
#include "toru/fft/fft1d.hpp"
#include "toru/fft/fft3d.hpp"

namespace {

using toru::fft::cufft;
using toru::fft::decomposition;
using toru::fft::fftw;
using toru::fft::order;
using toru::fft::scale;
using toru::test::cnoise;
using N3 = std::array<std::int64_t, 3>;

void cuda_ok(cudaError_t rc, const char* call) { ASSERT_EQ(rc, cudaSuccess) << call << ": " << cudaGetErrorString(rc); }

/// cudaMalloc'd array of n elements of C (at least one).
template <class C>
struct device_array {
  C* p = nullptr;
  std::size_t n = 0;
  explicit device_array(std::size_t count) : n(std::max<std::size_t>(count, 1)) {
    cuda_ok(cudaMalloc(reinterpret_cast<void**>(&p), n * sizeof(C)), "cudaMalloc");
  }
  ~device_array() { cudaFree(p); }
  device_array(const device_array&) = delete;
  device_array& operator=(const device_array&) = delete;
  void upload(const std::vector<C>& h) {
    cuda_ok(cudaMemcpy(p, h.data(), std::min(h.size(), n) * sizeof(C), cudaMemcpyHostToDevice), "cudaMemcpy H2D");
  }
  std::vector<C> download(std::size_t count) const {
    std::vector<C> h(count);
    cuda_ok(cudaMemcpy(h.data(), p, count * sizeof(C), cudaMemcpyDeviceToHost), "cudaMemcpy D2H");
    return h;
  }
};

template <class C>
std::vector<C> head(const std::vector<C>& v, std::size_t n) {
  return std::vector<C>(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n));
}

template <class C>
double rel_error(const std::vector<C>& got, const std::vector<C>& want) {
  toru::test::error_norm e;
  for (std::size_t i = 0; i < want.size(); ++i)
    e.add(got[i], std::complex<double>(static_cast<double>(want[i].real()), static_cast<double>(want[i].imag())));
  return e.rel();
}

// Whether a forced decomposition is possible here (not collective; the same on every rank).
bool possible(N3 n, const toru::fft::options3d& o) {
  try {
    toru::fft::local_size_3d(toru::test::nranks(), toru::test::rank(), n, o);
    return true;
  } catch (const toru::error&) {
    return false;
  }
}

// The whole array by global index, from every rank's box (summed over ranks; one owner per point).
template <class C>
std::vector<std::complex<double>> gathered(const toru::fft::box3d& box, const std::vector<C>& local, N3 n) {
  std::vector<std::complex<double>> all(static_cast<std::size_t>(n[0] * n[1] * n[2]));
  toru::test::for_each(box, [&](N3 g, std::int64_t i) {
    const C v = local[static_cast<std::size_t>(i)];
    all[static_cast<std::size_t>(toru::test::flat(n, g))] = {static_cast<double>(v.real()),
                                                             static_cast<double>(v.imag())};
  });
  MPI_Allreduce(MPI_IN_PLACE, all.data(), static_cast<int>(2 * all.size()), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return all;
}

template <class T>
void check_c2c_3d(N3 n, decomposition d, order out_order, bool in_place) {
  SCOPED_TRACE(::testing::Message() << n[0] << "x" << n[1] << "x" << n[2] << " " << toru::fft::to_string(d) << " "
                                    << toru::fft::to_string(out_order) << (in_place ? " in-place" : " out-of-place")
                                    << " " << (sizeof(T) == 8 ? "double" : "float"));
  using cpx = std::complex<T>;
  const toru::fft::options3d o{.decomp = d, .output = out_order};
  if (!possible(n, o)) return;
  toru::fft::fft3d<T, fftw> host(MPI_COMM_WORLD, n, o);
  toru::fft::fft3d<T, cufft> dev(MPI_COMM_WORLD, n, o);
  ASSERT_EQ(dev.inbox().low, host.inbox().low);
  ASSERT_EQ(dev.inbox().size, host.inbox().size);
  const double N = static_cast<double>(n[0] * n[1] * n[2]);
  const auto alloc = static_cast<std::size_t>(std::max(host.alloc_size(), dev.alloc_size()));
  const auto nin = static_cast<std::size_t>(host.inbox().extent());
  const auto nout = static_cast<std::size_t>(dev.outbox().extent());

  // Random input of this rank's box (seeded by rank: the comparison is rank-local).
  std::vector<cpx> x(alloc);
  for (std::size_t i = 0; i < nin; ++i) {
    const auto v = cnoise(i, 17 + static_cast<std::uint64_t>(toru::test::rank()));
    x[i] = cpx(static_cast<T>(v.real()), static_cast<T>(v.imag()));
  }
  std::vector<cpx> want(alloc), back(alloc);
  host.forward(x.data(), want.data());

  device_array<cpx> a(alloc), b(alloc);
  a.upload(x);
  cpx* out = in_place ? a.p : b.p;
  dev.forward(a.p, out);
  const device_array<cpx>& result = in_place ? a : b;
  EXPECT_LT(rel_error(gathered(dev.outbox(), result.download(nout), n), gathered(host.outbox(), want, n)),
            toru::test::tolerance<T>(N));
  if (!in_place) {
    EXPECT_EQ(a.download(nin), head(x, nin)) << "out of place must preserve the input";
  }

  // Round trip with 1/N: the input again.
  device_array<cpx> c(alloc);
  dev.backward(out, in_place ? out : c.p, scale::full);
  const auto rt = (in_place ? a : c).download(nin);
  EXPECT_LT(rel_error(rt, head(x, nin)), toru::test::tolerance<T>(N));
}

TEST(FftGpu, C2c3dMatchesFftwDouble) {
  TORU_SKIP_WITHOUT_GPU();
  for (N3 n : {N3{30, 17, 64}, N3{7, 9, 11}, N3{1, 12, 10}, N3{16, 6, 2}})
    for (auto d : {decomposition::automatic, decomposition::slab, decomposition::pencil})
      for (auto o : {order::natural, order::transposed})
        for (bool ip : {false, true}) check_c2c_3d<double>(n, d, o, ip);
}

TEST(FftGpu, C2c3dMatchesFftwFloat) {
  TORU_SKIP_WITHOUT_GPU();
  for (N3 n : {N3{30, 17, 64}, N3{7, 9, 11}})
    for (auto d : {decomposition::slab, decomposition::pencil})
      for (auto o : {order::natural, order::transposed}) check_c2c_3d<float>(n, d, o, false);
}

TEST(FftGpu, C2c3dWithoutOverlapAndCallerWorkspace) {
  TORU_SKIP_WITHOUT_GPU();
  using cpx = std::complex<double>;
  const N3 n{12, 10, 9};
  const toru::fft::options3d o{.overlap = false};
  toru::fft::fft3d<double, fftw> host(MPI_COMM_WORLD, n, o);
  toru::fft::fft3d<double, cufft> dev(MPI_COMM_WORLD, n, o);
  const auto alloc = static_cast<std::size_t>(host.alloc_size());
  const auto nout = static_cast<std::size_t>(host.outbox().extent());
  std::vector<cpx> x(alloc), want(alloc);
  for (std::size_t i = 0; i < static_cast<std::size_t>(host.inbox().extent()); ++i) x[i] = cnoise(i, 3);
  host.forward(x.data(), want.data(), scale::symmetric);
  device_array<cpx> a(alloc), b(alloc);
  device_array<std::byte> ws(dev.workspace_size());
  a.upload(x);
  dev.forward(a.p, b.p, ws.p, scale::symmetric);
  EXPECT_LT(rel_error(b.download(nout), head(want, nout)), toru::test::tolerance<double>(1080));
}

TEST(FftGpu, R2c3dMatchesFftw) {
  TORU_SKIP_WITHOUT_GPU();
  using cpx = std::complex<double>;
  for (N3 n : {N3{8, 6, 11}, N3{9, 7, 10}}) {
    toru::fft::fft3d_r2c<double, fftw> host(MPI_COMM_WORLD, n);
    toru::fft::fft3d_r2c<double, cufft> dev(MPI_COMM_WORLD, n);
    const auto alloc = static_cast<std::size_t>(host.alloc_size());
    const auto nout = static_cast<std::size_t>(host.outbox().extent());
    const auto nreal = static_cast<std::size_t>(host.inbox().extent());
    std::vector<double> x(2 * alloc, 0.0);
    toru::test::for_each(host.inbox(), [&](std::array<std::int64_t, 3> g, std::int64_t i) {
      x[static_cast<std::size_t>(i)] = toru::test::noise(static_cast<std::uint64_t>(toru::test::flat(n, g)), 5);
    });
    std::vector<cpx> want(alloc);
    host.forward(x.data(), want.data());
    device_array<double> a(2 * alloc);
    device_array<cpx> b(alloc);
    a.upload(x);
    dev.forward(a.p, b.p);
    // The fft3d_r2c contract: out of place leaves the input intact (cuFFT's r2c must not clobber it).
    EXPECT_EQ(a.download(2 * alloc), x) << "out-of-place r2c changed its input";
    EXPECT_LT(rel_error(b.download(nout), head(want, nout)),
              toru::test::tolerance<double>(static_cast<double>(n[0] * n[1] * n[2])));
    device_array<double> c(2 * alloc);
    dev.backward(b.p, c.p, scale::full);
    const auto rt = c.download(nreal);
    toru::test::error_norm e;
    toru::test::for_each(host.inbox(), [&](std::array<std::int64_t, 3>, std::int64_t i) {
      e.add(rt[static_cast<std::size_t>(i)], x[static_cast<std::size_t>(i)]);
    });
    EXPECT_LT(e.rel(), toru::test::tolerance<double>(static_cast<double>(n[0] * n[1] * n[2])));
  }
}

template <class T>
void check_1d(std::int64_t n, order o, std::int64_t n1 = 0) {
  SCOPED_TRACE(::testing::Message() << "1D n=" << n << " " << toru::fft::to_string(o) << " "
                                    << (sizeof(T) == 8 ? "double" : "float"));
  using cpx = std::complex<T>;
  const toru::fft::options1d opts{.n1 = n1, .output = o};
  toru::fft::fft1d<T, fftw> host(MPI_COMM_WORLD, n, opts);
  toru::fft::fft1d<T, cufft> dev(MPI_COMM_WORLD, n, opts);
  const auto alloc = static_cast<std::size_t>(host.alloc_size());
  const auto nin = static_cast<std::size_t>(host.in_count()), nout = static_cast<std::size_t>(host.out_count());
  std::vector<cpx> x(alloc), want(alloc);
  for (std::size_t i = 0; i < nin; ++i) {
    const auto v = cnoise(i, 29 + static_cast<std::uint64_t>(toru::test::rank()));
    x[i] = cpx(static_cast<T>(v.real()), static_cast<T>(v.imag()));
  }
  host.forward(x.data(), want.data());
  device_array<cpx> a(alloc), b(alloc), c(alloc);
  a.upload(x);
  dev.forward(a.p, b.p);
  EXPECT_LT(rel_error(b.download(nout), head(want, nout)), toru::test::tolerance<T>(static_cast<double>(n)));
  dev.backward(b.p, c.p, scale::full);
  EXPECT_LT(rel_error(c.download(nin), head(x, nin)), toru::test::tolerance<T>(static_cast<double>(n)));
}

TEST(FftGpu, OneDimensionalMatchesFftw) {
  TORU_SKIP_WITHOUT_GPU();
  for (auto o : {order::natural, order::transposed}) {
    check_1d<double>(4096, o);
    check_1d<double>(1000, o);
    check_1d<double>(360, o, 24);
    check_1d<float>(2310, o);
  }
}

TEST(FftGpu, HostBufferRefusedOnEveryRank) {
  TORU_SKIP_WITHOUT_GPU();
  using cpx = std::complex<double>;
  toru::fft::fft3d<double, cufft> dev(MPI_COMM_WORLD, {8, 9, 10});
  std::vector<cpx> host_in(static_cast<std::size_t>(dev.alloc_size()));
  device_array<cpx> d(static_cast<std::size_t>(dev.alloc_size()));
  // Only rank 0 passes host memory; every rank must throw.
  const cpx* in = toru::test::rank() == 0 ? host_in.data() : d.p;
  try {
    dev.forward(in, d.p);
    ADD_FAILURE() << "a host input buffer was accepted";
  } catch (const toru::error& e) {
    EXPECT_EQ(e.code(), toru::errc::invalid_argument) << e.what();
    EXPECT_NE(e.message().find("device memory"), std::string::npos) << e.what();
  }
  // The plan stays usable.
  device_array<cpx> e(static_cast<std::size_t>(dev.alloc_size()));
  EXPECT_NO_THROW(dev.forward(d.p, e.p));
}

}  // namespace
