// SPDX-License-Identifier: BSD-3-Clause
// Plan construction (validation, selection, preparation) and execution; the table of candidates.
#include "toru/comm/alltoall_plan.hpp"

#include <algorithm>
#include <charconv>
#include <climits>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "alltoall_impl.hpp"
#include "comm_state.hpp"
#include "gpu_staging.hpp"
#include "toru/core/device.hpp"
#include "toru/core/error.hpp"
#include "toru/core/events.hpp"
#include "toru/core/log.hpp"
#include "toru/core/mpi.hpp"
#include "toru/detail/split_phase.hpp"
#include "toru/topology/network_model.hpp"

namespace toru::comm {

std::string_view to_string(alltoall_algorithm a) noexcept {
  switch (a) {
    case alltoall_algorithm::automatic:
      return "automatic";
    case alltoall_algorithm::direct:
      return "direct";
    case alltoall_algorithm::pairwise:
      return "pairwise";
    case alltoall_algorithm::bruck:
      return "bruck";
    case alltoall_algorithm::indirect:
      return "indirect";
  }
  return "unknown";
}

alltoall_algorithm algorithm_from_string(std::string_view name) {
  if (name == "automatic" || name == "auto") return alltoall_algorithm::automatic;
  if (name == "direct") return alltoall_algorithm::direct;
  if (name == "pairwise") return alltoall_algorithm::pairwise;
  if (name == "bruck") return alltoall_algorithm::bruck;
  if (name == "indirect") return alltoall_algorithm::indirect;
  expect(false, "all-to-all algorithm", "one of auto, direct, pairwise, bruck, indirect", name);
  return alltoall_algorithm::automatic;
}

alltoall_algorithm resolved_algorithm(alltoall_algorithm requested) noexcept {
  const auto env = detail::read_env_overrides();
  if (env.algorithm_text.empty()) return requested;
  try {
    const auto a = algorithm_from_string(env.algorithm_text);
    return a == alltoall_algorithm::automatic ? requested : a;
  } catch (...) {
    return requested;  // refused by the plan constructors, collectively; nothing to resolve here
  }
}

namespace detail {

thread_local bool hooks_deferred = false;

int checked_int(std::int64_t v, const char* what) {
  if (v < 0 || v > INT_MAX)
    throw error(errc::unsupported, fmt::format("{}: {} does not fit in an MPI count (int)", what, v));
  return static_cast<int>(v);
}

std::size_t exchange::send_span() const {
  std::int64_t span = 0;
  for (std::size_t j = 0; j < scounts.size(); ++j)
    if (scounts[j] > 0) span = std::max<std::int64_t>(span, std::int64_t{sdispls[j]} + scounts[j]);
  return static_cast<std::size_t>(span);
}

std::size_t exchange::recv_span() const {
  std::int64_t span = 0;
  for (std::size_t j = 0; j < rcounts.size(); ++j)
    if (rcounts[j] > 0) span = std::max<std::int64_t>(span, std::int64_t{rdispls[j]} + rcounts[j]);
  return static_cast<std::size_t>(span);
}

std::size_t prepare_direct(plan_impl& plan);
std::size_t prepare_bruck(plan_impl& plan);
std::size_t prepare_indirect(plan_impl& plan);

bool is_contiguous(MPI_Datatype type, std::size_t size, MPI_Aint extent) {
  MPI_Aint lb = 0, ext = 0, true_lb = 0, true_ext = 0;
  check_mpi(MPI_Type_get_extent(type, &lb, &ext), "MPI_Type_get_extent");
  check_mpi(MPI_Type_get_true_extent(type, &true_lb, &true_ext), "MPI_Type_get_true_extent");
  return lb == 0 && true_lb == 0 && static_cast<MPI_Aint>(size) == extent && true_ext == extent;
}

namespace {

std::string always() { return {}; }
std::size_t nothing(plan_impl&) { return 0; }

const std::vector<candidate> table = {
    {alltoall_algorithm::direct, [](const plan_impl&) { return always(); }, prepare_direct, alltoall_direct, true,
     // MPI_IN_PLACE must be on every rank or none; with variable counts ranks differ (one with
     // nothing to move, say), so v-plans stage an in-place call's input and never pass it.
     [](const plan_impl& p) { return p.chunks == 1 && p.x.equal; }, true},
    {alltoall_algorithm::pairwise, [](const plan_impl&) { return always(); }, nothing, alltoall_pairwise, false,
     [](const plan_impl&) { return false; }, false},
    {alltoall_algorithm::bruck,
     [](const plan_impl& p) -> std::string {
       if (!p.x.equal) return "bruck needs equal blocks (alltoall_plan, not alltoallv_plan)";
       if (!p.x.contiguous) return "bruck needs a contiguous datatype (size == extent)";
       return {};
     },
     prepare_bruck, alltoall_bruck, true, [](const plan_impl&) { return true; }, false},
    {alltoall_algorithm::indirect,
     [](const plan_impl& p) -> std::string {
       if (!p.x.contiguous) return "indirect needs a contiguous datatype (size == extent)";
       return {};
     },
     prepare_indirect, alltoall_indirect, true, [](const plan_impl&) { return true; }, true},
};

decision_input describe(const plan_impl& plan, const alltoall_options& opts) {
  const auto& x = plan.x;
  const auto& cs = detail::comm_access::state(plan.comm);
  decision_input in;
  in.nranks = x.nranks;
  if (x.equal) {
    in.bytes_per_pair = static_cast<double>(x.count * x.esize);
    in.bytes_fit_int = in.bytes_per_pair * x.nranks <= INT_MAX;
  } else {
    // The v variant decides on the average block, agreed over all ranks.
    std::int64_t mine = 0, all = 0;
    for (int c : x.scounts) mine += c;
    check_mpi(MPI_Allreduce(&mine, &all, 1, MPI_INT64_T, MPI_SUM, x.comm), "MPI_Allreduce");
    in.bytes_per_pair = static_cast<double>(all) * static_cast<double>(x.esize) / (double(x.nranks) * x.nranks);
    in.bytes_fit_int = static_cast<double>(all) * static_cast<double>(x.esize) <= INT_MAX;
  }
  in.equal = x.equal;
  in.contiguous = x.contiguous;
  in.has_hook = static_cast<bool>(opts.on_chunk);
  in.torus = &plan.comm.torus();
  in.torus_given = plan.comm.torus_given();
  in.plane_size = cs.plane_size;
  in.line_size = cs.line_size;
  return in;
}

}  // namespace

const std::vector<candidate>& candidates() { return table; }

const candidate& find_candidate(alltoall_algorithm a) {
  for (const auto& c : table)
    if (c.algorithm == a) return c;
  throw error(errc::internal, fmt::format("no candidate for algorithm {}", to_string(a)));
}

std::unique_ptr<plan_impl> prepare_plan(const communicator& comm, const exchange& x, alltoall_algorithm algorithm,
                                        int chunks, chunk_hook hook) {
  auto plan = std::make_unique<plan_impl>(comm);
  plan->x = x;
  plan->algorithm = algorithm;
  const auto& cand = find_candidate(algorithm);
  plan->chunks = cand.chunked ? std::max(1, chunks) : 1;
  plan->hook = std::move(hook);
  // Sizes may differ across ranks (v variant): agree on failures so nobody waits in a collective.
  validate_collectively(x.comm, [&] { plan->algorithm_ws = cand.prepare(*plan); });
  plan->plain_direct = algorithm == alltoall_algorithm::direct && plan->chunks == 1 && x.equal;
  plan->send_bytes_ = x.send_span() * static_cast<std::size_t>(x.extent);
  plan->recv_bytes_ = x.recv_span() * static_cast<std::size_t>(x.extent);
  if (!cand.in_place_ok(*plan)) plan->staging_ws = plan->send_bytes_;
  return plan;
}

env_overrides read_env_overrides() {
  env_overrides e;
  if (const char* v = std::getenv("TORU_ALLTOALL_ALGORITHM")) e.algorithm_text = v;
  if (const char* v = std::getenv("TORU_ALLTOALL_CHUNKS")) e.chunks_text = v;
  return e;
}

std::vector<same_on_all_ranks> agreed_options(const alltoall_options& opts, const env_overrides& env) {
  // The hook is left out: it runs on its own rank and decides nothing the ranks do together.
  return {{"alltoall_options::algorithm", static_cast<std::int64_t>(opts.algorithm)},
          {"alltoall_options::chunks", opts.chunks},
          {"alltoall_options::measure", opts.measure ? 1 : 0},
          same_text("TORU_ALLTOALL_ALGORITHM (environment)", env.algorithm_text),
          same_text("TORU_ALLTOALL_CHUNKS (environment)", env.chunks_text)};
}

requested resolve_request(const alltoall_options& opts, const env_overrides& env, const exchange& x,
                          const communicator& comm) {
  requested r;
  expect(opts.chunks >= 0, "alltoall_options::chunks", ">= 0 (0 = chosen by the model)", std::to_string(opts.chunks));
  r.algorithm = opts.algorithm;
  r.chunks = opts.chunks;
  if (!env.algorithm_text.empty()) {
    alltoall_algorithm a = alltoall_algorithm::automatic;
    try {
      a = algorithm_from_string(env.algorithm_text);
    } catch (const error&) {
      expect(false, "TORU_ALLTOALL_ALGORITHM (environment)", "one of auto, direct, pairwise, bruck, indirect",
             env.algorithm_text);
    }
    if (a != alltoall_algorithm::automatic) r.algorithm = a;
  }
  if (!env.chunks_text.empty()) {
    const char* first = env.chunks_text.data();
    const char* last = first + env.chunks_text.size();
    int c = 0;
    const auto [end, ec] = std::from_chars(first, last, c);
    expect(ec == std::errc{} && end == last && c >= 1 && c <= max_env_chunks, "TORU_ALLTOALL_CHUNKS (environment)",
           fmt::format("an integer from 1 to {}", max_env_chunks), env.chunks_text);
    if (r.chunks == 0) r.chunks = c;
  }
  if (r.algorithm != alltoall_algorithm::automatic) {
    plan_impl probe(comm);
    probe.x = x;
    const auto why = find_candidate(r.algorithm).not_applicable(probe);
    if (!why.empty())
      throw error(errc::unsupported,
                  fmt::format("all-to-all algorithm {} cannot run this exchange: {}", to_string(r.algorithm), why));
  }
  return r;
}

std::unique_ptr<plan_impl> make_plan(const communicator& comm, exchange x, const alltoall_options& opts,
                                     const requested& r) {
  x.comm = comm.mpi();
  x.rank = comm.rank();
  x.nranks = comm.size();
  plan_impl probe(comm);
  probe.x = x;

  decision d;
  const auto in = describe(probe, opts);
  if (r.algorithm != alltoall_algorithm::automatic) {
    d.algorithm = r.algorithm;
    d.chunks = r.algorithm == alltoall_algorithm::indirect ? model_indirect_chunks(in) : 1;
  } else if (opts.measure) {
    d = measure_alltoall(comm, x, in);
  } else {
    d = decide_alltoall(in);
  }
  if (r.chunks > 0) d.chunks = r.chunks;
  auto plan = prepare_plan(comm, x, d.algorithm, d.chunks, opts.on_chunk);
  log::debug("comm: all-to-all plan: {} with {} chunk(s), {:.0f} bytes per pair, {} ranks", to_string(plan->algorithm),
             plan->chunks, in.bytes_per_pair, x.nranks);
  return plan;
}

namespace {
// Asking CUDA about every pointer costs a driver call; only where a GPU is present at all. Asked on
// first use, not at load time, so programs that never execute a plan never initialise CUDA.
bool gpu_present() {
  static const bool present = toru::gpu_count() > 0;
  return present;
}
}  // namespace

namespace {
// The exchange's bound on the communicator's torus model, for a profiler (tune/): only computed
// while a sink listens.
double bound_for_events(const plan_impl& p) {
  if (!events::enabled() || p.x.nranks < 2) return 0;
  try {
    return topology::alltoall_bound(p.comm.torus(), static_cast<double>(p.send_bytes_) / p.x.nranks);
  } catch (...) {
    return 0;
  }
}
}  // namespace

void plan_impl::execute(const void* in, void* out, void* ws) const {
  const events::scope ev("comm.alltoall", send_bytes_, to_string(algorithm).data(), bound_for_events(*this));
  if (in == MPI_IN_PLACE) in = out;
  // A rank with nothing to move is not "in place" whatever it passes (two null pointers, say), and
  // its empty staging must not read as in == out either.
  static const std::byte nothing_to_send{};
  if (in == out && send_bytes_ == 0 && recv_bytes_ == 0) in = &nothing_to_send;
  // The common case, MPI's own all-to-all on host buffers, goes straight to MPI: at 8 bytes per pair
  // an exchange takes a few hundred nanoseconds, and toru should add nothing measurable to it.
  if (plain_direct && !gpu_present() && (in != nullptr || send_bytes_ == 0) && (out != nullptr || recv_bytes_ == 0)) {
    const int n = static_cast<int>(x.count);
    check_mpi(MPI_Alltoall(in == out ? MPI_IN_PLACE : in, n, x.type, out, n, x.type, x.comm), "MPI_Alltoall");
    call_hook(0);
    return;
  }
  if (gpu_present() && (is_device_pointer(in) || is_device_pointer(out))) {
    execute_device(in, out, ws);
    return;
  }
  execute_host(in, out, ws);
}

// Device buffers: handed to MPI as they are where the MPI library is CUDA-aware and the algorithm
// only passes buffers to MPI (direct, pairwise); otherwise staged through pinned host memory, and
// the hook runs for every chunk once all data is back on the device.
void plan_impl::execute_device(const void* in, void* out, void* ws) const {
  const bool passes_through = algorithm == alltoall_algorithm::pairwise ||
                              (algorithm == alltoall_algorithm::direct && (chunks == 1 || in != out));
  if (mpi_is_cuda_aware() && passes_through) {
    execute_host(in, out, ws);
    return;
  }
  const std::size_t send_bytes = send_bytes_, recv_bytes = recv_bytes_;
  pinned_buffer host_in(send_bytes), host_out(recv_bytes);
  copy_bytes(host_in.data(), in, send_bytes);
  if (in == out) copy_bytes(host_out.data(), in, recv_bytes);
  {
    // The hook must see data in `out`, which is only there once copied back.
    hooks_deferred = true;
    struct restore {
      ~restore() { hooks_deferred = false; }
    } guard;
    execute_host(in == out ? host_out.data() : host_in.data(), host_out.data(), ws);
  }
  copy_bytes(out, host_out.data(), recv_bytes);
  for (int c = 0; c < chunks; ++c) call_hook(c);
}

void plan_impl::execute_host(const void* in, void* out, void* ws) const {
  const std::size_t send_bytes = send_bytes_, recv_bytes = recv_bytes_;
  // A bad buffer on this rank: still take part with scratch data so no peer hangs, then throw.
  std::string bad;
  std::vector<std::byte> scratch_in, scratch_out;
  if (out == nullptr && recv_bytes > 0) {
    bad = fmt::format("out: expected a buffer of {} bytes, got a null pointer", recv_bytes);
    scratch_out.resize(recv_bytes);
    if (in == out) in = nullptr;
    out = scratch_out.data();
  }
  if (in == nullptr && send_bytes > 0) {
    if (bad.empty()) bad = fmt::format("in: expected a buffer of {} bytes, got a null pointer", send_bytes);
    scratch_in.resize(send_bytes);
    in = scratch_in.data();
  }
  bool in_place = in == out;
  if (in_place && !x.in_place_compatible()) {
    // Exchange scratch data and leave the caller's buffer untouched.
    if (bad.empty()) bad = "in == out (in place): expected send counts and displacements equal to the receive ones";
    scratch_in.resize(send_bytes);
    scratch_out.resize(recv_bytes);
    in = scratch_in.data();
    out = scratch_out.data();
    in_place = false;
  }

  std::byte* w = static_cast<std::byte*>(ws);
  std::unique_lock<std::mutex> own;
  if (w == nullptr && workspace_size() > 0) {
    own = std::unique_lock(own_ws_mutex);
    if (own_ws.size() < workspace_size()) own_ws.resize(workspace_size());
    w = own_ws.data();
  }
  const auto& cand = find_candidate(algorithm);
  if (in_place && !cand.in_place_ok(*this)) {
    copy_bytes(w + algorithm_ws, in, send_bytes);
    in = w + algorithm_ws;
  }
  cand.run(*this, in, out, w);
  if (!bad.empty()) throw error(errc::invalid_argument, bad);
}

}  // namespace detail

namespace {

detail::exchange make_exchange(MPI_Datatype type, bool equal) {
  detail::exchange x;
  x.type = type;
  x.equal = equal;
  return x;
}

// Local checks of the datatype, shared by both plan kinds; fills esize, extent, contiguous.
void check_type(detail::exchange& x) {
  expect(x.type != MPI_DATATYPE_NULL, "type", "a committed MPI datatype", "MPI_DATATYPE_NULL");
  int size = 0;
  check_mpi(MPI_Type_size(x.type, &size), "MPI_Type_size");
  MPI_Aint lb = 0;
  check_mpi(MPI_Type_get_extent(x.type, &lb, &x.extent), "MPI_Type_get_extent");
  x.esize = static_cast<std::size_t>(size);
  x.contiguous = detail::is_contiguous(x.type, x.esize, x.extent);
}

// Type properties that every rank must share, computed without throwing (-1 for a type that
// check_type will refuse), so that they can enter the agreement before the checks run.
std::int64_t type_size_or_negative(MPI_Datatype type) {
  int size = 0;
  if (type == MPI_DATATYPE_NULL || MPI_Type_size(type, &size) != MPI_SUCCESS) return -1;
  return size;
}

std::int64_t contiguity_or_negative(MPI_Datatype type) {
  const std::int64_t size = type_size_or_negative(type);
  MPI_Aint lb = 0, extent = 0;
  if (size < 0 || MPI_Type_get_extent(type, &lb, &extent) != MPI_SUCCESS) return -1;
  try {
    return detail::is_contiguous(type, static_cast<std::size_t>(size), extent) ? 1 : 0;
  } catch (const error&) {
    return -1;
  }
}

}  // namespace

alltoall_plan::alltoall_plan(const communicator& comm, std::size_t count, MPI_Datatype type, alltoall_options opts) {
  auto x = make_exchange(type, true);
  const int P = comm.size();
  const auto env = detail::read_env_overrides();
  // Everything that decides what the ranks do together, agreed in the same allreduce as the checks.
  auto same = detail::agreed_options(opts, env);
  // Bytes per pair, not count and type separately: MPI lets ranks describe the same data with
  // different (count, type) pairs of one type signature, and the drop-in calls pass them on.
  const std::int64_t tsize = type_size_or_negative(type);
  const auto cnt = static_cast<std::int64_t>(std::min<std::size_t>(count, INT64_MAX));
  const std::int64_t bytes = tsize < 0 ? -1 : tsize > 0 && cnt > INT64_MAX / tsize ? INT64_MAX : cnt * tsize;
  same.insert(same.begin(),
              {{"count * size(type) (bytes per pair)", bytes}, {"contiguity of type", contiguity_or_negative(type)}});
  // Counts and offsets (j * count) are ints for MPI: beyond, one block becomes one element of a
  // derived type. Ranks describing the same bytes with other counts may choose differently; the type
  // signatures still match, and a forced algorithm refused on one rank is refused on all (agreed below).
  const auto limit = static_cast<std::size_t>(detail::int_limit());
  const bool large = count > limit / static_cast<std::size_t>(std::max(P, 1));
  detail::owned_datatype block;
  detail::requested r;
  validate_collectively(comm.mpi(), "the toru::comm::alltoall_plan constructor", same, [&] {
    check_type(x);
    if (large) {
      block = detail::make_block_type(static_cast<std::int64_t>(count), type);
      x.type = block.get();
      x.esize *= count;
      x.extent *= static_cast<MPI_Aint>(count);
    }
    x.count = large ? 1 : count;
    r = detail::resolve_request(opts, env, x, comm);
  });
  const int n = static_cast<int>(x.count);
  x.scounts.assign(static_cast<std::size_t>(P), n);
  x.rcounts = x.scounts;
  x.sdispls.resize(static_cast<std::size_t>(P));
  for (int j = 0; j < P; ++j) x.sdispls[static_cast<std::size_t>(j)] = j * n;
  x.rdispls = x.sdispls;
  impl_ = detail::make_plan(comm, std::move(x), opts, r);
  impl_->count_per_pair = count;
  impl_->block = std::move(block);
}

alltoall_plan::~alltoall_plan() = default;
alltoall_plan::alltoall_plan(alltoall_plan&&) noexcept = default;
alltoall_plan& alltoall_plan::operator=(alltoall_plan&&) noexcept = default;
void alltoall_plan::execute(const void* in, void* out) const { impl_->execute(in, out, nullptr); }
void alltoall_plan::execute(const void* in, void* out, void* ws) const { impl_->execute(in, out, ws); }
request alltoall_plan::init(const void* in, void* out, void* ws) const {
  return request("toru::comm::alltoall_plan (persistent)",
                 [impl = impl_.get(), in, out, ws] { impl->execute(in, out, ws); });
}
void alltoall_plan::start(const void* in, void* out, void* ws) const {
  toru::detail::start_split_phase(phase_, "toru::comm::alltoall_plan",
                                  [this, in, out, ws] { impl_->execute(in, out, ws); });
}
void alltoall_plan::wait() const { toru::detail::wait_split_phase(phase_, "toru::comm::alltoall_plan"); }
std::size_t alltoall_plan::workspace_size() const { return impl_->workspace_size(); }
alltoall_algorithm alltoall_plan::algorithm() const { return impl_->algorithm; }
int alltoall_plan::chunks() const { return impl_->chunks; }
std::size_t alltoall_plan::count() const { return impl_->count_per_pair; }
const communicator& alltoall_plan::comm() const { return impl_->comm; }

alltoallv_plan::alltoallv_plan(const communicator& comm, std::span<const int> send_counts,
                               std::span<const int> send_displs, std::span<const int> recv_counts,
                               std::span<const int> recv_displs, MPI_Datatype type, alltoall_options opts) {
  auto x = make_exchange(type, false);
  const auto P = static_cast<std::size_t>(comm.size());
  const auto env = detail::read_env_overrides();
  auto same = detail::agreed_options(opts, env);
  same.insert(same.begin(),
              {{"size(type)", type_size_or_negative(type)}, {"contiguity of type", contiguity_or_negative(type)}});
  detail::requested r;
  validate_collectively(comm.mpi(), "the toru::comm::alltoallv_plan constructor", same, [&] {
    check_type(x);
    const std::pair<std::span<const int>, const char*> arrays[] = {{send_counts, "send_counts"},
                                                                   {send_displs, "send_displs"},
                                                                   {recv_counts, "recv_counts"},
                                                                   {recv_displs, "recv_displs"}};
    for (const auto& [a, name] : arrays) {
      expect(a.size() == P, name, fmt::format("{} entries (the communicator size)", P), std::to_string(a.size()));
      for (std::size_t j = 0; j < P; ++j)
        expect(a[j] >= 0, fmt::format("{}[{}]", name, j), ">= 0", std::to_string(a[j]));
    }
    r = detail::resolve_request(opts, env, x, comm);
  });
  x.scounts.assign(send_counts.begin(), send_counts.end());
  x.sdispls.assign(send_displs.begin(), send_displs.end());
  x.rcounts.assign(recv_counts.begin(), recv_counts.end());
  x.rdispls.assign(recv_displs.begin(), recv_displs.end());
  // What rank j sends me must be what I expect from j: one all-to-all of the byte counts.
  std::vector<std::int64_t> sent(P), told(P);
  for (std::size_t j = 0; j < P; ++j) sent[j] = std::int64_t{x.scounts[j]} * static_cast<std::int64_t>(x.esize);
  check_mpi(MPI_Alltoall(sent.data(), 1, MPI_INT64_T, told.data(), 1, MPI_INT64_T, comm.mpi()), "MPI_Alltoall");
  validate_collectively(comm.mpi(), [&] {
    for (std::size_t j = 0; j < P; ++j) {
      const std::int64_t expected = std::int64_t{x.rcounts[j]} * static_cast<std::int64_t>(x.esize);
      if (told[j] != expected)
        throw error(errc::mismatch,
                    fmt::format("recv_counts[{}]: rank {} sends {} bytes to rank {}, but recv_counts[{}] * type size "
                                "is {} bytes",
                                j, j, told[j], comm.rank(), j, expected));
    }
  });
  impl_ = detail::make_plan(comm, std::move(x), opts, r);
}

alltoallv_plan::~alltoallv_plan() = default;
alltoallv_plan::alltoallv_plan(alltoallv_plan&&) noexcept = default;
alltoallv_plan& alltoallv_plan::operator=(alltoallv_plan&&) noexcept = default;
void alltoallv_plan::execute(const void* in, void* out) const { impl_->execute(in, out, nullptr); }
void alltoallv_plan::execute(const void* in, void* out, void* ws) const { impl_->execute(in, out, ws); }
request alltoallv_plan::init(const void* in, void* out, void* ws) const {
  return request("toru::comm::alltoallv_plan (persistent)",
                 [impl = impl_.get(), in, out, ws] { impl->execute(in, out, ws); });
}
void alltoallv_plan::start(const void* in, void* out, void* ws) const {
  toru::detail::start_split_phase(phase_, "toru::comm::alltoallv_plan",
                                  [this, in, out, ws] { impl_->execute(in, out, ws); });
}
void alltoallv_plan::wait() const { toru::detail::wait_split_phase(phase_, "toru::comm::alltoallv_plan"); }
std::size_t alltoallv_plan::workspace_size() const { return impl_->workspace_size(); }
alltoall_algorithm alltoallv_plan::algorithm() const { return impl_->algorithm; }
int alltoallv_plan::chunks() const { return impl_->chunks; }
const communicator& alltoallv_plan::comm() const { return impl_->comm; }

}  // namespace toru::comm
