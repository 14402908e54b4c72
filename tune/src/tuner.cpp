// SPDX-License-Identifier: BSD-3-Clause
#include "toru/tune/tuner.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "toru/comm/wisdom_store.hpp"
#include "toru/core/agreement.hpp"
#include "toru/core/error.hpp"
#include "toru/core/log.hpp"

namespace toru::tune {

using json = nlohmann::json;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n == 0 ? 0 : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Rank 0's text on every rank.
std::string bcast_text(MPI_Comm comm, std::string s) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  long long n = static_cast<long long>(s.size());
  MPI_Bcast(&n, 1, MPI_LONG_LONG, 0, comm);
  s.resize(static_cast<std::size_t>(n));
  if (n > 0) MPI_Bcast(s.data(), static_cast<int>(n), MPI_CHAR, 0, comm);
  return s;
}

// The "tune" section of the store's file ({key: entry}; the older {"toru_tune_wisdom": 1,
// "entries": {...}} files read as that section), or an empty object when the file is missing or
// unreadable: a lost cache costs a search, never the application.
json tune_section(comm::wisdom_store& w) {
  try {
    w.read();
  } catch (const toru::error& e) {
    log::warn("tune: {} (searching again)", e.message());
    return json::object();
  }
  return json::parse(w.get_section("tune"));
}

std::atomic<tuner*> installed{nullptr};

}  // namespace

tuner::tuner(MPI_Comm comm, std::vector<knob> knobs, config start, tuner_options opts)
    : comm_(comm), knobs_(std::move(knobs)), opts_(std::move(opts)), start_(std::move(start)) {
  json kj = json::array();
  for (const auto& k : knobs_) kj.push_back({k.name, k.values});
  const std::string text = json{{"knobs", kj}, {"start", start_}}.dump() + "\n" + opts_.wisdom + "\n" + opts_.key;
  validate_collectively(comm_, "toru::tune::tuner", {same_text("knobs, start, wisdom and key", text)}, [&] {
    if (!start_.is_object()) throw error(errc::invalid_argument, "start: expected a JSON object {knob: value}");
    if (opts_.samples < 1)
      throw error(errc::invalid_argument, fmt::format("samples: expected >= 1, got {}", opts_.samples));
    if (opts_.warmup < 0)
      throw error(errc::invalid_argument, fmt::format("warmup: expected >= 0, got {}", opts_.warmup));
    if (!opts_.wisdom.empty() && opts_.key.empty())
      throw error(errc::invalid_argument, "key: expected a non-empty wisdom key with a wisdom file");
    for (const auto& k : knobs_) {
      if (k.values.empty())
        throw error(errc::invalid_argument, fmt::format("knob '{}': expected at least one value", k.name));
      if (!start_.contains(k.name)) start_[k.name] = k.values.front();
      if (std::find(k.values.begin(), k.values.end(), start_[k.name]) == k.values.end())
        throw error(errc::invalid_argument, fmt::format("start: knob '{}' has no value {} (values: {})", k.name,
                                                        start_[k.name].dump(), json(k.values).dump()));
    }
  });
  current_ = best_ = start_;
  if (!opts_.wisdom.empty()) {
    int rank = 0;
    MPI_Comm_rank(comm_, &rank);
    comm::wisdom_store store(opts_.wisdom);
    const json w = json::parse(bcast_text(comm_, rank == 0 ? tune_section(store).dump() : ""), nullptr, false);
    if (w.is_object() && w.contains(opts_.key) && w[opts_.key].is_object() && w[opts_.key].contains("config")) {
      const json& e = w[opts_.key];
      current_ = best_ = e["config"];
      best_seconds_ = e.value("seconds", 0.0);
      start_seconds_ = best_seconds_;
      done_ = from_wisdom_ = true;
      log::info("tune: {}: configuration from wisdom {}: {}", opts_.key, opts_.wisdom, to_text(best_));
    }
  }
  last_ = std::chrono::steady_clock::now();
}

bool tuner::step() {
  const auto now = std::chrono::steady_clock::now();
  const double dt = std::chrono::duration<double>(now - last_).count();
  const bool changed = step(dt);
  last_ = std::chrono::steady_clock::now();  // a plan rebuild after a change is not an iteration
  return changed;
}

bool tuner::step(double seconds) {
  if (done_) return false;
  double mx = seconds;
  MPI_Allreduce(&seconds, &mx, 1, MPI_DOUBLE, MPI_MAX, comm_);
  if (++seen_ <= opts_.warmup) return false;
  samples_.push_back(mx);
  if (static_cast<int>(samples_.size()) < opts_.samples) return false;
  // On a shared machine noise only adds time: a candidate's time is its fastest sample.
  std::vector<double> sorted = samples_;
  std::sort(sorted.begin(), sorted.end());
  const double t = sorted.front();
  history_.push_back(
      {{"config", current_}, {"seconds", t}, {"median_seconds", median(samples_)}, {"samples", samples_}});
  if (history_.size() == 1) {
    start_seconds_ = best_seconds_ = t;
    // The noise floor: at least the option, at least how far apart the start's two fastest samples are
    // (how well the fastest time repeats).
    noise_ = std::max(opts_.noise_floor, sorted.size() > 1 && t > 0 ? (sorted[1] - t) / t : 0.0);
  } else if (t < best_seconds_ * (1 - noise_)) {
    best_ = current_;
    best_seconds_ = t;
    changed_in_pass_ = true;
  }
  next_candidate();
  return !done_ || current_ != history_.back()["config"];
}

bool tuner::step_failed() {
  if (done_) return false;
  history_.push_back({{"config", current_}, {"seconds", nullptr}, {"failed", true}});
  if (history_.size() == 1)
    throw error(errc::invalid_argument,
                fmt::format("toru::tune::tuner: the start configuration {} failed", to_text(start_)));
  next_candidate();
  return true;
}

bool tuner::begin(const config& c) {
  current_ = c;
  seen_ = 0;
  samples_.clear();
  return true;
}

void tuner::next_candidate() {
  while (queue_.empty()) {
    if (knob_ >= knobs_.size()) {
      ++pass_;
      if (!changed_in_pass_ || pass_ >= opts_.max_passes) {
        finish();
        return;
      }
      changed_in_pass_ = false;
      knob_ = 0;
    }
    const knob& k = knobs_[knob_++];
    for (const auto& v : k.values) {
      if (v == best_[k.name]) continue;
      config c = best_;
      c[k.name] = v;
      // Measured already (an earlier pass): keep the result, skip the run.
      const bool measured =
          std::any_of(history_.begin(), history_.end(), [&](const json& h) { return h["config"] == c; });
      if (!measured) queue_.push_back(std::move(c));
    }
  }
  // Rank 0's candidate on every rank: identical inputs give identical queues, and the broadcast
  // makes that a guarantee rather than an assumption.
  const config c = json::parse(bcast_text(comm_, queue_.front().dump()));
  queue_.erase(queue_.begin());
  begin(c);
}

void tuner::finish() {
  done_ = true;
  current_ = best_;
  int rank = 0;
  MPI_Comm_rank(comm_, &rank);
  log::info("tune: done: {} ({:.4g} s) -> {} ({:.4g} s), gain {:.3f}x", to_text(start_), start_seconds_, to_text(best_),
            best_seconds_, gain());
  if (rank != 0) return;
  // Persisting is best effort: a read-only directory must not stop the application.
  try {
    if (!opts_.wisdom.empty()) {
      comm::wisdom_store store(opts_.wisdom);
      json w = tune_section(store);
      w[opts_.key] = {{"config", best_},
                      {"seconds", best_seconds_},
                      {"start", start_},
                      {"start_seconds", start_seconds_},
                      {"gain", gain()}};
      store.put_section("tune", w.dump());
      store.write();  // keeps the file's other sections (comm's, fft's, CGDP's)
    }
    std::string dir = opts_.report_dir;
    if (dir.empty())
      if (const char* d = std::getenv("TORU_TUNE_DIR")) dir = d;
    if (!dir.empty()) {
      std::filesystem::create_directories(dir);
      std::ofstream(std::filesystem::path(dir) / "tuner.json") << report().dump(1) << "\n";
    }
  } catch (const std::exception& e) {
    log::warn("tune: could not persist the result: {}", e.what());
  }
}

json tuner::report() const {
  return {{"key", opts_.key},
          {"start", start_},
          {"start_text", to_text(start_)},
          {"best", best_},
          {"best_text", to_text(best_)},
          {"start_seconds", start_seconds_},
          {"best_seconds", best_seconds_},
          {"gain", gain()},
          {"noise", noise_},
          {"from_wisdom", from_wisdom_},
          {"done", done_},
          {"candidates", history_}};
}

void install(tuner* t) noexcept { installed.store(t); }

bool step() {
  tuner* t = installed.load();
  return t ? t->step() : false;
}

std::vector<knob> fft_knobs() {
  return {{"decomposition", {"slab", "pencil"}},
          {"overlap", {true, false}},
          {"chunks", {1, 2, 4, 8}},
          {"algorithm", {"automatic", "direct", "pairwise", "bruck"}}};
}

fft::options3d apply(const config& c, fft::options3d o) {
  if (c.contains("decomposition")) {
    const std::string d = c["decomposition"];
    o.decomp = d == "slab"     ? fft::decomposition::slab
               : d == "pencil" ? fft::decomposition::pencil
                               : fft::decomposition::automatic;
  }
  if (c.contains("overlap")) o.overlap = c["overlap"].get<bool>();
  if (c.contains("chunks")) o.chunks = c["chunks"].get<int>();
  if (c.contains("algorithm")) o.algorithm = comm::algorithm_from_string(c["algorithm"].get<std::string>());
  return o;
}

comm::alltoall_options apply(const config& c, comm::alltoall_options o) {
  if (c.contains("chunks")) o.chunks = c["chunks"].get<int>();
  if (c.contains("algorithm")) o.algorithm = comm::algorithm_from_string(c["algorithm"].get<std::string>());
  return o;
}

std::string to_text(const config& c) {
  std::string s;
  for (auto& [k, v] : c.items())
    s += fmt::format("{}{}={}", s.empty() ? "" : " ", k, v.is_string() ? v.get<std::string>() : v.dump());
  return s;
}

}  // namespace toru::tune
