// SPDX-License-Identifier: BSD-3-Clause
#include "papi_probe.hpp"

#include <dlfcn.h>

#include <string>
#include <vector>

namespace toru::tune::shim {
namespace {

// PAPI's C interface, the few calls used (papi.h values for PAPI 6/7).
constexpr int papi_ok = 0;
constexpr int papi_null = -1;
using init_fn = int (*)(int);
using num_fn = int (*)(int);
using create_fn = int (*)(int*);
using add_named_fn = int (*)(int, const char*);
using start_fn = int (*)(int);
using read_fn = int (*)(int, long long*);

struct papi_state {
  bool available = false;
  std::string note = "not started";
  int set = papi_null;
  std::vector<std::string> names;
  read_fn read = nullptr;
};
papi_state& state() {
  static papi_state s;
  return s;
}

}  // namespace

void papi_start() {
  papi_state& s = state();
  void* lib = dlopen("libpapi.so", RTLD_NOW | RTLD_LOCAL);
  if (!lib) lib = dlopen("libpapi.so.7.0", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    s.note = "libpapi not found: no hardware counters";
    return;
  }
  auto init = reinterpret_cast<init_fn>(dlsym(lib, "PAPI_library_init"));
  auto ver = reinterpret_cast<int*>(dlsym(lib, "PAPI_VER_CURRENT"));
  auto ncmp = reinterpret_cast<num_fn>(dlsym(lib, "PAPI_num_cmp_hwctrs"));
  auto create = reinterpret_cast<create_fn>(dlsym(lib, "PAPI_create_eventset"));
  auto add = reinterpret_cast<add_named_fn>(dlsym(lib, "PAPI_add_named_event"));
  auto start = reinterpret_cast<start_fn>(dlsym(lib, "PAPI_start"));
  s.read = reinterpret_cast<read_fn>(dlsym(lib, "PAPI_read"));
  if (!init || !ncmp || !create || !add || !start || !s.read) {
    s.note = "libpapi lacks the expected entry points";
    return;
  }
  // PAPI_VER_CURRENT is a macro, not a symbol: ask for 7.0 (PAPI_VERSION_NUMBER(7,0,0,0)).
  (void)ver;
  const int want = (7 << 24);
  if (init(want) != want) {
    s.note = "PAPI_library_init failed (version mismatch or no PAPI support)";
    return;
  }
  if (ncmp(0) <= 0) {
    s.note = "this machine exposes no hardware counters (typical of virtual machines)";
    return;
  }
  if (create(&s.set) != papi_ok) {
    s.note = "PAPI_create_eventset failed";
    return;
  }
  for (const char* e : {"PAPI_TOT_CYC", "PAPI_TOT_INS", "PAPI_L3_TCM", "PAPI_RES_STL"})
    if (add(s.set, e) == papi_ok) s.names.emplace_back(e);
  if (s.names.empty() || start(s.set) != papi_ok) {
    s.note = "no PAPI preset event could be counted";
    return;
  }
  s.available = true;
  s.note = "";
}

nlohmann::json papi_read() {
  papi_state& s = state();
  nlohmann::json j{{"available", s.available}, {"note", s.note}, {"counters", nlohmann::json::object()}};
  if (!s.available) return j;
  std::vector<long long> v(s.names.size());
  if (s.read(s.set, v.data()) != papi_ok) return j;
  for (std::size_t i = 0; i < v.size(); ++i) j["counters"][s.names[i]] = v[i];
  return j;
}

}  // namespace toru::tune::shim
