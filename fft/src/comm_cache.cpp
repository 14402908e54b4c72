// SPDX-License-Identifier: BSD-3-Clause
#include "comm_cache.hpp"

#include <map>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "toru/core/agreement.hpp"
#include "toru/core/mpi.hpp"

namespace toru::fft::detail {

namespace {

struct comms_for_options {
  comm_ptr all;
  std::map<std::pair<int, int>, std::pair<comm_ptr, comm_ptr>> grids;
};

using options_key = std::tuple<std::string, std::string, int, bool>;  // torus, order, threads, bind_threads

struct cache_entry {
  std::map<options_key, comms_for_options> by_options;
  mpi_comm_ptr agree;
};

std::mutex cache_mutex;
std::set<cache_entry*> live_entries;
int user_keyval = MPI_KEYVAL_INVALID;
int self_keyval = MPI_KEYVAL_INVALID;

int delete_entry(MPI_Comm, int, void* value, void*) {
  auto* e = static_cast<cache_entry*>(value);
  std::lock_guard lock(cache_mutex);
  live_entries.erase(e);
  delete e;
  return MPI_SUCCESS;
}

// MPI_Finalize frees MPI_COMM_SELF first: release every cached communicator while MPI still works.
int finalize_hook(MPI_Comm, int, void*, void*) {
  std::lock_guard lock(cache_mutex);
  for (cache_entry* e : live_entries) {
    e->by_options.clear();
    e->agree.reset();
  }
  return MPI_SUCCESS;
}

void ensure_keyvals() {
  if (user_keyval != MPI_KEYVAL_INVALID) return;
  check_mpi(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_entry, &user_keyval, nullptr),
            "MPI_Comm_create_keyval");
  check_mpi(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, finalize_hook, &self_keyval, nullptr),
            "MPI_Comm_create_keyval");
  check_mpi(MPI_Comm_set_attr(MPI_COMM_SELF, self_keyval, nullptr), "MPI_Comm_set_attr");
}

cache_entry* entry_of(MPI_Comm user) {
  std::lock_guard lock(cache_mutex);
  ensure_keyvals();
  void* value = nullptr;
  int found = 0;
  check_mpi(MPI_Comm_get_attr(user, user_keyval, &value, &found), "MPI_Comm_get_attr");
  if (found) return static_cast<cache_entry*>(value);
  auto* entry = new cache_entry;
  live_entries.insert(entry);
  check_mpi(MPI_Comm_set_attr(user, user_keyval, entry), "MPI_Comm_set_attr");
  return entry;
}

}  // namespace

mpi_comm_ptr agreement_comm(MPI_Comm user) {
  cache_entry* entry = entry_of(user);
  // Plans are built collectively, so every rank misses or hits here alike.
  if (!entry->agree) {
    MPI_Comm dup = MPI_COMM_NULL;
    check_mpi(MPI_Comm_dup(user, &dup), "MPI_Comm_dup");
    entry->agree = mpi_comm_ptr(new MPI_Comm(dup), [](const MPI_Comm* c) {
      int finalized = 0;
      MPI_Finalized(&finalized);
      if (!finalized) {
        MPI_Comm own = *c;
        MPI_Comm_free(&own);
      }
      delete c;
    });
  }
  return entry->agree;
}

grid_comms communicators(MPI_Comm user, int p0, int p1, const comm::communicator_options& opts) {
  cache_entry* entry = entry_of(user);
  // Options that differ across ranks would make one rank hit the cache while another builds (a
  // collective): agree on them first.
  validate_collectively(user,
                        {same_text("options.comm.torus", opts.torus),
                         same_text("options.comm.order", opts.order),
                         {"options.comm.threads", opts.threads},
                         {"options.comm.bind_threads", opts.bind_threads ? 1 : 0}},
                        [] {});
  auto* e = &entry->by_options[options_key{opts.torus, opts.order, opts.threads, opts.bind_threads}];
  // Every rank of `user` sees the same cache history (plans are built collectively), so hits and
  // misses, and hence the collective constructions below, agree across ranks.
  if (!e->all) e->all = std::make_shared<const comm::communicator>(user, opts);
  grid_comms g{e->all, nullptr, nullptr};
  if (p0 * p1 == 0) return g;
  auto it = e->grids.find({p0, p1});
  if (it == e->grids.end()) {
    const int rank = e->all->rank();
    MPI_Comm row = MPI_COMM_NULL, col = MPI_COMM_NULL;
    check_mpi(MPI_Comm_split(e->all->mpi(), rank / p1, rank % p1, &row), "MPI_Comm_split");
    check_mpi(MPI_Comm_split(e->all->mpi(), rank % p1, rank / p1, &col), "MPI_Comm_split");
    const comm::communicator_options sub{.threads = opts.threads, .bind_threads = opts.bind_threads};
    auto r = std::make_shared<const comm::communicator>(row, *e->all, sub);
    auto c = std::make_shared<const comm::communicator>(col, *e->all, sub);
    MPI_Comm_free(&row);  // the communicators hold their own duplicates
    MPI_Comm_free(&col);
    it = e->grids.emplace(std::make_pair(p0, p1), std::make_pair(r, c)).first;
  }
  g.row = it->second.first;
  g.col = it->second.second;
  return g;
}

}  // namespace toru::fft::detail
