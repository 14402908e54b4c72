#include "wisdom.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "toru/comm/wisdom.hpp"
#include "toru/core/error.hpp"
#include "toru/core/mpi.hpp"

namespace toru::fft::detail {

namespace {
using json = nlohmann::json;
std::atomic<long> timings{0};
constexpr const char* section = "fft";

std::string wisdom_path() {
  const char* p = std::getenv("TORU_FFT_WISDOM");
  return p && *p ? p : "";
}

// Rank 0 only: the file's entries into the process's wisdom store. The file is either one wisdom
// document (toru::comm::export_wisdom's format, which this module writes) or an older fft-only one
// ({"toru_fft_wisdom": 1, "entries": {key: entry}}). A missing or malformed file adds nothing: it
// costs the plan a measurement, never an error.
void import_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return;
  std::ostringstream text;
  text << in.rdbuf();
  const json w = json::parse(text.str(), nullptr, false);
  if (!w.is_object()) return;
  if (w.contains("toru_fft_wisdom")) {
    if (w.contains("entries") && w["entries"].is_object())
      for (const auto& e : w["entries"].items()) comm::add_wisdom_entry(section, e.key(), e.value().dump());
    return;
  }
  try {
    comm::import_wisdom(text.str());
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
    if (table[i].applicable) times[table[i].s.name()] = worst[i];
  // Rank 0 re-reads the file first (another process may have written since), so that the whole
  // store written back below keeps those entries and this one.
  const bool write = !path.empty() && rank == 0;
  if (write) import_file(path);
  comm::add_wisdom_entry(section, key, json{{"strategy", table[choice].s.name()}, {"seconds", times}}.dump());
  if (write) {
    const std::string tmp = path + ".tmp" + std::to_string(::getpid());
    std::ofstream(tmp) << comm::export_wisdom() << "\n";
    // A file that cannot be written costs the next plan a re-measure, nothing else.
    std::rename(tmp.c_str(), path.c_str());
  }
  return choice;
}

}  // namespace toru::fft::detail
