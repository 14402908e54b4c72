// SPDX-License-Identifier: BSD-3-Clause
// The shim's parallel OTF2 writer: every rank writes its own location, rank 0 the definitions. Rank 0
// reads the archive back with OTF2's reader and checks each location against what its rank wrote.
#include <gtest/gtest.h>
#include <mpi.h>
#include <otf2/otf2.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "otf2_writer.hpp"

namespace toru::tune::shim {
namespace {

namespace fs = std::filesystem;

constexpr double t_begin = 100.0;
double at_us(double us) { return t_begin + us * 1e-6; }
std::uint64_t ns(double us) { return static_cast<std::uint64_t>(us * 1000 + 0.5); }

int rank_of(MPI_Comm comm) {
  int r = 0;
  MPI_Comm_rank(comm, &r);
  return r;
}
int size_of(MPI_Comm comm) {
  int n = 0;
  MPI_Comm_size(comm, &n);
  return n;
}

event call(fn f, double us0, double us1) {
  return event{.t0 = at_us(us0), .t1 = at_us(us1), .tpost = at_us(us0), .type = ev_type::coll, .func = f};
}
event region(std::uint64_t key, double us0, double us1) {
  return event{
      .t0 = at_us(us0), .t1 = at_us(us1), .tpost = at_us(us0), .key = key, .type = ev_type::toru, .func = f_toru};
}

// What one rank hands the writer.
struct rank_input {
  std::vector<event> events;
  std::vector<std::string> regions;
  std::string name_of(const event& e) const {
    return e.type == ev_type::toru && e.key < regions.size() ? "toru:" + regions[e.key] : function_names[e.func];
  }
};

// Rank r's trace: its own number of calls, its own list of region names (in its own order, one only
// on odd ranks, one listed but unused), regions nested in regions, calls that outlive their region,
// ties in enter time, and the whole given out of order. Rank 2 recorded nothing.
rank_input varied(int r) {
  rank_input in;
  if (r == 2) return in;
  if (r % 2) {
    in.regions = {"only.odd", "fft.execute", "unused", "solver"};
  } else {
    in.regions = {"solver", "fft.execute"};
  }
  auto key = [&](const std::string& n) {
    return static_cast<std::uint64_t>(std::find(in.regions.begin(), in.regions.end(), n) - in.regions.begin());
  };
  const fn funcs[] = {f_allreduce, f_send, f_recv, f_io_write, f_bcast, f_file_write_all, f_waitall};
  const int calls = 3 + 4 * r;
  const double start = 7.0 * r, step = 15;
  for (int i = 0; i < calls; ++i) {
    const double t0 = start + 5 + step * i;
    in.events.push_back(call(funcs[(i + r) % std::size(funcs)], t0, t0 + 10));
  }
  const double end = start + 5 + step * calls;
  in.events.push_back(region(key("solver"), start, end));
  // Starts with a call (tie: the longer, the region, encloses) and ends inside the next one's call,
  // which is clipped to it.
  in.events.push_back(region(key("fft.execute"), start + 5, start + 5 + step + 3));
  if (r % 2) in.events.push_back(region(key("only.odd"), start + 5 + step * 2 - 2, end + 50));  // outlives solver
  std::mt19937 gen(static_cast<unsigned>(r) + 1);
  std::shuffle(in.events.begin(), in.events.end(), gen);
  return in;
}

// One Enter or Leave as read back.
struct record {
  bool enter = false;
  std::uint64_t time = 0;
  std::uint32_t region = 0;
};

struct archive_content {
  std::map<std::uint32_t, std::string> strings;
  std::map<std::uint32_t, std::string> regions;                                // id -> name
  std::vector<std::string> region_defs;                                        // in definition order, duplicates kept
  std::map<std::uint64_t, std::pair<std::uint64_t, std::uint32_t>> locations;  // -> (events, group)
  std::set<std::uint32_t> groups;
  std::uint64_t trace_length = 0;
  std::map<std::uint64_t, std::vector<record>> records;
  bool ok = false;  // the reader raised no error
};

OTF2_CallbackCode on_clock(void* d, uint64_t, uint64_t, uint64_t length, uint64_t) {
  static_cast<archive_content*>(d)->trace_length = length;
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_string(void* d, OTF2_StringRef self, const char* s) {
  static_cast<archive_content*>(d)->strings[self] = s;
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_region(void* d, OTF2_RegionRef self, OTF2_StringRef name, OTF2_StringRef, OTF2_StringRef,
                            OTF2_RegionRole, OTF2_Paradigm, OTF2_RegionFlag, OTF2_StringRef, uint32_t, uint32_t) {
  auto* c = static_cast<archive_content*>(d);
  c->regions[self] = c->strings[name];
  c->region_defs.push_back(c->strings[name]);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_group(void* d, OTF2_LocationGroupRef self, OTF2_StringRef, OTF2_LocationGroupType,
                           OTF2_SystemTreeNodeRef, OTF2_LocationGroupRef) {
  static_cast<archive_content*>(d)->groups.insert(self);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_location(void* d, OTF2_LocationRef self, OTF2_StringRef, OTF2_LocationType, uint64_t events,
                              OTF2_LocationGroupRef group) {
  static_cast<archive_content*>(d)->locations[self] = {events, group};
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_enter(OTF2_LocationRef loc, OTF2_TimeStamp t, uint64_t, void* d, OTF2_AttributeList*,
                           OTF2_RegionRef region) {
  static_cast<archive_content*>(d)->records[loc].push_back({true, t, region});
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_leave(OTF2_LocationRef loc, OTF2_TimeStamp t, uint64_t, void* d, OTF2_AttributeList*,
                           OTF2_RegionRef region) {
  static_cast<archive_content*>(d)->records[loc].push_back({false, t, region});
  return OTF2_CALLBACK_SUCCESS;
}

// Reads the whole archive serially (rank 0 only).
archive_content read_archive(const std::string& dir) {
  archive_content c;
  OTF2_Reader* rd = OTF2_Reader_Open((dir + "/traces.otf2").c_str());
  if (!rd) return c;
  bool ok = OTF2_Reader_SetSerialCollectiveCallbacks(rd) == OTF2_SUCCESS;
  OTF2_GlobalDefReader* gdr = OTF2_Reader_GetGlobalDefReader(rd);
  ok = ok && gdr;
  if (ok) {
    OTF2_GlobalDefReaderCallbacks* cb = OTF2_GlobalDefReaderCallbacks_New();
    OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(cb, on_clock);
    OTF2_GlobalDefReaderCallbacks_SetStringCallback(cb, on_string);
    OTF2_GlobalDefReaderCallbacks_SetRegionCallback(cb, on_region);
    OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback(cb, on_group);
    OTF2_GlobalDefReaderCallbacks_SetLocationCallback(cb, on_location);
    ok = OTF2_Reader_RegisterGlobalDefCallbacks(rd, gdr, cb, &c) == OTF2_SUCCESS;
    OTF2_GlobalDefReaderCallbacks_Delete(cb);
    uint64_t n = 0;
    ok = ok && OTF2_Reader_ReadAllGlobalDefinitions(rd, gdr, &n) == OTF2_SUCCESS;
    OTF2_Reader_CloseGlobalDefReader(rd, gdr);
  }
  for (const auto& [loc, info] : c.locations) ok = ok && OTF2_Reader_SelectLocation(rd, loc) == OTF2_SUCCESS;
  const bool defs = ok && OTF2_Reader_OpenDefFiles(rd) == OTF2_SUCCESS;
  ok = ok && OTF2_Reader_OpenEvtFiles(rd) == OTF2_SUCCESS;
  for (const auto& [loc, info] : c.locations) {
    if (!ok) break;
    if (defs) {
      OTF2_DefReader* dr = OTF2_Reader_GetDefReader(rd, loc);
      if (dr) {
        uint64_t n = 0;
        OTF2_Reader_ReadAllLocalDefinitions(rd, dr, &n);
        OTF2_Reader_CloseDefReader(rd, dr);
      }
    }
    OTF2_EvtReader* er = OTF2_Reader_GetEvtReader(rd, loc);
    ok = er != nullptr;
    if (!ok) break;
    OTF2_EvtReaderCallbacks* cb = OTF2_EvtReaderCallbacks_New();
    OTF2_EvtReaderCallbacks_SetEnterCallback(cb, on_enter);
    OTF2_EvtReaderCallbacks_SetLeaveCallback(cb, on_leave);
    ok = OTF2_Reader_RegisterEvtCallbacks(rd, er, cb, &c) == OTF2_SUCCESS;
    OTF2_EvtReaderCallbacks_Delete(cb);
    uint64_t n = 0;
    ok = ok && OTF2_Reader_ReadAllLocalEvents(rd, er, &n) == OTF2_SUCCESS;
    OTF2_Reader_CloseEvtReader(rd, er);
  }
  if (defs) OTF2_Reader_CloseDefFiles(rd);
  OTF2_Reader_CloseEvtFiles(rd);
  OTF2_Reader_Close(rd);
  c.ok = ok;
  return c;
}

// A fresh directory shared by the ranks, removed at the end (collective).
class scratch {
 public:
  std::string path;
  explicit scratch(MPI_Comm comm) : comm_(comm) {
    std::string p;
    if (rank_of(comm_) == 0) {
      std::string tmpl = (fs::temp_directory_path() / "toru_otf2_XXXXXX").string();
      if (mkdtemp(tmpl.data())) p = tmpl;
    }
    int n = static_cast<int>(p.size());
    MPI_Bcast(&n, 1, MPI_INT, 0, comm_);
    p.resize(static_cast<std::size_t>(n));
    MPI_Bcast(p.data(), n, MPI_CHAR, 0, comm_);
    path = p;
  }
  ~scratch() {
    MPI_Barrier(comm_);
    std::error_code ec;
    if (rank_of(comm_) == 0 && !path.empty()) fs::remove_all(path, ec);
  }
  scratch(const scratch&) = delete;
  scratch& operator=(const scratch&) = delete;

 private:
  MPI_Comm comm_;
};

// Every rank's outcome: empty, or the message thrown.
std::string write(const rank_input& in, const std::string& dir, MPI_Comm comm) {
  try {
    write_otf2(in.events, in.regions, t_begin, "otf2_writer_test", dir, comm);
  } catch (const std::runtime_error& e) {
    return e.what() + std::string(e.what()[0] ? "" : "(empty message)");
  }
  return {};
}

// Checks location r of the archive against rank r's input (rank 0).
void check_location(const archive_content& c, std::uint64_t r, const rank_input& in) {
  SCOPED_TRACE("location " + std::to_string(r));
  ASSERT_TRUE(c.locations.count(r));
  EXPECT_EQ(c.locations.at(r).first, 2 * in.events.size()) << "events in the location's definition";
  EXPECT_EQ(c.locations.at(r).second, r) << "location group";
  const auto it = c.records.find(r);
  const std::vector<record> none;
  const std::vector<record>& recs = it == c.records.end() ? none : it->second;
  std::size_t enters = 0, leaves = 0;
  std::multiset<std::string> entered, expected;
  for (const auto& e : in.events) expected.insert(in.name_of(e));
  std::vector<std::uint32_t> stack;
  std::uint64_t last = 0;
  for (const record& x : recs) {
    EXPECT_GE(x.time, last) << "timestamps are monotone";
    EXPECT_LE(x.time, c.trace_length) << "within the clock's trace length";
    last = x.time;
    ASSERT_TRUE(c.regions.count(x.region)) << "region " << x.region << " is defined";
    if (x.enter) {
      ++enters;
      entered.insert(c.regions.at(x.region));
      stack.push_back(x.region);
    } else {
      ++leaves;
      ASSERT_FALSE(stack.empty()) << "a Leave without an Enter";
      EXPECT_EQ(stack.back(), x.region) << "a Leave closes the innermost region";
      stack.pop_back();
    }
  }
  EXPECT_TRUE(stack.empty()) << "every Enter has its Leave";
  EXPECT_EQ(enters, in.events.size());
  EXPECT_EQ(leaves, in.events.size());
  EXPECT_EQ(entered, expected) << "the regions this rank wrote";
}

void check_definitions(const archive_content& c, std::size_t nranks) {
  ASSERT_TRUE(c.ok) << "OTF2's reader failed";
  EXPECT_EQ(c.locations.size(), nranks);
  EXPECT_EQ(c.groups.size(), nranks);
  std::set<std::string> unique(c.region_defs.begin(), c.region_defs.end());
  EXPECT_EQ(unique.size(), c.region_defs.size()) << "each region name is defined once: one id per name";
}

TEST(TuneOtf2Writer, EveryRankWritesItsOwnLocation) {
  // Ranks in reverse: location r is the rank r of `comm`, not of MPI_COMM_WORLD.
  MPI_Comm comm;
  MPI_Comm_split(MPI_COMM_WORLD, 0, size_of(MPI_COMM_WORLD) - rank_of(MPI_COMM_WORLD), &comm);
  const int rank = rank_of(comm), nranks = size_of(comm);
  {
    scratch dir(comm);
    ASSERT_FALSE(dir.path.empty());
    const std::string trace = dir.path + "/trace";
    EXPECT_EQ(write(varied(rank), trace, comm), "");
    if (rank == 0) {
      const archive_content c = read_archive(trace);
      check_definitions(c, static_cast<std::size_t>(nranks));
      std::map<std::string, std::set<std::uint32_t>> ids;  // name -> ids entered under it, any location
      for (int r = 0; r < nranks; ++r) {
        check_location(c, static_cast<std::uint64_t>(r), varied(r));
        if (c.records.count(r))
          for (const record& x : c.records.at(r)) ids[c.regions.at(x.region)].insert(x.region);
      }
      for (const auto& [name, set] : ids) EXPECT_EQ(set.size(), 1u) << name << " has one id on every location";
      if (nranks > 1) {
        EXPECT_TRUE(ids.count("toru:only.odd"));
      }
      EXPECT_FALSE(ids.count("toru:unused"));
    }
  }
  MPI_Comm_free(&comm);
}

// The exact records of a known case, on every location; written twice (an old archive is replaced).
TEST(TuneOtf2Writer, NestingClippingAndOrder) {
  const int rank = rank_of(MPI_COMM_WORLD), nranks = size_of(MPI_COMM_WORLD);
  rank_input in;
  in.regions = {"a", "b"};
  in.events = {call(f_barrier, 130, 140), call(f_recv, 80, 120), call(f_allreduce, 30, 70),
               region(1, 20, 60),         call(f_send, 0, 10),   region(0, 0, 100)};
  scratch dir(MPI_COMM_WORLD);
  ASSERT_FALSE(dir.path.empty());
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    EXPECT_EQ(write(in, dir.path, MPI_COMM_WORLD), "");
    if (rank != 0) continue;
    const archive_content c = read_archive(dir.path);
    check_definitions(c, static_cast<std::size_t>(nranks));
    // a encloses Send (tie at 0: the longer first); Allreduce outlives b and Recv outlives a: clipped.
    const std::vector<std::tuple<bool, std::string, double>> want = {
        {true, "toru:a", 0},    {true, "MPI_Send", 0},       {false, "MPI_Send", 10},
        {true, "toru:b", 20},   {true, "MPI_Allreduce", 30}, {false, "MPI_Allreduce", 60},
        {false, "toru:b", 60},  {true, "MPI_Recv", 80},      {false, "MPI_Recv", 100},
        {false, "toru:a", 100}, {true, "MPI_Barrier", 130},  {false, "MPI_Barrier", 140}};
    for (int r = 0; r < nranks; ++r) {
      SCOPED_TRACE("location " + std::to_string(r));
      ASSERT_TRUE(c.records.count(r));
      const auto& recs = c.records.at(r);
      ASSERT_EQ(recs.size(), want.size());
      for (std::size_t i = 0; i < want.size(); ++i) {
        EXPECT_EQ(recs[i].enter, std::get<0>(want[i])) << "record " << i;
        EXPECT_EQ(c.regions.at(recs[i].region), std::get<1>(want[i])) << "record " << i;
        EXPECT_EQ(recs[i].time, ns(std::get<2>(want[i]))) << "record " << i;
      }
    }
    EXPECT_EQ(c.trace_length, ns(140) + 1);
  }
}

// A directory that cannot be created (under a regular file): every rank throws the same message.
TEST(TuneOtf2Writer, BadDirectoryThrowsOnEveryRank) {
  const int rank = rank_of(MPI_COMM_WORLD);
  scratch dir(MPI_COMM_WORLD);
  ASSERT_FALSE(dir.path.empty());
  const std::string file = dir.path + "/not_a_directory";
  if (rank == 0) std::ofstream(file) << "x";
  MPI_Barrier(MPI_COMM_WORLD);
  const std::string error = write(varied(rank), file + "/trace", MPI_COMM_WORLD);
  EXPECT_NE(error, "") << "rank " << rank << " did not throw";
  EXPECT_NE(error.find("cannot create the directory"), std::string::npos) << error;
  std::string first = error;
  int n = static_cast<int>(first.size());
  MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
  first.resize(static_cast<std::size_t>(n));
  MPI_Bcast(first.data(), n, MPI_CHAR, 0, MPI_COMM_WORLD);
  EXPECT_EQ(error, first) << "the same message as rank 0's";
  // Nothing was written, and the ranks can still write a trace afterwards.
  EXPECT_EQ(write(varied(rank), dir.path + "/trace", MPI_COMM_WORLD), "");
}

}  // namespace
}  // namespace toru::tune::shim
