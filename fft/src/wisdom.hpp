// SPDX-License-Identifier: BSD-3-Clause
// effort::measure's strategy choice, cached like FFTW's wisdom (docs/fft.md, "Wisdom"), in the
// process's toru wisdom store (toru::comm::export_wisdom / import_wisdom, section "fft"): a plan
// whose key is in rank 0's store takes the recorded strategy without timing anything; otherwise it
// times its candidates and records the winner on every rank. With TORU_FFT_WISDOM naming a JSON
// file, rank 0 also imports it before the look-up and writes the whole store back after a
// measurement; rank 0's choice is broadcast, so every rank builds the same plan.
#pragma once

#include <mpi.h>

#include <functional>
#include <string>
#include <vector>

#include "strategy.hpp"

namespace toru::fft::detail {

/// Collective over comm: the index of the chosen candidate. `key` names the plan (sizes, ranks,
/// layout, flags: whatever changes the table or the timings); rank 0's key is the one looked up.
/// time(i) times candidate i (collective; timed_choice's protocol, strategy.hpp); `seconds`, when
/// given, receives the deciding figures, max over ranks (left empty when the choice came from the
/// wisdom file).
int measured_choice(MPI_Comm comm, const std::string& key, const std::vector<candidate>& table,
                    const std::function<double(int)>& time, std::vector<double>* seconds = nullptr);

/// Candidates timed by measured_choice in this process (for the test that wisdom skips timing).
long measured_timings();

}  // namespace toru::fft::detail
