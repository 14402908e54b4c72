// SPDX-License-Identifier: BSD-3-Clause
// The shipped rules on synthetic profiles (the rules the validation programs cannot reach: toru's
// regions, the tuner's measurements, hardware counters, the trainer), user overrides, formats.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "toru/core/error.hpp"
#include "toru/tune/report.hpp"
#include "toru/tune/rules.hpp"

namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

json base_profile() {
  json r0 = {{"rank", 0},       {"wall", 1.0}, {"compute", 0.8},     {"mpi", 0.2},           {"mpi_p2p", 0.1},
             {"mpi_coll", 0.1}, {"io", 0.0},   {"late_sender", 0.0}, {"late_receiver", 0.0}, {"wait_collective", 0.01}};
  json r1 = r0;
  r1["rank"] = 1;
  return {{"toru_tune_profile", 1},
          {"nranks", 2},
          {"wall", 1.0},
          {"ranks", {r0, r1}},
          {"sites", json::array()},
          {"io_sites", json::array()},
          {"regions", json::array()},
          {"papi", {{"available", false}, {"note", "no counters"}}}};
}

std::vector<std::string> rules_fired(const json& p) {
  std::vector<std::string> ids;
  for (const auto& f : toru::tune::diagnose(p, toru::tune::load_rules(toru::tune::default_rule_dirs())))
    ids.push_back(f.rule);
  return ids;
}

bool fired(const json& p, const std::string& id) {
  const auto ids = rules_fired(p);
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

TEST(TuneRules, ShippedDatabaseCoversTheIssue) {
  const auto rules = toru::tune::load_rules(toru::tune::default_rule_dirs());
  for (const char* id : {"load_imbalance", "late_sender", "late_receiver", "small_messages", "alltoall_far_from_bound",
                         "toru_choice_lost", "fft_overlap_not_paying", "serialized_io", "small_writes", "memory_bound",
                         "trainer_comm_exposed"})
    EXPECT_TRUE(std::any_of(rules.begin(), rules.end(), [&](const auto& r) { return r.id == id; })) << id;
}

TEST(TuneRules, CleanProfileRaisesNothing) { EXPECT_TRUE(rules_fired(base_profile()).empty()); }

TEST(TuneRules, AlltoallFarFromBound) {
  json p = base_profile();
  // 0.3 s of all-to-all per rank whose model bound is 0.003 s: 1% of the bound.
  p["regions"].push_back({{"name", "comm.alltoall"},
                          {"detail", "pairwise"},
                          {"count", 100},
                          {"bytes", 1e8},
                          {"value", 0.006},
                          {"time", {0.3, 0.3}}});
  EXPECT_TRUE(fired(p, "alltoall_far_from_bound"));
  p["regions"][0]["value"] = 0.3;  // 50% of the bound: fine
  EXPECT_FALSE(fired(p, "alltoall_far_from_bound"));
}

TEST(TuneRules, TunerMeasurementsAlgorithmAndOverlap) {
  json p = base_profile();
  p["tuner"] = {{"start", {{"algorithm", "pairwise"}, {"overlap", true}}},
                {"best", {{"algorithm", "direct"}, {"overlap", false}}},
                {"start_text", "algorithm=pairwise overlap=true"},
                {"best_text", "algorithm=direct overlap=false"},
                {"start_seconds", 0.02},
                {"best_seconds", 0.01},
                {"gain", 2.0},
                {"noise", 0.02}};
  EXPECT_TRUE(fired(p, "toru_choice_lost"));
  EXPECT_TRUE(fired(p, "fft_overlap_not_paying"));
  p["tuner"]["gain"] = 1.01;  // within the noise: nothing lost
  EXPECT_FALSE(fired(p, "toru_choice_lost"));
  EXPECT_FALSE(fired(p, "fft_overlap_not_paying"));
}

TEST(TuneRules, MemoryBoundNeedsCounters) {
  json p = base_profile();
  EXPECT_FALSE(fired(p, "memory_bound"));  // no counters on this machine: no diagnosis, no failure
  p["papi"] = {{"available", true},
               {"note", ""},
               {"counters", {{"PAPI_TOT_CYC", 1e10}, {"PAPI_TOT_INS", 5e9}, {"PAPI_RES_STL", 7e9}}}};
  EXPECT_TRUE(fired(p, "memory_bound"));
}

TEST(TuneRules, TrainerCommunicationExposed) {
  json p = base_profile();
  p["regions"].push_back(
      {{"name", "train.comm_wait"}, {"detail", ""}, {"count", 50}, {"bytes", 0}, {"value", 0}, {"time", {0.3, 0.25}}});
  EXPECT_TRUE(fired(p, "trainer_comm_exposed"));
}

// A site where each rank spends 0.3 s (30% of its time) in 3 million calls carrying 8 bytes on average.
json many_calls_profile(const std::string& function) {
  json p = base_profile();
  p["sites"].push_back({{"function", function},
                        {"location", "ra.c:42"},
                        {"symbol", "update"},
                        {"calls", {1.5e6, 1.5e6}},
                        {"time", {0.3, 0.3}},
                        {"bytes", {1.2e7, 1.2e7}},
                        {"compute_before", {0.001, 0.001}},
                        {"late_sender", {0, 0}},
                        {"late_receiver", {0, 0}},
                        {"wait_collective", {0, 0}}});
  return p;
}

// Polls return at once whether a message came or not: millions of MPI_Testany calls (HPCC's
// RandomAccess) are a loop overlapping work, not millions of messages. The same numbers at a receive
// are latency-bound messages.
TEST(TuneRules, SmallMessagesCountsMessagesNotPolls) {
  EXPECT_TRUE(fired(many_calls_profile("MPI_Recv"), "small_messages"));
  EXPECT_TRUE(fired(many_calls_profile("MPI_Isend"), "small_messages"));
  for (const char* poll : {"MPI_Test", "MPI_Testany", "MPI_Testsome", "MPI_Testall", "MPI_Iprobe", "MPI_Improbe"})
    EXPECT_FALSE(fired(many_calls_profile(poll), "small_messages")) << poll;
}

// The metric of the first site of p.
double site_metric(const json& p, const char* name) {
  for (const auto& m : toru::tune::metrics_of(p))
    if (m.scope == "site") return m.values[name].get<double>();
  return -1;
}

// A persistent collective is collective communication: its init and every start of it (which the
// shim records under the init's name), MPIX_ (Open MPI 4.1) or MPI-4's MPI_, plain or neighbourhood.
// Many small starts of it are no small messages; the start of a persistent send or receive
// (MPI_Start, MPI_Startall) and its init are point-to-point.
TEST(TuneRules, PersistentCollectivesAreCollective) {
  for (const char* coll :
       {"MPIX_Allreduce_init", "MPI_Allreduce_init", "MPIX_Barrier_init", "MPIX_Reduce_scatter_block_init",
        "MPIX_Neighbor_alltoall_init", "MPI_Neighbor_allgatherv_init"}) {
    EXPECT_EQ(site_metric(many_calls_profile(coll), "is_collective"), 1.0) << coll;
    EXPECT_EQ(site_metric(many_calls_profile(coll), "is_p2p"), 0.0) << coll;
    EXPECT_FALSE(fired(many_calls_profile(coll), "small_messages")) << coll;
  }
  for (const char* p2p : {"MPI_Start", "MPI_Startall", "MPI_Send_init", "MPI_Recv_init"}) {
    EXPECT_EQ(site_metric(many_calls_profile(p2p), "is_p2p"), 1.0) << p2p;
    EXPECT_TRUE(fired(many_calls_profile(p2p), "small_messages")) << p2p;
  }
}

// Rank 1 waits 0.54 s in MPI_Recv at a.c:10 for rank 0's MPI_Send at a.c:7.
json late_sender_profile() {
  json p = base_profile();
  p["sites"].push_back({{"function", "MPI_Recv"},
                        {"location", "a.c:10"},
                        {"symbol", "main"},
                        {"calls", {0, 6}},
                        {"time", {0, 0.6}},
                        {"bytes", {0, 768}},
                        {"compute_before", {0, 0.06}},
                        {"late_sender", {0, 0.54}},
                        {"late_receiver", {0, 0}},
                        {"wait_collective", {0, 0}}});
  p["sites"].push_back({{"function", "MPI_Send"},
                        {"location", "a.c:7"},
                        {"symbol", "main"},
                        {"calls", {6, 0}},
                        {"time", {0.001, 0}},
                        {"bytes", {768, 0}},
                        {"compute_before", {0.6, 0}},
                        {"late_sender", {0, 0}},
                        {"late_receiver", {0, 0}},
                        {"wait_collective", {0, 0}}});
  return p;
}

TEST(TuneRules, LateSenderNamesBothEnds) {
  json p = late_sender_profile();
  p["sites"][1]["caused_late_sender"] = 0.54;
  const auto f = toru::tune::diagnose(p, toru::tune::load_rules(toru::tune::default_rule_dirs()));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].rule, "late_sender");
  EXPECT_EQ(f[0].location, "a.c:10 (main)");
  EXPECT_NE(f[0].diagnosis.find("a.c:7"), std::string::npos) << f[0].diagnosis;
  EXPECT_NE(f[0].diagnosis.find("27.0%"), std::string::npos) << f[0].diagnosis;
  const std::string html = toru::tune::html_report(p, f);
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("Late sender"), std::string::npos);
}

// The same late sender with the delay analysis's result: the cause (rank 0's compute between the
// two sites) comes first and names rank, sites and share; the symptom follows and points to it.
TEST(TuneRules, RootCauseBeforeItsSymptom) {
  json p = late_sender_profile();
  p["sites"].push_back({{"function", "MPI_Barrier"},
                        {"location", "a.c:4"},
                        {"symbol", "main"},
                        {"calls", {1, 1}},
                        {"time", {0, 0}},
                        {"bytes", {0, 0}},
                        {"compute_before", {0, 0}},
                        {"late_sender", {0, 0}},
                        {"late_receiver", {0, 0}},
                        {"wait_collective", {0, 0}}});
  p["root_causes"] = {{"total_wait", 0.54},
                      {"attributed", 0.54},
                      {"causes",
                       {{{"rank", 0},
                         {"from", 2},
                         {"to", 1},
                         {"caused", 0.54},
                         {"direct", 0.54},
                         {"compute", 0.6},
                         {"excess", 0.6},
                         {"critical", 0.6}}}},
                      {"critical_path", json::array()},
                      {"critical_rank", {0.6, 0.0}}};
  const auto f = toru::tune::diagnose(p, toru::tune::load_rules(toru::tune::default_rule_dirs()));
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].rule, "imbalance_root_cause");
  EXPECT_TRUE(f[0].root_cause);
  EXPECT_EQ(f[0].location, "a.c:7 (main)");
  EXPECT_EQ(f[0].diagnosis.rfind("imbalance: rank 0 computes 0.600 s more between a.c:4 (main) (MPI_Barrier) and "
                                 "a.c:7 (main) (MPI_Send)",
                                 0),
            0u)
      << f[0].diagnosis;
  EXPECT_NE(f[0].diagnosis.find("27.0% of run time is waiting caused by it"), std::string::npos) << f[0].diagnosis;
  EXPECT_EQ(f[1].rule, "late_sender");
  EXPECT_NE(f[1].diagnosis.find("caused by rank 0's compute before a.c:7"), std::string::npos) << f[1].diagnosis;
  // Balanced: the same region computed as long on the other rank is no cause.
  p["root_causes"]["causes"][0]["excess"] = 0.01;
  EXPECT_EQ(toru::tune::diagnose(p, toru::tune::load_rules(toru::tune::default_rule_dirs())).size(), 1u);
}

TEST(TuneRules, UserDirectoryOverridesAndExtends) {
  const fs::path dir = fs::temp_directory_path() / ("toru_tune_rules_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  // The same id with an impossible threshold replaces the built-in rule; a new rule joins.
  std::ofstream(dir / "mine.json") << R"({"rules": [
    {"id": "trainer_comm_exposed", "scope": "region", "condition": "time_fraction > 2", "diagnosis": "x"},
    {"id": "slow_run", "scope": "run", "condition": "wall > 0.5 && nranks == 2", "diagnosis": "{wall:.1f} s on {nranks:.0f}"}]})";
  auto dirs = toru::tune::default_rule_dirs();
  dirs.push_back(dir.string());
  json p = base_profile();
  p["regions"].push_back(
      {{"name", "train.comm_wait"}, {"detail", ""}, {"count", 50}, {"bytes", 0}, {"value", 0}, {"time", {0.3, 0.25}}});
  const auto f = toru::tune::diagnose(p, toru::tune::load_rules(dirs));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].rule, "slow_run");
  EXPECT_EQ(f[0].diagnosis, "1.0 s on 2");

  std::ofstream(dir / "zbad.json")
      << R"({"rules": [{"id": "b", "scope": "run", "condition": "wall >", "diagnosis": "x"}]})";
  try {
    (void)toru::tune::load_rules(dirs);
    ADD_FAILURE() << "a malformed condition was accepted";
  } catch (const toru::error& e) {
    EXPECT_NE(std::string(e.what()).find("position"), std::string::npos) << e.what();
  }
  std::ofstream(dir / "zbad.json")
      << R"({"rules": [{"id": "b", "scope": "galaxy", "condition": "1", "diagnosis": "x"}]})";
  EXPECT_THROW((void)toru::tune::load_rules(dirs), toru::error);
  fs::remove_all(dir);
}

TEST(TuneRules, Expand) {
  const json v = {{"x", 0.125}, {"n", 3.0}, {"s", "site.c:4"}};
  EXPECT_EQ(toru::tune::expand("{x:.1%} of {n:.0f} at {s}; {missing}", v), "12.5% of 3 at site.c:4; {missing}");
}

}  // namespace
