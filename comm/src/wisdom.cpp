#include "toru/comm/wisdom.hpp"

#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "alltoall_impl.hpp"
#include "toru/core/agreement.hpp"
#include "toru/core/error.hpp"
#include "toru/core/mpi.hpp"
#include "wisdom_store.hpp"

namespace toru::comm {

namespace detail {

namespace {
struct store {
  std::mutex mutex;
  std::map<std::string, wisdom_entry> entries;
  nlohmann::json sections = nlohmann::json::object();  // section name -> {key: value}
};
store& the_store() {
  static store s;
  return s;
}
}  // namespace

std::string wisdom_key(int nranks, double bytes, bool equal, const std::string& torus) {
  return fmt::format("{}|{}|{:.0f}|{}", nranks, equal ? "equal" : "v", bytes, torus);
}

std::optional<wisdom_entry> find_wisdom(const std::string& key) {
  auto& s = the_store();
  std::lock_guard lock(s.mutex);
  auto it = s.entries.find(key);
  if (it == s.entries.end()) return std::nullopt;
  return it->second;
}

void add_wisdom(const wisdom_entry& e) {
  auto& s = the_store();
  std::lock_guard lock(s.mutex);
  s.entries[e.key] = e;
}

}  // namespace detail

std::string export_wisdom() {
  auto& s = detail::the_store();
  std::lock_guard lock(s.mutex);
  nlohmann::json entries = nlohmann::json::array();
  for (const auto& [key, e] : s.entries)
    entries.push_back({{"key", key},
                       {"nranks", e.nranks},
                       {"bytes", e.bytes},
                       {"variant", e.equal ? "equal" : "v"},
                       {"torus", e.torus},
                       {"algorithm", to_string(e.algorithm)},
                       {"chunks", e.chunks},
                       {"seconds", e.seconds}});
  nlohmann::json doc{{"toru_alltoall_wisdom", 1}, {"entries", entries}};
  if (!s.sections.empty()) doc["sections"] = s.sections;
  return doc.dump(2);
}

void import_wisdom(std::string_view text) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    expect(false, "wisdom", "JSON text", e.what());
  }
  expect(j.is_object() && j.value("toru_alltoall_wisdom", 0) == 1 && j.contains("entries") && j["entries"].is_array(),
         "wisdom", R"(an object {"toru_alltoall_wisdom": 1, "entries": [...]})", j.dump().substr(0, 80));
  std::vector<detail::wisdom_entry> parsed;
  for (const auto& e : j["entries"]) {
    detail::wisdom_entry w;
    try {
      w.nranks = e.at("nranks").get<int>();
      w.bytes = e.at("bytes").get<double>();
      w.equal = e.at("variant").get<std::string>() == "equal";
      w.torus = e.at("torus").get<std::string>();
      w.algorithm = algorithm_from_string(e.at("algorithm").get<std::string>());
      w.chunks = e.at("chunks").get<int>();
      w.seconds = e.value("seconds", 0.0);
    } catch (const nlohmann::json::exception& ex) {
      expect(false, "wisdom entry", "nranks, bytes, variant, torus, algorithm, chunks", ex.what());
    }
    expect(w.nranks >= 1 && w.chunks >= 1 && w.algorithm != alltoall_algorithm::automatic, "wisdom entry",
           "nranks >= 1, chunks >= 1 and a concrete algorithm", e.dump());
    w.key = detail::wisdom_key(w.nranks, w.bytes, w.equal, w.torus);
    parsed.push_back(std::move(w));
  }
  nlohmann::json sections = nlohmann::json::object();
  if (j.contains("sections")) {
    sections = j["sections"];
    bool ok = sections.is_object();
    if (ok)
      for (const auto& sec : sections.items()) ok = ok && sec.value().is_object();
    expect(ok, "wisdom sections", R"(an object of objects {"fft": {"<key>": ...}})", sections.dump().substr(0, 80));
  }
  for (const auto& w : parsed) detail::add_wisdom(w);
  auto& s = detail::the_store();
  std::lock_guard lock(s.mutex);
  for (const auto& sec : sections.items())
    for (const auto& e : sec.value().items()) s.sections[sec.key()][e.key()] = e.value();
}

std::string find_wisdom_entry(std::string_view section, std::string_view key) {
  auto& s = detail::the_store();
  std::lock_guard lock(s.mutex);
  const auto sec = s.sections.find(std::string(section));
  if (sec == s.sections.end()) return "";
  const auto e = sec->find(std::string(key));
  return e == sec->end() ? "" : e->dump();
}

void add_wisdom_entry(std::string_view section, std::string_view key, std::string_view json) {
  nlohmann::json value;
  try {
    value = nlohmann::json::parse(json);
  } catch (const nlohmann::json::exception& e) {
    expect(false, "wisdom entry", "JSON text", e.what());
  }
  auto& s = detail::the_store();
  std::lock_guard lock(s.mutex);
  s.sections[std::string(section)][std::string(key)] = std::move(value);
}

void forget_wisdom() {
  auto& s = detail::the_store();
  std::lock_guard lock(s.mutex);
  s.entries.clear();
  s.sections = nlohmann::json::object();
}

void save_wisdom(MPI_Comm comm, const std::string& path) {
  expect_intracommunicator(comm, "comm");
  // Only rank 0 writes, but a path that differs across ranks is a bug worth naming.
  validate_collectively(comm, "toru::comm::save_wisdom", {same_text("path", path)}, [] {});
  validate_collectively(comm, [&] {
    if (mpi_rank(comm) != 0) return;
    std::ofstream f(path);
    if (!f) throw error(errc::io, fmt::format("wisdom file {}: cannot open for writing", path));
    f << export_wisdom() << '\n';
    if (!f) throw error(errc::io, fmt::format("wisdom file {}: write failed", path));
  });
}

void load_wisdom(MPI_Comm comm, const std::string& path) {
  expect_intracommunicator(comm, "comm");
  std::string text;
  validate_collectively(comm, "toru::comm::load_wisdom", {same_text("path", path)}, [&] {
    if (mpi_rank(comm) != 0) return;
    std::ifstream f(path);
    if (!f) throw error(errc::io, fmt::format("wisdom file {}: cannot open for reading (missing or unreadable)", path));
    std::ostringstream ss;
    ss << f.rdbuf();
    text = ss.str();
  });
  int len = static_cast<int>(text.size());
  check_mpi(MPI_Bcast(&len, 1, MPI_INT, 0, comm), "MPI_Bcast");
  text.resize(static_cast<std::size_t>(len));
  check_mpi(MPI_Bcast(text.data(), len, MPI_CHAR, 0, comm), "MPI_Bcast");
  validate_collectively(comm, [&] { import_wisdom(text); });
}

}  // namespace toru::comm
