// SPDX-License-Identifier: BSD-3-Clause
#include "toru/comm/wisdom.hpp"

#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "alltoall_impl.hpp"
#include "toru/comm/wisdom_store.hpp"
#include "toru/core/agreement.hpp"
#include "toru/core/error.hpp"
#include "toru/core/mpi.hpp"
#include "wisdom_entries.hpp"

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
  // The wisdom store's format (toru/comm/wisdom_store.hpp): this module's entries are its "comm"
  // section, the other modules' sections sit beside it.
  nlohmann::json doc{{"toru_wisdom", 1}};
  for (const auto& [name, value] : s.sections.items()) doc[name] = value;
  doc["comm"] = {{"entries", entries}};
  return doc.dump(2);
}

void import_wisdom(std::string_view text) {
  // The store reads this and the older formats into sections (throwing for what is neither).
  wisdom_store doc("");
  doc.put_document(text, "wisdom");
  nlohmann::json sections = nlohmann::json::object();
  for (const auto& name : doc.sections()) sections[name] = nlohmann::json::parse(doc.get_section(name));
  nlohmann::json comm_section = sections.contains("comm") ? sections["comm"] : nlohmann::json::object();
  sections.erase("comm");
  if (!comm_section.contains("entries")) comm_section["entries"] = nlohmann::json::array();
  expect(comm_section["entries"].is_array(), "wisdom section \"comm\"", R"({"entries": [...]})",
         comm_section.dump().substr(0, 80));
  std::vector<detail::wisdom_entry> parsed;
  for (const auto& e : comm_section["entries"]) {
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
  // The file's sections of other users (the tuner's, CGDP's) stay: the store replaces only ours.
  wisdom_store w(path);
  if (mpi_rank(comm) == 0) w.put_document(export_wisdom());
  w.save(comm);
}

void load_wisdom(MPI_Comm comm, const std::string& path) {
  expect_intracommunicator(comm, "comm");
  wisdom_store w(path);
  w.load(comm, true);
  const std::string doc = w.document();
  validate_collectively(comm, [&] { import_wisdom(doc); });
}

}  // namespace toru::comm
