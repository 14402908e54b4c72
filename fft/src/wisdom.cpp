#include "wisdom.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "toru/core/mpi.hpp"

namespace toru::fft::detail {

namespace {
using json = nlohmann::json;
std::atomic<long> timings{0};

std::string wisdom_path() {
  const char* p = std::getenv("TORU_FFT_WISDOM");
  return p && *p ? p : "";
}

json read_wisdom(const std::string& path) {
  std::ifstream in(path);
  if (!in) return json::object();
  json w = json::parse(in, nullptr, false);
  return w.is_object() ? w : json::object();
}

// Rank 0's choice by name (the table's order may change between versions; names are stable): the
// index of the applicable candidate called so, or -1.
int recorded(const json& w, const std::string& key, const std::vector<candidate>& table) {
  if (!w.contains("entries") || !w["entries"].is_object() || !w["entries"].contains(key)) return -1;
  const json& e = w["entries"][key];
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
  const std::string path = wisdom_path();
  const int rank = mpi_rank(comm);
  int choice = -1;
  if (!path.empty()) {
    if (rank == 0) choice = recorded(read_wisdom(path), key, table);
    check_mpi(MPI_Bcast(&choice, 1, MPI_INT, 0, comm), "MPI_Bcast");
    if (choice >= 0) {
      if (seconds) seconds->clear();
      return choice;
    }
  }
  std::vector<double> t(table.size(), 0);
  for (int i = 0; i < static_cast<int>(table.size()); ++i) {
    if (!table[i].applicable) continue;
    t[i] = time(i);
    ++timings;
  }
  choice = fastest(comm, table, t);
  if (seconds) *seconds = t;
  if (!path.empty() && rank == 0) {
    // Re-read (another plan of this process may have written since), add, replace atomically.
    json w = read_wisdom(path);
    w["toru_fft_wisdom"] = 1;
    json times = json::object();
    for (std::size_t i = 0; i < table.size(); ++i)
      if (table[i].applicable) times[table[i].s.name()] = t[i];
    w["entries"][key] = {{"strategy", table[choice].s.name()}, {"seconds", times}};
    const std::string tmp = path + ".tmp" + std::to_string(::getpid());
    std::ofstream(tmp) << w.dump(1) << "\n";
    // A file that cannot be written costs the next plan a re-measure, nothing else.
    std::rename(tmp.c_str(), path.c_str());
  }
  return choice;
}

}  // namespace toru::fft::detail
