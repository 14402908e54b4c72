// SPDX-License-Identifier: BSD-3-Clause
// The recording: every appended record comes back bit-identical after reopening (several
// segments); a torn tail is truncated on recovery; a writer killed with SIGKILL loses nothing it
// acknowledged; a full disk (RLIMIT_FSIZE) refuses frames with a log line and no crash; a reader
// tails a growing recording.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "toru/stream/segment_store.hpp"

namespace ts = toru::stream;
namespace fs = std::filesystem;

namespace {

// The content of record seq: random bytes of a size from 1 to 9000, reproducible from seq alone.
std::string content(std::uint64_t seq) {
  std::mt19937_64 g(seq * 7919 + 1);
  std::string s(1 + g() % 9000, '\0');
  for (auto& c : s) c = static_cast<char>(g());
  return s;
}

std::string fresh_dir(const std::string& name) {
  const auto d = (fs::temp_directory_path() / ("toru-stream-test-" + name + "-" + std::to_string(::getpid()))).string();
  fs::remove_all(d);
  return d;
}

}  // namespace

TEST(StreamStore, ReopenIsBitIdenticalAcrossSegments) {
  const auto dir = fresh_dir("reopen");
  const int n = 200;
  {
    ts::segment_store s({.dir = dir, .sync = ts::sync_policy::none, .segment_bytes = 64 << 10});
    for (int i = 0; i < n; ++i) {
      auto seq = s.append(content(i), i / 2, i * 0.1);
      ASSERT_TRUE(seq);
      EXPECT_EQ(*seq, static_cast<std::uint64_t>(i));
    }
    EXPECT_EQ(s.acknowledged(), static_cast<std::uint64_t>(n));
    EXPECT_EQ(*s.get(57), content(57));  // readable while open
  }
  int segments = 0;
  for (const auto& e : fs::directory_iterator(dir)) segments += e.path().extension() == ".trs";
  EXPECT_GT(segments, 5);
  ts::segment_store r({.dir = dir, .read_only = true});
  ASSERT_EQ(r.size(), static_cast<std::uint64_t>(n));
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(*r.get(i), content(i)) << i;
    EXPECT_EQ(r.info(i)->step, i / 2);
  }
  EXPECT_EQ(r.first_at_step(50), 100u);
  EXPECT_EQ(r.first_at_step(1000), static_cast<std::uint64_t>(n));
  // A lost or damaged index of a sealed segment is rebuilt from the data.
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".idx") fs::resize_file(e.path(), 8);
  ts::segment_store again({.dir = dir, .sync = ts::sync_policy::none, .segment_bytes = 64 << 10});
  ASSERT_EQ(again.size(), static_cast<std::uint64_t>(n));
  EXPECT_EQ(*again.get(n - 1), content(n - 1));
  fs::remove_all(dir);
}

TEST(StreamStore, TornTailIsTruncatedAndAppendingContinues) {
  const auto dir = fresh_dir("torn");
  {
    ts::segment_store s({.dir = dir, .sync = ts::sync_policy::none});
    for (int i = 0; i < 10; ++i) ASSERT_TRUE(s.append(content(i), i, 0));
  }
  const auto seg = dir + "/segment-000000000000.trs";
  const auto good = fs::file_size(seg);
  {
    // Half of a record's header and payload, as a write cut short by a kill leaves it.
    std::ofstream f(seg, std::ios::app | std::ios::binary);
    const std::string partial = "TRS1\x10\x27\0\0" + content(10).substr(0, 100);
    f.write(partial.data(), static_cast<std::streamsize>(partial.size()));
  }
  ts::segment_store s({.dir = dir, .sync = ts::sync_policy::none});
  EXPECT_EQ(s.size(), 10u);
  EXPECT_GT(s.recovered_bytes(), 0u);
  EXPECT_EQ(fs::file_size(seg), good);
  ASSERT_TRUE(s.append(content(10), 10, 0));
  EXPECT_EQ(*s.get(10), content(10));
  EXPECT_EQ(*s.get(9), content(9));
  fs::remove_all(dir);
}

TEST(StreamStore, CorruptRecordEndsTheRecordingThere) {
  const auto dir = fresh_dir("crc");
  {
    ts::segment_store s({.dir = dir, .sync = ts::sync_policy::none});
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(s.append(content(i), i, 0));
  }
  const auto seg = dir + "/segment-000000000000.trs";
  const auto size = fs::file_size(seg);
  {
    std::fstream f(seg, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(size - 3));
    f.put('\x5a');  // a flipped byte in the last record's payload: its CRC fails
  }
  ts::segment_store s({.dir = dir, .sync = ts::sync_policy::none});
  EXPECT_EQ(s.size(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(*s.get(i), content(i));
  fs::remove_all(dir);
}

TEST(StreamStore, KilledWriterLosesNothingAcknowledged) {
  const auto dir = fresh_dir("kill");
  for (auto policy : {ts::sync_policy::every_frame, ts::sync_policy::interval}) {
    fs::remove_all(dir);
    int pipefd[2];
    ASSERT_EQ(::pipe(pipefd), 0);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      ::close(pipefd[0]);
      try {
        ts::segment_store s({.dir = dir, .sync = policy, .sync_interval_ms = 5, .segment_bytes = 256 << 10});
        std::uint64_t reported = 0;
        for (std::uint64_t i = 0;; ++i) {
          s.append(content(i), static_cast<std::int64_t>(i), 0);
          const auto acked = s.acknowledged();
          if (acked > reported) {  // tell the parent only what is acknowledged
            reported = acked;
            if (::write(pipefd[1], &reported, sizeof reported) != sizeof reported) ::_exit(3);
          }
        }
      } catch (...) {
        ::_exit(2);
      }
    }
    ::close(pipefd[1]);
    std::uint64_t acked = 0, v = 0;
    while (acked < 150 && ::read(pipefd[0], &v, sizeof v) == sizeof v) acked = v;
    ::kill(child, SIGKILL);                                         // mid-write, most likely
    while (::read(pipefd[0], &v, sizeof v) == sizeof v) acked = v;  // acks sent before the kill
    ::close(pipefd[0]);
    int status = 0;
    ::waitpid(child, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the writer ended on its own: " << status;
    ASSERT_GE(acked, 150u);
    ts::segment_store s({.dir = dir, .sync = ts::sync_policy::none});
    ASSERT_GE(s.size(), acked) << "acknowledged records lost";
    for (std::uint64_t i = 0; i < s.size(); ++i) ASSERT_EQ(*s.get(i), content(i)) << i;
  }
  fs::remove_all(dir);
}

TEST(StreamStore, FullDiskRefusesFramesWithoutCrashing) {
  const auto dir = fresh_dir("full");
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // A 40 KiB file-size limit stands in for a full disk: writes past it fail with EFBIG.
    ::signal(SIGXFSZ, SIG_IGN);
    rlimit lim{40 << 10, 40 << 10};
    if (::setrlimit(RLIMIT_FSIZE, &lim) != 0) ::_exit(10);
    try {
      ts::segment_store s({.dir = dir, .sync = ts::sync_policy::every_frame});
      int ok = 0, refused = 0;
      for (int i = 0; i < 40; ++i)
        (s.append(std::string(3000, static_cast<char>('a' + i % 26)), i, 0) ? ok : refused)++;
      // After the refusals, a small frame that still fits is accepted: the store stays usable.
      if (ok < 5 || refused < 20 || s.failed_appends() != static_cast<std::uint64_t>(refused)) ::_exit(11);
      if (s.size() != static_cast<std::uint64_t>(ok)) ::_exit(12);
      ::_exit(s.append("tiny", 99, 0) ? 0 : 13);
    } catch (...) {
      ::_exit(14);
    }
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << "the writer crashed: signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
  ts::segment_store r({.dir = dir, .read_only = true});
  ASSERT_GT(r.size(), 5u);
  EXPECT_EQ(*r.get(0), std::string(3000, 'a'));
  EXPECT_EQ(*r.get(r.size() - 1), "tiny");
  fs::remove_all(dir);
}

TEST(StreamStore, ReaderTailsAGrowingRecording) {
  const auto dir = fresh_dir("tail");
  ts::segment_store w({.dir = dir, .sync = ts::sync_policy::none, .segment_bytes = 20 << 10});
  ts::segment_store r({.dir = dir, .read_only = true});
  EXPECT_EQ(r.size(), 0u);
  for (int i = 0; i < 30; ++i) {
    ASSERT_TRUE(w.append(content(i), i, 0));
    if (i % 7 == 0) r.refresh();
  }
  r.refresh();
  r.refresh();
  ASSERT_EQ(r.size(), 30u);
  for (int i = 0; i < 30; ++i) ASSERT_EQ(*r.get(i), content(i));
  fs::remove_all(dir);
}
