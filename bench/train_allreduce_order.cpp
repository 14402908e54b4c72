// SPDX-License-Identifier: BSD-3-Clause
// Does MPI_Allreduce (MPI_SUM, float) give the same bits for an element whatever the count of the
// call it is in? The data-parallel engine's buckets change that count; docs/train.md records the
// answer for Open MPI. Build and run (bench/train-compare.sh does):
//   mpicxx -O2 -std=c++20 bench/train_allreduce_order.cpp -o /tmp/ar_order && mpiexec -n 3 /tmp/ar_order
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int n = 1 << 18;
  std::mt19937 rng(1234u + static_cast<unsigned>(rank));
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> g(n);
  for (auto& x : g) x = u(rng) * std::pow(10.0f, static_cast<float>(rng() % 7) - 3);
  // Reference: the whole buffer in one call.
  std::vector<float> whole(g);
  MPI_Allreduce(MPI_IN_PLACE, whole.data(), n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  for (int blocking : {0, 1})
    for (int bucket : {61, 1000, 4096, 16384, 65536, 131072}) {
      std::vector<float> out(g);
      std::vector<MPI_Request> reqs;
      for (int off = 0; off < n; off += bucket) {
        if (blocking) {
          MPI_Allreduce(MPI_IN_PLACE, out.data() + off, std::min(bucket, n - off), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
          continue;
        }
        reqs.emplace_back();
        MPI_Iallreduce(MPI_IN_PLACE, out.data() + off, std::min(bucket, n - off), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD,
                       &reqs.back());
      }
      MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE);
      long differ = 0;
      for (int i = 0; i < n; ++i) differ += std::memcmp(&out[i], &whole[i], sizeof(float)) != 0;
      long all = 0;
      MPI_Allreduce(&differ, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
      if (rank == 0)
        std::printf(
            "ranks %d %s bucket %7d floats: %ld of %d elements differ from the one-call sum (summed over ranks: %ld)\n",
            size, blocking ? "MPI_Allreduce " : "MPI_Iallreduce", bucket, differ, n, all);
    }
  MPI_Finalize();
}
