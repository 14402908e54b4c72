// SPDX-License-Identifier: BSD-3-Clause
// Internals shared by the all-to-all plans, the algorithms and the decision function.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "large_count.hpp"
#include "toru/comm/alltoall_plan.hpp"
#include "toru/comm/communicator.hpp"
#include "toru/core/agreement.hpp"
#include "toru/core/events.hpp"

namespace toru::comm::detail {

/// memcpy that accepts n == 0 with null pointers: empty blocks (count 0) may come with null
/// buffers, and memcpy's pointers must be valid even for zero bytes (UBSan flags it).
inline void copy_bytes(void* dst, const void* src, std::size_t n) {
  if (n > 0) std::memcpy(dst, src, n);
}

/// First element of chunk c of a block of n elements split into nchunks (element granularity).
inline std::int64_t chunk_begin(std::int64_t n, int c, int nchunks) { return n * c / nchunks; }
inline std::int64_t chunk_length(std::int64_t n, int c, int nchunks) {
  return chunk_begin(n, c + 1, nchunks) - chunk_begin(n, c, nchunks);
}

/// What one all-to-all moves, in elements of `type`. The equal case fills the arrays too.
struct exchange {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0;
  int nranks = 1;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  std::size_t esize = 0;    // MPI_Type_size
  MPI_Aint extent = 0;      // MPI_Type_get_extent
  bool contiguous = false;  // elements are esize bytes with no holes: algorithms may memcpy them
  bool equal = true;        // alltoall (true) or alltoallv
  std::size_t count = 0;    // equal case: elements per pair
  std::vector<int> scounts, sdispls, rcounts, rdispls;

  std::size_t send_span() const;  // elements of `in` touched (max displ + count)
  std::size_t recv_span() const;
  bool in_place_compatible() const { return scounts == rcounts && sdispls == rdispls; }
};

/// Set while a staged (device-buffer) run executes on host copies: hooks run after the copy back.
extern thread_local bool hooks_deferred;

struct indirect_state;  // alltoall_indirect.cpp
struct chunked_direct_state;

/// Everything an algorithm needs; built once per plan.
struct plan_impl {
  communicator comm;
  exchange x;
  alltoall_algorithm algorithm = alltoall_algorithm::direct;
  int chunks = 1;
  chunk_hook hook;
  std::size_t algorithm_ws = 0;  // bytes the algorithm itself needs
  std::size_t staging_ws = 0;    // bytes to copy `in` aside for an in-place run of a non-in-place algorithm
  bool plain_direct = false;     // MPI_Alltoall, one chunk: execute's fast path
  std::size_t send_bytes_ = 0;   // bytes of `in` and `out` the exchange touches
  std::size_t recv_bytes_ = 0;
  std::size_t count_per_pair = 0;  // equal case: the caller's count (x.count is 1 with a block type)
  owned_datatype block;            // x.type when one block's count or offsets overflow an int
  std::shared_ptr<const indirect_state> indirect;
  std::shared_ptr<const chunked_direct_state> chunked;
  mutable std::mutex own_ws_mutex;  // guards own_ws (execute is const)
  mutable std::vector<std::byte> own_ws;

  explicit plan_impl(communicator c) : comm(std::move(c)) {}
  std::size_t workspace_size() const { return algorithm_ws + staging_ws; }
  void execute(const void* in, void* out, void* ws) const;
  void execute_host(const void* in, void* out, void* ws) const;
  void execute_device(const void* in, void* out, void* ws) const;
  void call_hook(int c) const {
    if (hook && !hooks_deferred) {
      const events::scope ev("comm.alltoall.hook", 0, "", c);
      hook(chunk_info{c, chunks});
    }
  }
};

/// Every algorithm has this signature. `in` is never MPI_IN_PLACE here: in == out means in place,
/// which only algorithms with candidate::in_place see (the plan stages the others).
using algorithm_fn = void (*)(const plan_impl& plan, const void* in, void* out, std::byte* ws);

void alltoall_direct(const plan_impl& plan, const void* in, void* out, std::byte* ws);
void alltoall_pairwise(const plan_impl& plan, const void* in, void* out, std::byte* ws);
void alltoall_bruck(const plan_impl& plan, const void* in, void* out, std::byte* ws);
void alltoall_indirect(const plan_impl& plan, const void* in, void* out, std::byte* ws);

/// One row of the planner's table: an algorithm, when it applies, what it needs.
struct candidate {
  alltoall_algorithm algorithm;
  /// Empty when applicable, else why not (for error messages when forced).
  std::string (*not_applicable)(const plan_impl& plan);
  /// Precomputes per-plan state (for plan.chunks) and returns the algorithm's workspace bytes.
  std::size_t (*prepare)(plan_impl& plan);
  algorithm_fn run;
  bool in_place;  // handles in == out itself (for the given plan; see in_place_ok)
  bool (*in_place_ok)(const plan_impl& plan);
  bool chunked;  // honours chunks > 1
};

const std::vector<candidate>& candidates();
const candidate& find_candidate(alltoall_algorithm algorithm);

/// Inputs of the decision function: everything is equal on all ranks.
struct decision_input {
  int nranks = 1;
  double bytes_per_pair = 0;  // average over pairs for the v variant
  bool equal = true;
  bool contiguous = true;
  bool has_hook = false;
  const topology::torus* torus = nullptr;  // the communicator's model (given or derived)
  bool torus_given = false;                // the caller described the machine
  int plane_size = 1;                      // indirect layout (1 when none)
  int line_size = 1;
  bool bytes_fit_int = true;  // every rank's byte counts and offsets fit in int (algorithms that copy bytes)
};
struct decision {
  alltoall_algorithm algorithm = alltoall_algorithm::direct;
  int chunks = 1;
};
/// The fixed decision (comm/src/alltoall_decision.cpp): thresholds and the chunk model.
decision decide_alltoall(const decision_input& in);
/// The chunk count the model gives the indirect algorithm (>= 1).
int model_indirect_chunks(const decision_input& in);

/// The all-to-all overrides in the environment (TORU_ALLTOALL_ALGORITHM, TORU_ALLTOALL_CHUNKS), as text:
/// read on every rank, agreed across ranks with the other arguments, parsed strictly.
struct env_overrides {
  std::string algorithm_text, chunks_text;
};
env_overrides read_env_overrides();
constexpr int max_env_chunks = 4096;

/// The options and overrides every rank must pass equally (for validate_collectively).
std::vector<same_on_all_ranks> agreed_options(const alltoall_options& opts, const env_overrides& env);

/// What the caller and the environment force: an algorithm (automatic: none) and a chunk count
/// (0: none). resolve_request checks it locally and throws naming the option or variable; the
/// constructors call it inside their agreed validation.
struct requested {
  alltoall_algorithm algorithm = alltoall_algorithm::automatic;
  int chunks = 0;
};
requested resolve_request(const alltoall_options& opts, const env_overrides& env, const exchange& x,
                          const communicator& comm);

/// Builds a validated plan: selection, preparation. Collective.
std::unique_ptr<plan_impl> make_plan(const communicator& comm, exchange x, const alltoall_options& opts,
                                     const requested& r);

/// Collectively agreed "measure" result, cached in the wisdom store.
decision measure_alltoall(const communicator& comm, const exchange& x, const decision_input& in);

/// Builds a plan for a fixed algorithm and chunk count (no selection). Collective.
std::unique_ptr<plan_impl> prepare_plan(const communicator& comm, const exchange& x, alltoall_algorithm algorithm,
                                        int chunks, chunk_hook hook);

/// True when elements of `type` are `size` bytes with no gaps (memcpy-able).
bool is_contiguous(MPI_Datatype type, std::size_t size, MPI_Aint extent);

/// v as an int, or toru::error(unsupported) naming `what`: MPI counts and displacements are ints.
int checked_int(std::int64_t v, const char* what);

}  // namespace toru::comm::detail
