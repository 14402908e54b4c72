// SPDX-License-Identifier: BSD-3-Clause
#include "dropin_state.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string_view>

#include "toru/core/error.hpp"
#include "toru/core/mpi.hpp"

namespace toru::comm::detail {

namespace {

// Signatures a program cycles through are few (one per field size and layout); a program whose
// counts change on every call rebuilds anyway, and the cap bounds what it keeps.
constexpr std::size_t max_entries = 16;

std::mutex registry_mutex;
std::vector<MPI_Comm> registry;  // caller communicators that carry a dropin_state

// MPI_Comm_get_attr takes a lock and costs about as much as an 8-byte all-to-all on two ranks
// (86 ns against 300-700 ns, Open MPI 4.1): each thread remembers the state it found last. A
// deleted state (its communicator freed, its handle free to be reused) bumps the generation and so
// invalidates every thread's memory.
std::atomic<std::uint64_t> generation{0};
struct remembered {
  MPI_Comm comm = MPI_COMM_NULL;
  dropin_state* state = nullptr;
  std::uint64_t generation = ~std::uint64_t{0};
};
thread_local remembered last;

int delete_state(MPI_Comm comm, int, void* value, void*) {
  generation.fetch_add(1, std::memory_order_acq_rel);
  {
    std::lock_guard lock(registry_mutex);
    registry.erase(std::remove(registry.begin(), registry.end(), comm), registry.end());
  }
  delete static_cast<dropin_state*>(value);
  return MPI_SUCCESS;
}

int state_keyval() {
  static int key = MPI_KEYVAL_INVALID;
  static std::once_flag once;
  std::call_once(once, [] {
    check_mpi(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_state, &key, nullptr), "MPI_Comm_create_keyval");
  });
  return key;
}

// MPI_Finalize deletes MPI_COMM_SELF's attributes first, with MPI still usable: the moment to free
// the states of communicators the program never freed (MPI_COMM_WORLD above all). Later, toru's
// communicators would outlive MPI.
int release_all(MPI_Comm, int, void*, void*) {
  std::vector<MPI_Comm> comms;
  {
    std::lock_guard lock(registry_mutex);
    comms = registry;
  }
  for (MPI_Comm c : comms) MPI_Comm_delete_attr(c, state_keyval());
  return MPI_SUCCESS;
}

void release_at_finalize() {
  static std::once_flag once;
  std::call_once(once, [] {
    int key = MPI_KEYVAL_INVALID;
    check_mpi(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, release_all, &key, nullptr), "MPI_Comm_create_keyval");
    check_mpi(MPI_Comm_set_attr(MPI_COMM_SELF, key, nullptr), "MPI_Comm_set_attr");
  });
}

// TORU_CHECK=1 (any value but empty and "0"): agree on the arguments of every drop-in call.
bool check_requested() {
  const char* env = std::getenv("TORU_CHECK");
  return env != nullptr && *env != '\0' && std::string_view(env) != "0";
}

bool same(const std::vector<int>& v, std::size_t at, const int* a, std::size_t n) {
  return n == 0 || std::memcmp(v.data() + at, a, n * sizeof(int)) == 0;
}

}  // namespace

type_key describe_type(MPI_Datatype type) {
  type_key k;
  k.handle = type;
  if (type == MPI_DATATYPE_NULL) return k;
  check_mpi(MPI_Type_size(type, &k.size), "MPI_Type_size");
  check_mpi(MPI_Type_get_extent(type, &k.lb, &k.extent), "MPI_Type_get_extent");
  check_mpi(MPI_Type_get_true_extent(type, &k.true_lb, &k.true_extent), "MPI_Type_get_true_extent");
  return k;
}

dropin_state::dropin_state(MPI_Comm c) : comm(c) {
  int mine = check_requested() ? 1 : 0, any = 0;
  check_mpi(MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, comm.mpi()), "MPI_Allreduce");
  check_every_call = any == 1;
}

alltoall_entry* dropin_state::find(const alltoall_signature& sig) {
  if (last_equal < equal.size() && equal[last_equal].sig == sig) return &equal[last_equal];
  for (std::size_t i = 0; i < equal.size(); ++i)
    if (equal[i].sig == sig) {
      last_equal = i;
      return &equal[i];
    }
  return nullptr;
}

stored_v_signature::stored_v_signature(const alltoallv_signature& s)
    : stype(s.stype), rtype(s.rtype), in_place(s.in_place), arrays(4 * s.n) {
  const int* from[] = {s.scounts, s.sdispls, s.rcounts, s.rdispls};
  for (std::size_t k = 0; k < 4; ++k)
    if (s.n > 0) std::memcpy(arrays.data() + k * s.n, from[k], s.n * sizeof(int));
}

bool stored_v_signature::matches(const alltoallv_signature& s) const {
  return arrays.size() == 4 * s.n && in_place == s.in_place && rtype == s.rtype && stype == s.stype &&
         same(arrays, 0, s.scounts, s.n) && same(arrays, s.n, s.sdispls, s.n) &&
         same(arrays, 2 * s.n, s.rcounts, s.n) && same(arrays, 3 * s.n, s.rdispls, s.n);
}

alltoallv_entry* dropin_state::find(const alltoallv_signature& sig) {
  for (auto& e : variable)
    if (e.sig.matches(sig)) return &e;
  return nullptr;
}

alltoall_entry& dropin_state::insert(alltoall_entry e) {
  equal.erase(std::remove_if(equal.begin(), equal.end(), [&](const auto& old) { return old.sig == e.sig; }),
              equal.end());
  if (equal.size() >= max_entries) equal.erase(equal.begin());
  equal.push_back(std::move(e));
  last_equal = equal.size() - 1;
  return equal.back();
}

alltoallv_entry& dropin_state::insert(const alltoallv_signature& sig, std::unique_ptr<alltoallv_plan> plan) {
  // A signature that hit here while another rank missed is planned again: the old entry goes.
  variable.erase(std::remove_if(variable.begin(), variable.end(), [&](const auto& e) { return e.sig.matches(sig); }),
                 variable.end());
  if (variable.size() >= max_entries) variable.erase(variable.begin());
  variable.push_back(alltoallv_entry{stored_v_signature(sig), next_id++, std::move(plan)});
  return variable.back();
}

dropin_state& dropin_for(MPI_Comm comm) {
  const std::uint64_t now = generation.load(std::memory_order_acquire);
  if (last.comm == comm && last.generation == now) return *last.state;
  void* value = nullptr;
  int found = 0;
  check_mpi(MPI_Comm_get_attr(comm, state_keyval(), &value, &found), "MPI_Comm_get_attr");
  if (!found) {
    auto state = std::make_unique<dropin_state>(comm);
    release_at_finalize();
    check_mpi(MPI_Comm_set_attr(comm, state_keyval(), state.get()), "MPI_Comm_set_attr");
    {
      std::lock_guard lock(registry_mutex);
      registry.push_back(comm);
    }
    value = state.release();
  }
  last = {comm, static_cast<dropin_state*>(value), now};
  return *last.state;
}

}  // namespace toru::comm::detail
