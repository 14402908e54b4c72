// SPDX-License-Identifier: BSD-3-Clause
#include "trace.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <vector>

#include <fmt/format.h>

#include "toru/core/error.hpp"
#include "toru/core/events.hpp"

namespace toru_fft_bench {

namespace {

struct record {
  std::int64_t t_ns;
  int thread, kind;
  const char *name, *detail;
  std::uint64_t bytes;
  double value;
};

std::mutex mutex;
std::vector<record> records;
std::atomic<int> next_thread{0};

int thread_index() {
  thread_local const int id = next_thread++;
  return id;
}

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Called on the emitting thread (the caller's, or comm's phase-B thread): must not throw.
void sink(int kind, const char* name, const char* detail, std::uint64_t bytes, double value) noexcept {
  const record r{now_ns(), thread_index(), kind, name, detail ? detail : "", bytes, value};
  try {
    std::lock_guard lock(mutex);
    records.push_back(r);
  } catch (...) {  // out of memory: the trace loses the event, the transform goes on
  }
}

}  // namespace

void trace_begin() {
  {
    std::lock_guard lock(mutex);
    records.reserve(1 << 16);
  }
  toru::events::set_sink(sink);
}

void trace_end() { toru::events::set_sink(nullptr); }

void trace_mark(const char* label, std::uint64_t points, int index) {
  sink(static_cast<int>(toru::events::kind::mark), "bench.transform", label, points, index);
}

void trace_write(const std::string& dir, int rank) {
  const std::string path = fmt::format("{}/trace.{}.csv", dir, rank);
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) throw toru::error(toru::errc::invalid_argument, fmt::format("--trace: cannot write {}", path));
  std::fputs("t_ns,thread,kind,name,detail,bytes,value\n", f);
  std::lock_guard lock(mutex);
  static const char* kinds[] = {"begin", "end", "mark"};
  for (const auto& r : records)
    fmt::print(f, "{},{},{},{},{},{},{}\n", r.t_ns, r.thread, kinds[r.kind], r.name, r.detail, r.bytes, r.value);
  std::fclose(f);
  records.clear();
}

}  // namespace toru_fft_bench
