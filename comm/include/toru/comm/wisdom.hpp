// SPDX-License-Identifier: BSD-3-Clause
// All-to-all wisdom: the choices measure mode made, kept per process and saved/loaded as JSON so a
// later run skips the measurement (like FFTW wisdom).
//
//   toru::comm::load_wisdom(MPI_COMM_WORLD, "a2a.json");        // collective; throws errc::io if missing
//   toru::comm::alltoall_plan plan(comm, n, MPI_DOUBLE, {.measure = true});
//   toru::comm::save_wisdom(MPI_COMM_WORLD, "a2a.json");
//
// The store is process-wide and thread-safe. An entry is keyed by the exchange (ranks, bytes per
// pair, variant, torus spec) and holds the algorithm and chunk count every rank agreed on.
//
// File format: toru's one wisdom file (toru/comm/wisdom_store.hpp), whose "comm" section holds
// {"entries": [{"key": "...", "nranks": 4, "bytes": 65536, "variant": "equal", "torus": "2x2",
// "algorithm": "indirect", "chunks": 4, "seconds": 1.2e-3}]}. Other modules keep their measured
// choices in the same store and document, each in a section of its own (toru::fft's plan strategies
// in "fft"), so one export/import or save/load carries all of toru's wisdom; save_wisdom keeps the
// file's sections this process does not hold (the tuner's "tune", CGDP's "cgdp"). Files of the older
// format {"toru_alltoall_wisdom": 1, "entries": [...], "sections": {...}} still load.
#pragma once

#include <mpi.h>

#include <string>
#include <string_view>

namespace toru::comm {

/// The store as JSON text.
std::string export_wisdom();
/// Merges JSON text into the store (its entries win). Throws toru::error(invalid_argument) naming
/// what is malformed; the store is unchanged then.
void import_wisdom(std::string_view json);
/// Entry `key` of another module's section (JSON text of the value), or "" when there is none.
std::string find_wisdom_entry(std::string_view section, std::string_view key);
/// Adds or replaces entry `key` of `section`; `json` is the value as JSON text (throws
/// toru::error(invalid_argument) when it does not parse).
void add_wisdom_entry(std::string_view section, std::string_view key, std::string_view json);
/// Empties the store (sections included).
void forget_wisdom();
/// Collective: rank 0 writes the store to `path` (errors agreed on every rank, errc::io). `path` must
/// be the same on every rank (errc::mismatch otherwise).
void save_wisdom(MPI_Comm comm, const std::string& path);
/// Collective: rank 0 reads `path` and every rank imports it. A missing or unreadable file throws
/// errc::io on every rank (check for the file first where it is optional); malformed content throws
/// errc::invalid_argument on every rank; a path that differs across ranks, errc::mismatch.
void load_wisdom(MPI_Comm comm, const std::string& path);

}  // namespace toru::comm
