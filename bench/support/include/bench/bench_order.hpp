// SPDX-License-Identifier: BSD-3-Clause
// bench/bench_order.hpp (bench/support): the order in which a bundled benchmark times its rows, one rep after
// another. A row that always runs right after the same neighbour inherits that neighbour's state:
// on the emulated torus, TCP connections that MPI_Alltoall has just driven into loss; on one node,
// the caches another plan left. A fixed rotation does that to every row, and a seeded shuffle of
// three rows did it too (toru-alltoall-bench's `auto` ran after MPI_Alltoall in 3 of 5 reps and
// `indirect` in none, and read 2-6 points of T_min lower with the same plan).
//
//   for (int rep = -warmup; rep < reps; ++rep)
//     for (std::size_t k : toru::apps::balanced_order(rows.size(), rep)) time(k);
#pragma once

#include <cstddef>
#include <vector>

namespace toru::apps {

/// Repetitions after which balanced_order repeats: n for even n, 2n for odd n.
std::size_t balanced_cycle(std::size_t n);

/// Row order for repetition `rep` (any integer; warm-ups may count from -warmup): a Williams design,
/// so that over balanced_cycle(n) reps every row runs once per rep and immediately after every other
/// row equally often (once for even n, twice for odd n). Timed reps start the cycle at rep 0.
std::vector<std::size_t> balanced_order(std::size_t n, long long rep);

}  // namespace toru::apps
