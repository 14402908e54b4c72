// SPDX-License-Identifier: BSD-3-Clause
// The cufft backend without a GPU: building any cufft plan throws errc::no_device on every rank
// (collectively, so no rank hangs). CTest runs this with CUDA_VISIBLE_DEVICES empty, which hides
// every device, so the path is exercised on machines with GPUs too.
#include <gtest/gtest.h>

#include <functional>

#include "mpi_test.hpp"
#include "toru/core/device.hpp"
#include "toru/core/error.hpp"
#include "toru/fft/fft1d.hpp"
#include "toru/fft/fft3d.hpp"

namespace {

using toru::fft::cufft;

void expect_no_device(const char* what, const std::function<void()>& make) {
  SCOPED_TRACE(what);
  try {
    make();
    ADD_FAILURE() << what << ": a cufft plan was built without a GPU";
  } catch (const toru::error& e) {
    EXPECT_EQ(e.code(), toru::errc::no_device) << e.what();
    EXPECT_NE(e.message().find("CUDA device"), std::string::npos) << e.what();
  }
  // Every rank got here (no hang) and still agrees.
  int ok = 1, all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(all, toru::test::nranks());
}

TEST(FftGpuNoDevice, EveryCufftPlanThrowsNoDeviceOnEveryRank) {
  ASSERT_EQ(toru::gpu_count(), 0) << "this test expects no visible GPU (CTest sets CUDA_VISIBLE_DEVICES empty)";
  expect_no_device("fft3d<double>", [] { toru::fft::fft3d<double, cufft> p(MPI_COMM_WORLD, {8, 9, 10}); });
  expect_no_device("fft3d<float> pencil", [] {
    toru::fft::fft3d<float, cufft> p(MPI_COMM_WORLD, {12, 12, 12}, {.decomp = toru::fft::decomposition::pencil});
  });
  expect_no_device("fft3d_r2c<double>", [] { toru::fft::fft3d_r2c<double, cufft> p(MPI_COMM_WORLD, {8, 9, 11}); });
  expect_no_device("fft1d<double>", [] { toru::fft::fft1d<double, cufft> p(MPI_COMM_WORLD, 4096); });
}

TEST(FftGpuNoDevice, BadArgumentsAreReportedBeforeTheDevice) {
  // Invalid sizes are the caller's first problem, whatever the machine.
  try {
    toru::fft::fft3d<double, cufft> p(MPI_COMM_WORLD, {0, 4, 4});
    ADD_FAILURE() << "a zero size was accepted";
  } catch (const toru::error& e) {
    EXPECT_EQ(e.code(), toru::errc::invalid_argument) << e.what();
  }
}

}  // namespace
