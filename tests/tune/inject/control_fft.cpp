// SPDX-License-Identifier: BSD-3-Clause
// Control with toru inside: a 3D FFT round trip and an all-reduce per step, balanced. The tool must
// find nothing, and the profile must hold toru's own phases (fft.execute, comm.alltoall).
#include <mpi.h>

#include <complex>
#include <vector>

#include "toru/fft/fft3d.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  {
    toru::fft::fft3d<double> plan(MPI_COMM_WORLD, {48, 48, 48}, {.decomp = toru::fft::decomposition::slab});
    std::vector<std::complex<double>> a(plan.alloc_size(), 1.0), b(plan.alloc_size());
    double x = 1, sum = 0;
    for (int it = 0; it < 30; ++it) {
      plan.forward(a.data(), b.data());
      plan.backward(b.data(), a.data(), toru::fft::scale::full);
      MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
  }
  MPI_Finalize();
  return 0;
}
