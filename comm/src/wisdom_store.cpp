// SPDX-License-Identifier: BSD-3-Clause
#include "toru/comm/wisdom_store.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "toru/core/agreement.hpp"
#include "toru/core/error.hpp"
#include "toru/core/log.hpp"
#include "toru/core/mpi.hpp"

namespace toru::comm {

namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;
constexpr const char* format_key = "toru_wisdom";

bool is_object_of_objects(const json& j) {
  if (!j.is_object()) return false;
  for (const auto& e : j.items())
    if (!e.value().is_object()) return false;
  return true;
}

// A document of this or an older format as {section: object}. The older formats each held one
// user's choices; they become that user's section unchanged, apart from comm's, whose other
// modules' "sections" become sections of their own.
json sections_of(const json& doc, std::string_view origin) {
  const auto refuse = [&](std::string_view what) {
    throw error(
        errc::invalid_argument,
        fmt::format("{}: expected a toru wisdom file ({{\"toru_wisdom\": 1, \"<section>\": {{...}}, ...}} or an "
                    "older comm, fft, tune or cgdp wisdom file), got {}",
                    origin, what));
  };
  if (!doc.is_object()) refuse(fmt::format("JSON {}", doc.type_name()));
  json out = json::object();
  if (doc.contains(format_key)) {
    if (doc[format_key] != 1) refuse(fmt::format("format version {}", doc[format_key].dump()));
    for (const auto& [name, value] : doc.items()) {
      if (name == format_key) continue;
      if (!value.is_object()) refuse(fmt::format("section \"{}\" holding JSON {}", name, value.type_name()));
      out[name] = value;
    }
  } else if (doc.contains("toru_alltoall_wisdom")) {
    if (!doc.contains("entries") || !doc["entries"].is_array()) refuse("a comm wisdom file without \"entries\": [...]");
    out["comm"] = json{{"entries", doc["entries"]}};
    if (doc.contains("sections")) {
      if (!is_object_of_objects(doc["sections"])) refuse("comm wisdom \"sections\" that are not objects");
      for (const auto& [name, value] : doc["sections"].items()) out[name] = value;
    }
  } else if (doc.contains("toru_fft_wisdom") || doc.contains("toru_tune_wisdom")) {
    const bool fft = doc.contains("toru_fft_wisdom");
    if (!doc.contains("entries") || !doc["entries"].is_object())
      refuse(fmt::format("a {} wisdom file without \"entries\": {{...}}", fft ? "fft" : "tune"));
    out[fft ? "fft" : "tune"] = doc["entries"];
  } else {
    // CGDP's chunk cache had no marker: an object of {"chunk_layers": n, ...} per key.
    bool cgdp = !doc.empty();
    for (const auto& e : doc.items()) cgdp = cgdp && e.value().is_object() && e.value().contains("chunk_layers");
    if (!cgdp) refuse("an object without \"toru_wisdom\"");
    out["cgdp"] = doc;
  }
  return out;
}

json parse(std::string_view text, std::string_view origin) {
  json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded())
    throw error(errc::invalid_argument, fmt::format("{}: expected JSON, got text that does not parse", origin));
  return doc;
}

// The file's text; nullopt-like empty flag when it does not exist.
bool read_text(const std::string& path, std::string& text) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return false;
  std::ifstream in(path);
  if (!in) throw error(errc::io, fmt::format("wisdom file {}: cannot open for reading", path));
  std::ostringstream ss;
  ss << in.rdbuf();
  text = ss.str();
  return true;
}

// Rank 0's string on every rank.
std::string bcast(MPI_Comm comm, std::string s) {
  long long n = static_cast<long long>(s.size());
  check_mpi(MPI_Bcast(&n, 1, MPI_LONG_LONG, 0, comm), "MPI_Bcast");
  s.resize(static_cast<std::size_t>(n));
  if (n > 0) check_mpi(MPI_Bcast(s.data(), static_cast<int>(n), MPI_CHAR, 0, comm), "MPI_Bcast");
  return s;
}

}  // namespace

std::string wisdom_store::default_path() {
  if (const char* p = std::getenv("TORU_WISDOM"); p && *p) return p;
  const char* home = std::getenv("HOME");
  return (fs::path(home && *home ? home : "/tmp") / ".cache" / "toru" / "wisdom.json").string();
}

wisdom_store::wisdom_store(std::string path) : path_(std::move(path)) {}

void wisdom_store::read(bool must_exist) {
  expect(!path_.empty(), "wisdom path", "a file name", "\"\"");
  std::string text;
  if (!read_text(path_, text)) {
    if (must_exist) throw error(errc::io, fmt::format("wisdom file {}: cannot open for reading (missing)", path_));
    sections_.clear();
    put_.clear();
    return;
  }
  const std::string origin = fmt::format("wisdom file {}", path_);
  const json s = sections_of(parse(text, origin), origin);
  sections_.clear();
  put_.clear();
  for (const auto& [name, value] : s.items()) sections_[name] = value.dump();
}

void wisdom_store::write() {
  expect(!path_.empty(), "wisdom path", "a file name", "\"\"");
  // Sections other users saved since this store read the file stay: only ours replace theirs.
  json doc = json::object();
  std::string text;
  if (read_text(path_, text)) {
    try {
      const std::string origin = fmt::format("wisdom file {}", path_);
      doc = sections_of(parse(text, origin), origin);
    } catch (const error& e) {
      log::warn("{} (rewriting it with this process's sections only)", e.message());
      doc = json::object();
    }
  }
  for (const auto& [name, value] : sections_)
    if (put_.count(name) || !doc.contains(name)) doc[name] = json::parse(value);
  json out{{format_key, 1}};
  for (const auto& [name, value] : doc.items()) out[name] = value;
  std::error_code ec;
  const fs::path p(path_);
  if (p.has_parent_path()) fs::create_directories(p.parent_path(), ec);
  const std::string tmp = fmt::format("{}.tmp{}", path_, ::getpid());
  {
    std::ofstream f(tmp);
    f << out.dump(1) << '\n';
    if (!f) {
      std::remove(tmp.c_str());
      throw error(errc::io, fmt::format("wisdom file {}: cannot write {}", path_, tmp));
    }
  }
  if (std::rename(tmp.c_str(), path_.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    throw error(errc::io, fmt::format("wisdom file {}: cannot replace it: {}", path_, std::strerror(err)));
  }
  for (const auto& [name, value] : doc.items()) sections_[name] = value.dump();
}

void wisdom_store::load(MPI_Comm comm, bool must_exist) {
  expect_intracommunicator(comm, "comm");
  validate_collectively(comm, "toru::comm::wisdom_store::load", {same_text("path", path_)}, [&] {
    if (mpi_rank(comm) == 0) read(must_exist);
  });
  const std::string doc = bcast(comm, mpi_rank(comm) == 0 ? document() : "");
  if (mpi_rank(comm) != 0) {
    sections_.clear();
    put_document(doc);
  }
  put_.clear();
}

void wisdom_store::save(MPI_Comm comm) {
  expect_intracommunicator(comm, "comm");
  validate_collectively(comm, "toru::comm::wisdom_store::save", {same_text("path", path_)}, [] {});
  validate_collectively(comm, [&] {
    if (mpi_rank(comm) == 0) write();
  });
}

bool wisdom_store::has_section(std::string_view name) const { return sections_.find(name) != sections_.end(); }

std::string wisdom_store::get_section(std::string_view name) const {
  const auto it = sections_.find(name);
  return it == sections_.end() ? "{}" : it->second;
}

void wisdom_store::put_section(std::string_view name, std::string_view text) {
  expect(!name.empty() && name != format_key, "wisdom section", "a name other than \"\" and \"toru_wisdom\"",
         fmt::format("\"{}\"", name));
  const json value = json::parse(text, nullptr, false);
  expect(value.is_object(), fmt::format("wisdom section \"{}\"", name), "a JSON object",
         std::string(text.substr(0, 80)));
  sections_[std::string(name)] = value.dump();
  put_.insert(std::string(name));
}

std::vector<std::string> wisdom_store::sections() const {
  std::vector<std::string> names;
  for (const auto& [name, value] : sections_) names.push_back(name);
  return names;
}

std::string wisdom_store::document() const {
  json out{{format_key, 1}};
  for (const auto& [name, value] : sections_) out[name] = json::parse(value);
  return out.dump(1);
}

void wisdom_store::put_document(std::string_view text, std::string_view origin) {
  const json s = sections_of(parse(text, origin), origin);
  for (const auto& [name, value] : s.items()) {
    sections_[name] = value.dump();
    put_.insert(name);
  }
}

}  // namespace toru::comm
