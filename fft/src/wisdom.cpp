// SPDX-License-Identifier: BSD-3-Clause
#include "wisdom.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "toru/comm/wisdom.hpp"
#include "toru/comm/wisdom_store.hpp"
#include "toru/core/error.hpp"
#include "toru/core/mpi.hpp"

namespace toru::fft::detail {

namespace {
using json = nlohmann::json;
std::atomic<long> timings{0};
constexpr const char* section = "fft";

// The wisdom file is opt-in for plans (a test suite's MEASURE plans must not share a file by
// default): $TORU_WISDOM, toru's one wisdom file, or the older $TORU_FFT_WISDOM.
std::string wisdom_path() {
  for (const char* name : {"TORU_WISDOM", "TORU_FFT_WISDOM"})
    if (const char* p = std::getenv(name); p && *p) return p;
  return "";
}

// Rank 0 only: the file's sections into the process's wisdom store (toru/comm/wisdom_store.hpp,
// which also reads the older fft-only {"toru_fft_wisdom": 1, ...}). A missing or malformed file
// adds nothing: it costs the plan a measurement, never an error.
void import_file(const std::string& path) {
  try {
    comm::wisdom_store w(path);
    w.read();
    comm::import_wisdom(w.document());
  } catch (const toru::error&) {
  }
}

// The index of the applicable candidate the store names for `key` (by name: the table's order may
// change between versions, names are stable), or -1.
int recorded(const std::string& key, const std::vector<candidate>& table) {
  const std::string text = comm::find_wisdom_entry(section, key);
  if (text.empty()) return -1;
  const json e = json::parse(text, nullptr, false);
  if (!e.is_object() || !e.contains("strategy") || !e["strategy"].is_string()) return -1;
  const std::string name = e["strategy"].get<std::string>();
  for (int i = 0; i < static_cast<int>(table.size()); ++i)
    if (table[i].applicable && table[i].s.name() == name) return i;
  return -1;
}
}  // namespace

long measured_timings() { return timings.load(); }

int measured_choice(MPI_Comm comm, const std::string& key, const std::vector<candidate>& table,
                    const std::function<double(int)>& time, std::vector<double>* seconds) {
  // One applicable candidate (TORU_FFT_STRATEGY, a forced path): nothing to choose, so nothing is
  // timed or recorded; a forced plan must not overwrite the table's measured choice in the store.
  const auto applicable = [](const candidate& c) { return c.applicable; };
  const auto first = std::find_if(table.begin(), table.end(), applicable);
  if (first != table.end() && std::find_if(first + 1, table.end(), applicable) == table.end()) {
    if (seconds) seconds->clear();
    return static_cast<int>(first - table.begin());
  }
  const std::string path = wisdom_path();
  const int rank = mpi_rank(comm);
  // Rank 0's store decides (another rank may have imported other wisdom), so every rank builds
  // the same plan.
  int choice = -1;
  if (rank == 0) {
    if (!path.empty()) import_file(path);
    choice = recorded(key, table);
  }
  check_mpi(MPI_Bcast(&choice, 1, MPI_INT, 0, comm), "MPI_Bcast");
  if (choice >= 0) {
    if (seconds) seconds->clear();
    return choice;
  }
  std::vector<double> worst;
  choice = timed_choice(
      comm, table,
      [&](int i) {
        ++timings;
        return time(i);
      },
      worst);
  if (seconds) *seconds = worst;
  // Every rank records the same entry (the slowest rank's figures), so that any rank's
  // export_wisdom() holds it.
  json times = json::object();
  for (std::size_t i = 0; i < table.size(); ++i)
    if (table[i].applicable && worst[i] > 0) times[table[i].s.name()] = worst[i];
  // Rank 0 re-reads the file first (another process may have written since), so that the whole
  // store written back below keeps those entries and this one.
  const bool write = !path.empty() && rank == 0;
  if (write) import_file(path);
  comm::add_wisdom_entry(section, key, json{{"strategy", table[choice].s.name()}, {"seconds", times}}.dump());
  if (write) {
    // A file that cannot be written costs the next plan a re-measure, nothing else. The store keeps
    // the file's other sections (the tuner's, CGDP's) and replaces it atomically.
    try {
      comm::wisdom_store w(path);
      w.put_document(comm::export_wisdom());
      w.write();
    } catch (const toru::error&) {
    }
  }
  return choice;
}

}  // namespace toru::fft::detail
