// SPDX-License-Identifier: BSD-3-Clause
#include "toru/comm/communicator.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <optional>

#include <fmt/format.h>

#include "comm_state.hpp"
#include "thread_placement.hpp"
#include "toru/core/agreement.hpp"
#include "toru/core/error.hpp"
#include "toru/core/log.hpp"
#include "toru/core/mpi.hpp"

namespace toru::comm {

namespace detail {

comm_state::~comm_state() {
  worker_.reset();  // the thread may hold requests on `line`: stop it before the communicators go
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized && cart) {
    // Too late to free communicators; leak them rather than call MPI after MPI_Finalize.
    log::warn("comm: a toru communicator outlived MPI_Finalize; its MPI communicators were not freed");
    new topology::cart(std::move(*cart));
  }
}

phase_worker* comm_state::worker() const { return started_.load(std::memory_order_acquire); }

phase_worker* comm_state::start_worker() const {
  if (phase_worker* w = worker()) return w;
  if (!thread_wanted) return nullptr;
  if (!may_thread) {
    if (rank == 0) {
      static std::once_flag once;
      std::call_once(once, [] {
        log::warn(
            "comm: MPI was not initialised with MPI_THREAD_MULTIPLE; the pipelined all-to-all drives both phases "
            "from one thread with nonblocking operations");
      });
    }
    return nullptr;
  }
  std::lock_guard lock(worker_mutex);
  if (!worker_) {
    worker_ = std::make_unique<phase_worker>(bind_threads ? thread_binder(binding_index, binding_sharing)
                                                          : std::function<void()>{});
    started_.store(worker_.get(), std::memory_order_release);
  }
  return worker_.get();
}

}  // namespace detail

communicator::communicator(MPI_Comm comm, communicator_options opts) : communicator(comm, nullptr, std::move(opts)) {}

communicator::communicator(MPI_Comm comm, const communicator& parent, communicator_options opts)
    : communicator(comm, &parent, std::move(opts)) {}

communicator::communicator(MPI_Comm comm, const communicator* parent, communicator_options opts)
    : state_(std::make_shared<detail::comm_state>()) {
  auto& s = *state_;
  expect_intracommunicator(comm, "comm");
  // TORU_TORUS describes MPI_COMM_WORLD; it is consulted only without a torus from the caller or a parent.
  std::string env;
  if (const char* e = std::getenv("TORU_TORUS"); e && opts.torus.empty() && parent == nullptr) env = e;

  std::optional<topology::torus> given, world;
  validate_collectively(comm, "the toru::comm::communicator constructor",
                        {same_text("communicator_options::torus", opts.torus),
                         same_text("communicator_options::order", opts.order),
                         {"communicator_options::threads", opts.threads},
                         {"communicator_options::bind_threads", opts.bind_threads ? 1 : 0},
                         same_text("TORU_TORUS (environment)", env)},
                        [&] {
                          expect(opts.threads == 0 || opts.threads == 1, "communicator_options::threads", "0 or 1",
                                 std::to_string(opts.threads));
                          if (!opts.torus.empty()) given = topology::torus::parse(opts.torus);
                          if (env.empty()) return;
                          try {
                            world = topology::torus::parse(env);
                          } catch (const error& e) {
                            throw error(e.code(), "TORU_TORUS (environment): " + e.message());
                          }
                          const int world_size = mpi_size(MPI_COMM_WORLD);
                          expect(world->size() == world_size, "TORU_TORUS (environment)",
                                 fmt::format("a torus of {} nodes (it describes MPI_COMM_WORLD)", world_size),
                                 fmt::format("{} ({} nodes)", env, world->size()));
                        });
  std::optional<topology::mapping> m;
  if (given) {
    m = topology::make_mapping(comm, *given, opts.order);
    s.torus_given = true;
  } else {
    // A sub-communicator inherits the sub-torus its ranks occupy; ranks that form none (a diagonal,
    // one rank) get the derived layout, as if no torus had been described.
    std::optional<topology::mapping> inherited;
    if (parent != nullptr && parent->torus_given())
      inherited = topology::sub_mapping(parent->mpi(), parent->mapping(), comm);
    else if (world)
      inherited = topology::sub_mapping(MPI_COMM_WORLD, topology::mapping::identity(*world), comm);
    if (inherited) {
      m = opts.order.empty() ? std::move(inherited) : topology::make_mapping(comm, inherited->shape(), opts.order);
      s.torus_given = true;
    } else {
      m = topology::derive_mapping(comm);
      if (!opts.order.empty()) m = topology::make_mapping(comm, m->shape(), opts.order);
    }
  }
  s.cart.emplace(comm, *m);
  s.comm = s.cart->comm();
  check_mpi(MPI_Comm_set_errhandler(s.comm, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  s.rank = mpi_rank(s.comm);
  s.size = mpi_size(s.comm);

  const auto& shape = s.cart->shape();
  const int L = shape.longest_axis();
  s.bottleneck = L;
  s.line = s.cart->line(L);
  s.plane = s.cart->plane(L);
  s.line_size = shape[L].extent;
  s.plane_size = static_cast<int>(shape.size() / s.line_size);
  s.global_of.assign(static_cast<std::size_t>(s.size), 0);
  const auto& layout = s.cart->layout();
  for (int r = 0; r < s.size; ++r) {
    const auto c = layout.coords(r);
    std::int64_t p = 0, stride = 1;
    for (int a = 0; a < shape.ndims(); ++a) {
      if (a == L) continue;
      p += c[static_cast<std::size_t>(a)] * stride;
      stride *= shape[a].extent;
    }
    s.global_of[static_cast<std::size_t>(p * s.line_size + c[static_cast<std::size_t>(L)])] = r;
  }

  {
    // Whether the line or the plane crosses a node boundary: only then may waiting sleep (a
    // shared-memory exchange progresses only while a rank is inside MPI). And which ranks of the node
    // share this rank's CPU set, among which a communication thread takes its core.
    MPI_Comm node = MPI_COMM_NULL;
    check_mpi(MPI_Comm_split_type(s.comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node), "MPI_Comm_split_type");
    int mine = mpi_size(node) < s.size ? 1 : 0, any = 0;
    if (opts.threads == 1 && opts.bind_threads) {
      const auto local = static_cast<std::size_t>(mpi_size(node));
      std::vector<std::uint64_t> digests(local);
      const std::uint64_t own = detail::affinity_digest();
      check_mpi(MPI_Allgather(&own, 1, MPI_UINT64_T, digests.data(), 1, MPI_UINT64_T, node), "MPI_Allgather");
      const int me = mpi_rank(node);
      s.binding_index = static_cast<int>(std::count(digests.begin(), digests.begin() + me, own));
      s.binding_sharing = static_cast<int>(std::count(digests.begin(), digests.end(), own));
    }
    MPI_Comm_free(&node);
    check_mpi(MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, s.comm), "MPI_Allreduce");
    s.spans_nodes = any == 1;
  }

  s.thread_wanted = opts.threads == 1;
  s.bind_threads = opts.bind_threads;
  if (s.thread_wanted) {
    int provided = MPI_THREAD_SINGLE;
    check_mpi(MPI_Query_thread(&provided), "MPI_Query_thread");
    s.may_thread = provided == MPI_THREAD_MULTIPLE;
  }
}

MPI_Comm communicator::mpi() const { return state_->comm; }
int communicator::rank() const { return state_->rank; }
int communicator::size() const { return state_->size; }
const topology::torus& communicator::torus() const { return state_->cart->shape(); }
const topology::mapping& communicator::mapping() const { return state_->cart->layout(); }
const topology::cart& communicator::cart() const { return *state_->cart; }
bool communicator::torus_given() const { return state_->torus_given; }
int communicator::bottleneck_axis() const { return state_->bottleneck; }
std::span<const int> communicator::coords() const { return state_->cart->coords(); }
MPI_Comm communicator::line() const { return state_->line; }
MPI_Comm communicator::plane() const { return state_->plane; }
bool communicator::threaded() const { return state_->may_thread; }

}  // namespace toru::comm
