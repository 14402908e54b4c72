// SPDX-License-Identifier: BSD-3-Clause
// toru's one wisdom file: each user's section round-trips, sections saved by different users
// coexist, older files read as their section, and a corrupt file is the same clear error on every rank.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "mpi_test.hpp"
#include "toru/comm/wisdom.hpp"
#include "toru/comm/wisdom_store.hpp"
#include "toru/core/error.hpp"

namespace {

using json = nlohmann::json;
using toru::comm::wisdom_store;

// A file name every rank agrees on (rank 0's), removed by rank 0 before and after.
class scratch_file {
 public:
  explicit scratch_file(const std::string& name) {
    std::string p = (std::filesystem::temp_directory_path() /
                     (name + "-" + std::to_string(static_cast<long>(std::time(nullptr))) + ".json"))
                        .string();
    int n = static_cast<int>(p.size());
    MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
    p.resize(static_cast<std::size_t>(n));
    MPI_Bcast(p.data(), n, MPI_CHAR, 0, MPI_COMM_WORLD);
    path = p;
    if (toru::test::rank() == 0) std::filesystem::remove(path);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  ~scratch_file() {
    MPI_Barrier(MPI_COMM_WORLD);
    if (toru::test::rank() == 0) std::filesystem::remove(path);
  }
  void write(const std::string& text) const {
    if (toru::test::rank() == 0) std::ofstream(path) << text;
    MPI_Barrier(MPI_COMM_WORLD);
  }
  json read() const {
    std::ifstream in(path);
    return json::parse(in);
  }
  std::string path;
};

TEST(wisdom_store, each_section_round_trips) {
  scratch_file f("toru-wisdom-round-trip");
  const json tune = {{"fft 64^3 x4", {{"config", {{"chunks", 4}}}, {"seconds", 0.5}}}};
  const json cgdp = {{"mlp/batch32/ranks2/host/2threads", {{"chunk_layers", 3}, {"trials", "1:2.0 3:1.5"}}}};
  const json fft = {{"c2c 8x8x8", {{"strategy", "slab"}, {"seconds", {{"slab", 1e-3}}}}}};
  {
    wisdom_store w(f.path);
    w.put_section("tune", tune.dump());
    w.put_section("cgdp", cgdp.dump());
    w.put_section("fft", fft.dump());
    w.save(MPI_COMM_WORLD);
  }
  wisdom_store r(f.path);
  r.load(MPI_COMM_WORLD);
  EXPECT_EQ(json::parse(r.get_section("tune")), tune);
  EXPECT_EQ(json::parse(r.get_section("cgdp")), cgdp);
  EXPECT_EQ(json::parse(r.get_section("fft")), fft);
  EXPECT_FALSE(r.has_section("comm"));
  EXPECT_EQ(r.get_section("comm"), "{}");
  EXPECT_EQ(f.read().value("toru_wisdom", 0), 1);

  // comm's section through its own calls: an entry saved, forgotten and loaded again.
  toru::comm::forget_wisdom();
  toru::comm::import_wisdom(R"({"toru_wisdom": 1, "comm": {"entries": [{"nranks": 4, "bytes": 4096,
      "variant": "equal", "torus": "2x2", "algorithm": "pairwise", "chunks": 1, "seconds": 0.25}]}})");
  toru::comm::save_wisdom(MPI_COMM_WORLD, f.path);
  toru::comm::forget_wisdom();
  toru::comm::load_wisdom(MPI_COMM_WORLD, f.path);
  const json exported = json::parse(toru::comm::export_wisdom());
  ASSERT_EQ(exported["comm"]["entries"].size(), 1u) << exported.dump();
  const json& e = exported["comm"]["entries"][0];
  EXPECT_EQ(e["algorithm"], "pairwise");
  EXPECT_EQ(e["bytes"], 4096);
  EXPECT_EQ(e["torus"], "2x2");
  // save_wisdom kept the sections it does not own.
  const json file = f.read();
  EXPECT_EQ(file["tune"], tune);
  EXPECT_EQ(file["cgdp"], cgdp);
  toru::comm::forget_wisdom();
}

// Two users, each with its own store object and no knowledge of the other's section, save to one
// file in turn: both sections are there afterwards, and so is comm's after save_wisdom.
TEST(wisdom_store, sections_of_different_users_coexist) {
  scratch_file f("toru-wisdom-coexist");
  const json tune = {{"k", {{"config", {{"v", 4}}}, {"seconds", 1.0}}}};
  const json cgdp = {{"k", {{"chunk_layers", 2}, {"trials", ""}}}};
  {
    wisdom_store tuner(f.path);  // no load: the file does not exist yet
    tuner.put_section("tune", tune.dump());
    tuner.save(MPI_COMM_WORLD);
  }
  {
    wisdom_store trainer(f.path);  // a store that never read the file
    trainer.put_section("cgdp", cgdp.dump());
    trainer.save(MPI_COMM_WORLD);
  }
  toru::comm::forget_wisdom();
  toru::comm::import_wisdom(R"({"toru_wisdom": 1, "comm": {"entries": [{"nranks": 2, "bytes": 64,
      "variant": "v", "torus": "2", "algorithm": "direct", "chunks": 1}]}})");
  toru::comm::save_wisdom(MPI_COMM_WORLD, f.path);
  toru::comm::forget_wisdom();
  const json file = f.read();
  EXPECT_EQ(file["tune"], tune) << file.dump();
  EXPECT_EQ(file["cgdp"], cgdp) << file.dump();
  ASSERT_TRUE(file.contains("comm")) << file.dump();
  EXPECT_EQ(file["comm"]["entries"].size(), 1u);
  // The same section saved again replaces the old one and only it.
  wisdom_store again(f.path);
  again.put_section("tune", R"({"other": {"config": {}}})");
  again.save(MPI_COMM_WORLD);
  const json after = f.read();
  EXPECT_FALSE(after["tune"].contains("k"));
  EXPECT_TRUE(after["tune"].contains("other"));
  EXPECT_EQ(after["cgdp"], cgdp);
}

TEST(wisdom_store, older_files_read_as_their_section) {
  scratch_file f("toru-wisdom-old");
  const json cgdp = {{"resnet/batch8/ranks1/h/4threads", {{"chunk_layers", 5}, {"trials", "5:1.0"}}}};
  f.write(cgdp.dump());
  wisdom_store w(f.path);
  w.load(MPI_COMM_WORLD);
  EXPECT_EQ(json::parse(w.get_section("cgdp")), cgdp);
  f.write(R"({"toru_tune_wisdom": 1, "entries": {"k": {"config": {"v": 2}}}})");
  w.load(MPI_COMM_WORLD);
  EXPECT_EQ(json::parse(w.get_section("tune")), json::parse(R"({"k": {"config": {"v": 2}}})"));
  EXPECT_FALSE(w.has_section("cgdp"));  // load replaces, it does not merge
  f.write(R"({"toru_alltoall_wisdom": 1, "entries": [], "sections": {"fft": {"p": {"strategy": "s"}}}})");
  w.load(MPI_COMM_WORLD);
  EXPECT_EQ(json::parse(w.get_section("comm")), json::parse(R"({"entries": []})"));
  EXPECT_EQ(json::parse(w.get_section("fft")), json::parse(R"({"p": {"strategy": "s"}})"));
}

// The error is raised on rank 0, which alone reads the file, and must reach every rank with the
// same code and a message naming the file.
TEST(wisdom_store, corrupt_file_is_a_clear_error_on_every_rank) {
  scratch_file f("toru-wisdom-corrupt");
  for (const char* text : {"{\"toru_wisdom\": 1, \"tune\": {", "[1, 2, 3]", R"({"toru_wisdom": 1, "tune": 7})",
                           R"({"toru_wisdom": 2})", R"({"some": "other file"})"}) {
    f.write(text);
    wisdom_store w(f.path);
    try {
      w.load(MPI_COMM_WORLD);
      ADD_FAILURE() << "loaded " << text;
    } catch (const toru::error& e) {
      EXPECT_EQ(e.code(), toru::errc::invalid_argument) << text;
      EXPECT_NE(e.message().find(f.path), std::string::npos) << e.message();
      EXPECT_NE(e.message().find("wisdom"), std::string::npos) << e.message();
    }
    // comm's own load goes through the store and fails alike.
    EXPECT_THROW(toru::comm::load_wisdom(MPI_COMM_WORLD, f.path), toru::error) << text;
  }
  // A missing file is an empty store, unless it must exist (as load_wisdom asks).
  std::filesystem::path missing = f.path + ".missing";
  wisdom_store w(missing.string());
  EXPECT_NO_THROW(w.load(MPI_COMM_WORLD));
  EXPECT_TRUE(w.sections().empty());
  try {
    w.load(MPI_COMM_WORLD, true);
    ADD_FAILURE() << "loaded a missing file";
  } catch (const toru::error& e) {
    EXPECT_EQ(e.code(), toru::errc::io);
  }
}

TEST(wisdom_store, sections_must_be_objects) {
  wisdom_store w("unused.json");
  EXPECT_THROW(w.put_section("tune", "[1]"), toru::error);
  EXPECT_THROW(w.put_section("tune", "not json"), toru::error);
  EXPECT_THROW(w.put_section("toru_wisdom", "{}"), toru::error);
  EXPECT_THROW(w.put_section("", "{}"), toru::error);
  EXPECT_NO_THROW(w.put_section("tune", "{}"));
}

TEST(wisdom_store, default_path_follows_toru_wisdom) {
  const char* old = std::getenv("TORU_WISDOM");
  const std::string saved = old ? old : "";
  ::setenv("TORU_WISDOM", "/some/where.json", 1);
  EXPECT_EQ(wisdom_store::default_path(), "/some/where.json");
  ::unsetenv("TORU_WISDOM");
  EXPECT_NE(wisdom_store::default_path().find(".cache/toru/wisdom.json"), std::string::npos);
  if (old) ::setenv("TORU_WISDOM", saved.c_str(), 1);
}

}  // namespace
