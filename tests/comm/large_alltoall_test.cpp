// SPDX-License-Identifier: BSD-3-Clause
// A real all-to-all beyond MPI's int counts: more than 2 GiB per rank (count * ranks > INT_MAX), in
// place through the drop-in call, which must carry it with a derived datatype.
#include <gtest/gtest.h>
#include <mpi.h>

#include <climits>
#include <cstdint>
#include <fstream>
#include <memory>
#include <string>

#include "mpi_test.hpp"
#include "toru/comm/alltoall.hpp"

namespace {

std::int64_t available_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  std::int64_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return 0;
}

// ThreadSanitizer keeps shadow and meta memory for every byte the program touches, about four
// times its size (the test, which ran out of a 24 GiB machine's memory under it, asks for the
// headroom instead of being killed).
#if defined(__SANITIZE_THREAD__)
constexpr std::int64_t sanitizer_factor = 5;
#else
constexpr std::int64_t sanitizer_factor = 1;
#endif

unsigned char pattern(std::int64_t i, int from, int to) {
  return static_cast<unsigned char>((i * 13 + from * 31 + to * 7 + (i >> 20)) & 0xff);
}

TEST(large_count, in_place_alltoall_of_more_than_2_gib_per_rank) {
  const int P = toru::test::nranks(), me = toru::test::rank();
  const std::int64_t per_pair = INT_MAX / P + (1 << 20);  // count * P > INT_MAX; count itself an int
  const std::int64_t total = per_pair * P;
  // Each rank holds its buffer plus what Open MPI's in-place all-to-all keeps aside (one block).
  const std::int64_t need = sanitizer_factor * (P * (total + per_pair) + (std::int64_t{1} << 30));
  int enough = available_bytes() >= need ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &enough, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!enough)
    GTEST_SKIP() << "needs " << need / (1 << 20) << " MiB of free memory"
                 << (sanitizer_factor > 1 ? " (ThreadSanitizer's shadow memory included)" : "");

  std::unique_ptr<unsigned char[]> buf(new unsigned char[static_cast<std::size_t>(total)]);
  for (int to = 0; to < P; ++to)
    for (std::int64_t i = 0; i < per_pair; ++i) buf[static_cast<std::size_t>(to * per_pair + i)] = pattern(i, me, to);
  EXPECT_EQ(toru::comm::alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf.get(), static_cast<int>(per_pair), MPI_BYTE,
                                 MPI_COMM_WORLD),
            MPI_SUCCESS);
  std::int64_t wrong = 0;
  for (int from = 0; from < P; ++from)
    for (std::int64_t i = 0; i < per_pair; ++i)
      wrong += buf[static_cast<std::size_t>(from * per_pair + i)] != pattern(i, from, me) ? 1 : 0;
  EXPECT_EQ(wrong, 0);
}

}  // namespace
