// SPDX-License-Identifier: BSD-3-Clause
// The chunk search's cache: the "cgdp" section of toru's wisdom file.
#include <unistd.h>

#include <cstdlib>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "calibrate.hpp"
#include "toru/comm/wisdom_store.hpp"
#include "toru/core/error.hpp"
#include "toru/core/log.hpp"

namespace toru::train::detail {

std::string cache_key(const std::string& model, std::int64_t batch, int nranks) {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  return fmt::format("{}/batch{}/ranks{}/{}/{}threads", model, batch, nranks, host,
                     std::thread::hardware_concurrency());
}

// The chunk cache is the "cgdp" section of toru's wisdom file ({key: {"chunk_layers": n, "trials":
// text}}); $TORU_CGDP_WISDOM, the variable of the cache's own file, still names a file.
std::string default_cache_file() {
  if (const char* e = std::getenv("TORU_CGDP_WISDOM"); e && *e) return e;
  return toru::comm::wisdom_store::default_path();
}

int cached_chunk(const std::string& file, const std::string& key) {
  toru::comm::wisdom_store w(file);
  try {
    w.read();
    const auto j = nlohmann::json::parse(w.get_section("cgdp"));
    if (j.contains(key)) return j.at(key).at("chunk_layers").get<int>();
  } catch (const std::exception& e) {
    // A damaged cache is a miss, not an error: the search runs again and rewrites it.
    toru::log::warn("chunk cache: {} (searching again)", e.what());
  }
  return 0;
}

void store_chunk(const std::string& file, const std::string& key, int chunk, const std::string& log) {
  toru::comm::wisdom_store w(file);
  nlohmann::json j = nlohmann::json::object();
  try {
    w.read();
    j = nlohmann::json::parse(w.get_section("cgdp"));
  } catch (const toru::error&) {
    // rewritten below with this entry (write() warns about the damaged file)
  }
  j[key] = {{"chunk_layers", chunk}, {"trials", log}};
  w.put_section("cgdp", j.dump());
  w.write();  // atomic, and keeps the file's other sections (comm's, fft's, the tuner's)
}

}  // namespace toru::train::detail
