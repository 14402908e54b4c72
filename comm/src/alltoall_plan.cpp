// Plan construction (validation, selection, preparation) and execution; the table of candidates.
#include "toru/comm/alltoall_plan.hpp"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "alltoall_impl.hpp"
#include "comm_state.hpp"
#include "gpu_staging.hpp"
#include "toru/core/device.hpp"
#include "toru/core/error.hpp"
#include "toru/core/log.hpp"
#include "toru/core/mpi.hpp"

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
     [](const plan_impl& p) { return p.chunks == 1; }, true},
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

alltoall_algorithm forced_algorithm(alltoall_algorithm requested) {
  if (const char* env = std::getenv("TORU_ALLTOALL_ALGORITHM"); env && *env) {
    const auto a = algorithm_from_string(env);
    if (a != alltoall_algorithm::automatic) return a;
  }
  return requested;
}

decision_input describe(const plan_impl& plan, const alltoall_options& opts) {
  const auto& x = plan.x;
  const auto& cs = plan.comm.state();
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

std::unique_ptr<plan_impl> make_plan(const communicator& comm, exchange x, const alltoall_options& opts) {
  x.comm = comm.mpi();
  x.rank = comm.rank();
  x.nranks = comm.size();
  plan_impl probe(comm);
  probe.x = x;

  alltoall_algorithm algorithm = alltoall_algorithm::automatic;
  validate_collectively(x.comm, [&] {
    expect(opts.chunks >= 0, "alltoall_options::chunks", ">= 0 (0 = chosen by the model)", std::to_string(opts.chunks));
    algorithm = forced_algorithm(opts.algorithm);
    if (algorithm != alltoall_algorithm::automatic) {
      const auto why = find_candidate(algorithm).not_applicable(probe);
      if (!why.empty())
        throw error(errc::unsupported,
                    fmt::format("all-to-all algorithm {} cannot run this exchange: {}", to_string(algorithm), why));
    }
  });

  decision d;
  const auto in = describe(probe, opts);
  if (algorithm != alltoall_algorithm::automatic) {
    d.algorithm = algorithm;
    d.chunks = algorithm == alltoall_algorithm::indirect ? model_indirect_chunks(in) : 1;
  } else if (opts.measure) {
    d = measure_alltoall(comm, x, in);
  } else {
    d = decide_alltoall(in);
  }
  if (opts.chunks > 0) d.chunks = opts.chunks;
  if (const char* env = std::getenv("TORU_ALLTOALL_CHUNKS"); env && *env && opts.chunks == 0)
    d.chunks = std::max(1, std::atoi(env));
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

void plan_impl::execute(const void* in, void* out, void* ws) const {
  if (in == MPI_IN_PLACE) in = out;
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

}  // namespace

alltoall_plan::alltoall_plan(const communicator& comm, std::size_t count, MPI_Datatype type, alltoall_options opts) {
  auto x = make_exchange(type, true);
  const int P = comm.size();
  validate_collectively(comm.mpi(), [&] { check_type(x); });
  expect_same_on_all_ranks(comm.mpi(), static_cast<std::int64_t>(count * x.esize),
                           "count * type size (bytes per pair)");
  // Counts and offsets (j * count) are ints for MPI: beyond, one block becomes one element of a
  // derived type. Ranks may differ here (types of different sizes), so every rank takes part.
  const auto limit = static_cast<std::size_t>(detail::int_limit());
  const bool large = count > limit / static_cast<std::size_t>(std::max(P, 1));
  detail::owned_datatype block;
  validate_collectively(comm.mpi(), [&] {
    if (large) block = detail::make_block_type(static_cast<std::int64_t>(count), type);
  });
  if (large) {
    x.type = block.get();
    x.esize *= count;
    x.extent *= static_cast<MPI_Aint>(count);
  }
  x.count = large ? 1 : count;
  const int n = static_cast<int>(x.count);
  x.scounts.assign(static_cast<std::size_t>(P), n);
  x.rcounts = x.scounts;
  x.sdispls.resize(static_cast<std::size_t>(P));
  for (int j = 0; j < P; ++j) x.sdispls[static_cast<std::size_t>(j)] = j * n;
  x.rdispls = x.sdispls;
  impl_ = detail::make_plan(comm, std::move(x), opts);
  impl_->count_per_pair = count;
  impl_->block = std::move(block);
}

alltoall_plan::~alltoall_plan() = default;
alltoall_plan::alltoall_plan(alltoall_plan&&) noexcept = default;
alltoall_plan& alltoall_plan::operator=(alltoall_plan&&) noexcept = default;
void alltoall_plan::execute(const void* in, void* out) const { impl_->execute(in, out, nullptr); }
void alltoall_plan::execute(const void* in, void* out, void* ws) const { impl_->execute(in, out, ws); }
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
  validate_collectively(comm.mpi(), [&] {
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
  impl_ = detail::make_plan(comm, std::move(x), opts);
}

alltoallv_plan::~alltoallv_plan() = default;
alltoallv_plan::alltoallv_plan(alltoallv_plan&&) noexcept = default;
alltoallv_plan& alltoallv_plan::operator=(alltoallv_plan&&) noexcept = default;
void alltoallv_plan::execute(const void* in, void* out) const { impl_->execute(in, out, nullptr); }
void alltoallv_plan::execute(const void* in, void* out, void* ws) const { impl_->execute(in, out, ws); }
std::size_t alltoallv_plan::workspace_size() const { return impl_->workspace_size(); }
alltoall_algorithm alltoallv_plan::algorithm() const { return impl_->algorithm; }
int alltoallv_plan::chunks() const { return impl_->chunks; }
const communicator& alltoallv_plan::comm() const { return impl_->comm; }

}  // namespace toru::comm
