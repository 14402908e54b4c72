// SPDX-License-Identifier: BSD-3-Clause
// One file for every choice toru measures and keeps between runs, each user in a section of its own:
//
//   {"toru_wisdom": 1,
//    "comm": {"entries": [...]},        all-to-all algorithm and chunks (toru/comm/wisdom.hpp)
//    "fft":  {"<plan key>": {...}},     the fft planner's strategies (effort::measure)
//    "tune": {"<key>": {...}},          toru::tune::tuner's configurations
//    "cgdp": {"<key>": {...}}}          toru-train's CGDP chunk sizes
//
// The file is $TORU_WISDOM, else ~/.cache/toru/wisdom.json (default_path()). Files in the formats
// that came before are read as the section they held: comm's {"toru_alltoall_wisdom": 1, ...}, fft's
// {"toru_fft_wisdom": 1, ...}, the tuner's {"toru_tune_wisdom": 1, ...} and CGDP's
// {"<key>": {"chunk_layers": n, ...}}; saving writes this format.
//
//   toru::comm::wisdom_store w;                   // default_path()
//   w.load(MPI_COMM_WORLD);                       // collective: rank 0 reads, every rank gets it
//   std::string tune = w.get_section("tune");     // JSON text; "{}" when absent
//   w.put_section("tune", changed);
//   w.save(MPI_COMM_WORLD);                       // collective: rank 0 merges into the file
//
// Saving re-reads the file and replaces only the sections this store put, so users that save their
// own sections to one file keep each other's; the new file is written beside the old one and renamed
// over it, so a reader sees the old or the new file, never a torn one. Sections cross this interface
// as JSON text so that the header does not pull nlohmann/json.hpp into its users. A store object is
// not thread-safe; the file may be shared by processes.
#pragma once

#include <mpi.h>

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace toru::comm {

class wisdom_store {
 public:
  /// $TORU_WISDOM if set and not empty, else $HOME/.cache/toru/wisdom.json (/tmp/... without HOME).
  static std::string default_path();

  explicit wisdom_store(std::string path = default_path());
  const std::string& path() const noexcept { return path_; }

  // ---- this process alone ----

  /// Replaces the sections by the file's. A missing file is an empty store, unless must_exist
  /// (errc::io then). errc::io when the file cannot be read; errc::invalid_argument naming the file
  /// and what is wrong when it is not a wisdom file of this or an older format.
  void read(bool must_exist = false);
  /// Writes the file: its current sections (a malformed file's are dropped, with a warning), with the
  /// sections put on this store in place of theirs; atomic (temporary + rename). errc::io on failure.
  void write();

  // ---- collective over comm: rank 0 does the file work; a failure is the same error on every rank ----

  /// As read() on rank 0, whose sections every rank then holds. `path` must agree (errc::mismatch).
  void load(MPI_Comm comm, bool must_exist = false);
  /// As write() on rank 0 (rank 0's sections are written). `path` must agree (errc::mismatch).
  void save(MPI_Comm comm);

  // ---- sections ----

  bool has_section(std::string_view name) const;
  /// The section as JSON text (an object); "{}" when absent.
  std::string get_section(std::string_view name) const;
  /// Adds or replaces a section; `json` must be a JSON object (errc::invalid_argument otherwise, or
  /// for an empty name or "toru_wisdom"). The next write() or save() writes it.
  void put_section(std::string_view name, std::string_view json);
  /// The names of the sections held.
  std::vector<std::string> sections() const;

  /// The whole store as a wisdom document (this format).
  std::string document() const;
  /// Puts every section of a wisdom document (this or an older format; `origin` names it in errors).
  void put_document(std::string_view json, std::string_view origin = "wisdom document");

 private:
  std::string path_;
  std::map<std::string, std::string, std::less<>> sections_;  // name -> JSON text of an object
  std::set<std::string, std::less<>> put_;                    // sections put since the last read
};

}  // namespace toru::comm
