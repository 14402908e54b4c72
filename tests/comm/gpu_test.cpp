// SPDX-License-Identifier: BSD-3-Clause
// Device buffers through comm/ (CUDA-aware MPI or pinned staging) and the NCCL transport.
// Built only with CUDA; every test skips, with the reason, where a rank has no GPU.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <vector>

#include "mpi_test.hpp"
#include "toru/comm/alltoall_plan.hpp"
#include "toru/comm/nccl.hpp"

namespace {

using toru::comm::alltoall_algorithm;

TEST(gpu, device_buffers_staged_or_cuda_aware) {
  TORU_SKIP_WITHOUT_GPU();
  const int P = toru::test::nranks();
  const std::size_t n = 10 * static_cast<std::size_t>(P);
  std::vector<int> in(n), out(n), want(n);
  for (std::size_t i = 0; i < n; ++i) in[i] = toru::test::rank() * 1000 + static_cast<int>(i);
  MPI_Alltoall(in.data(), 10, MPI_INT, want.data(), 10, MPI_INT, MPI_COMM_WORLD);
  int *d_in = nullptr, *d_out = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&d_in), n * sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&d_out), n * sizeof(int)), cudaSuccess);
  cudaMemcpy(d_in, in.data(), n * sizeof(int), cudaMemcpyHostToDevice);
  toru::comm::communicator comm(MPI_COMM_WORLD);
  for (auto a : {alltoall_algorithm::direct, alltoall_algorithm::indirect}) {
    toru::comm::alltoall_plan plan(comm, 10, MPI_INT, {.algorithm = a});
    cudaMemset(d_out, 0, n * sizeof(int));
    plan.execute(d_in, d_out);
    cudaMemcpy(out.data(), d_out, n * sizeof(int), cudaMemcpyDeviceToHost);
    EXPECT_EQ(out, want);
  }
  cudaFree(d_in);
  cudaFree(d_out);
}

TEST(gpu, nccl_alltoall) {
  if (!toru::comm::nccl_communicator::enabled()) GTEST_SKIP() << "built without NCCL";
  TORU_SKIP_WITHOUT_GPU();
  const int P = toru::test::nranks();
  const std::size_t n = 8 * static_cast<std::size_t>(P);
  std::vector<int> in(n), out(n), want(n);
  for (std::size_t i = 0; i < n; ++i) in[i] = toru::test::rank() * 1000 + static_cast<int>(i);
  MPI_Alltoall(in.data(), 8, MPI_INT, want.data(), 8, MPI_INT, MPI_COMM_WORLD);
  toru::comm::communicator comm(MPI_COMM_WORLD);
  toru::comm::nccl_communicator nccl(comm);
  int *d_in = nullptr, *d_out = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&d_in), n * sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&d_out), n * sizeof(int)), cudaSuccess);
  cudaMemcpy(d_in, in.data(), n * sizeof(int), cudaMemcpyHostToDevice);
  nccl.alltoall(d_in, d_out, 8 * sizeof(int));
  cudaDeviceSynchronize();
  cudaMemcpy(out.data(), d_out, n * sizeof(int), cudaMemcpyDeviceToHost);
  EXPECT_EQ(out, want);
  cudaFree(d_in);
  cudaFree(d_out);
}

}  // namespace
