// SPDX-License-Identifier: BSD-3-Clause
// The C interface of comm (toru/comm.h): result codes instead of exceptions, opaque handles.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <fmt/format.h>

#include "toru/comm.h"
#include "toru/comm/alltoall.hpp"
#include "toru/comm/alltoall_plan.hpp"
#include "toru/comm/wisdom.hpp"
#include "toru/core/agreement.hpp"
#include "toru/core/error.hpp"
#include "toru/core/mpi.hpp"
#include "toru/detail/c_guard.hpp"
#include "toru/detail/c_request.hpp"
#include "toru/topology/torus.hpp"

struct toru_alltoall_plan_s {
  toru::comm::communicator comm;
  std::variant<toru::comm::alltoall_plan, toru::comm::alltoallv_plan> plan;
};

namespace {

// The caller's options over the defaults. A caller compiled against an older toru/comm.h passes a
// shorter struct (its size says how long): only that prefix is read, the fields it does not know
// keep their defaults. Throws for a size no header ever wrote (0: the struct was never initialised).
toru_alltoall_options read_options(const toru_alltoall_options* in) {
  toru_alltoall_options o = TORU_ALLTOALL_OPTIONS_INIT;
  if (!in) return o;
  const std::size_t known = offsetof(toru_alltoall_options, algorithm) + sizeof in->algorithm;
  toru::expect(in->size >= known && in->size <= sizeof o, "options->size",
               fmt::format("between {} and {} (set by TORU_ALLTOALL_OPTIONS_INIT or toru_alltoall_options_init)", known,
                           sizeof o),
               std::to_string(in->size));
  std::memcpy(&o, in, in->size);
  o.size = sizeof o;
  return o;
}

toru::comm::alltoall_options convert(const toru_alltoall_options* o) {
  toru::comm::alltoall_options opts;
  if (!o) return opts;
  const int algorithm = toru::detail::raw_enum(o->algorithm);
  toru::expect(algorithm >= TORU_ALLTOALL_AUTO && algorithm <= TORU_ALLTOALL_INDIRECT, "options->algorithm",
               "a toru_alltoall_algorithm value", std::to_string(algorithm));
  opts.algorithm = static_cast<toru::comm::alltoall_algorithm>(algorithm);
  toru::expect(o->chunks >= 0, "options->chunks", ">= 0 (0 = chosen by the model)", std::to_string(o->chunks));
  opts.chunks = o->chunks;
  opts.measure = o->measure != 0;
  return opts;
}

toru::comm::communicator_options comm_options(const toru_alltoall_options* o) {
  toru::comm::communicator_options c;
  if (o && o->torus) c.torus = o->torus;
  if (o && o->order) c.order = o->order;
  return c;
}

// The C-level arguments of a plan creation, agreed across ranks with the checks of the plan
// pointer and the options (the C++ constructors then agree on the rest): NULL options are the defaults.
std::vector<toru::same_on_all_ranks> agreed(const toru_alltoall_options* o) {
  return {{"options->algorithm", toru::detail::raw_enum(o->algorithm)},
          {"options->chunks", o->chunks},
          {"options->measure", o->measure != 0 ? 1 : 0},
          toru::same_text("options->torus", o->torus ? o->torus : ""),
          toru::same_text("options->order", o->order ? o->order : "")};
}

// Agrees on comm, the plan pointer and the options; returns the C++ plan options and, in `read`,
// the C options as read (the defaults where the caller passed NULL).
toru::comm::alltoall_options agreed_plan_arguments(MPI_Comm comm, std::string_view call,
                                                   const toru_alltoall_options* caller, const toru_alltoall_plan* plan,
                                                   const std::function<void()>& more_checks,
                                                   toru_alltoall_options& read) {
  toru::expect_intracommunicator(comm, "comm");
  // A refused size leaves this rank on the defaults; its error is raised inside the agreement so that
  // every rank fails with it.
  std::exception_ptr bad_size;
  try {
    read = read_options(caller);
  } catch (...) {
    read = TORU_ALLTOALL_OPTIONS_INIT;
    bad_size = std::current_exception();
  }
  const toru_alltoall_options* options = &read;
  toru::comm::alltoall_options opts;
  toru::validate_collectively(comm, call, agreed(options), [&] {
    if (bad_size) std::rethrow_exception(bad_size);
    toru::expect(plan != nullptr, "plan", "a pointer to receive the plan", "NULL");
    opts = convert(options);
    // Parsed here too, so that a malformed spec on one rank is named as such rather than as a difference.
    if (options && options->torus && *options->torus) toru::topology::torus::parse(options->torus);
    more_checks();
  });
  return opts;
}

// Wisdom calls agree on comm and on the path, which must be given.
void agree_on_path(MPI_Comm comm, std::string_view call, const char* path) {
  toru::expect_intracommunicator(comm, "comm");
  toru::validate_collectively(comm, call, {toru::same_text("path", path ? path : "")},
                              [&] { toru::expect(path != nullptr, "path", "a file name", "NULL"); });
}

template <class F>
toru_result with_plan(toru_alltoall_plan plan, F&& f) noexcept {
  if (!plan) {
    toru::detail::set_last_error("plan: expected a plan from toru_alltoall_plan_create, got NULL");
    return TORU_ERROR_INVALID_ARGUMENT;
  }
  return toru::detail::c_guarded([&] { std::visit(f, plan->plan); });
}

}  // namespace

extern "C" {

toru_result toru_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                          MPI_Datatype recvtype, MPI_Comm comm) {
  return toru::detail::c_guarded(
      [&] { toru::comm::alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm); });
}

toru_result toru_alltoallv(const void* sendbuf, const int* sendcounts, const int* sdispls, MPI_Datatype sendtype,
                           void* recvbuf, const int* recvcounts, const int* rdispls, MPI_Datatype recvtype,
                           MPI_Comm comm) {
  return toru::detail::c_guarded([&] {
    toru::comm::alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
  });
}

toru_alltoall_options toru_alltoall_options_default(void) { return TORU_ALLTOALL_OPTIONS_INIT; }

toru_result toru_alltoall_options_init(toru_alltoall_options* options) {
  return toru::detail::c_guarded([&] {
    toru::expect(options != nullptr, "options", "a pointer to a toru_alltoall_options", "NULL");
    *options = TORU_ALLTOALL_OPTIONS_INIT;
  });
}

toru_result toru_alltoall_plan_create(MPI_Comm comm, size_t count, MPI_Datatype type,
                                      const toru_alltoall_options* options, toru_alltoall_plan* plan) {
  if (plan) *plan = nullptr;
  return toru::detail::c_guarded([&] {
    toru_alltoall_options read;
    const auto opts = agreed_plan_arguments(
        comm, "toru_alltoall_plan_create", options, plan, [] {}, read);
    toru::comm::communicator c(comm, comm_options(&read));
    toru::comm::alltoall_plan p(c, count, type, opts);
    *plan = new toru_alltoall_plan_s{c, std::move(p)};
  });
}

toru_result toru_alltoallv_plan_create(MPI_Comm comm, const int* send_counts, const int* send_displs,
                                       const int* recv_counts, const int* recv_displs, MPI_Datatype type,
                                       const toru_alltoall_options* options, toru_alltoall_plan* plan) {
  if (plan) *plan = nullptr;
  return toru::detail::c_guarded([&] {
    toru_alltoall_options read;
    const auto opts = agreed_plan_arguments(
        comm, "toru_alltoallv_plan_create", options, plan,
        [&] {
          toru::expect(send_counts && send_displs && recv_counts && recv_displs, "counts and displacements",
                       "four arrays of the communicator size", "a null pointer");
        },
        read);
    toru::comm::communicator c(comm, comm_options(&read));
    const auto n = static_cast<std::size_t>(c.size());
    toru::comm::alltoallv_plan p(c, std::span(send_counts, n), std::span(send_displs, n), std::span(recv_counts, n),
                                 std::span(recv_displs, n), type, opts);
    *plan = new toru_alltoall_plan_s{c, std::move(p)};
  });
}

toru_result toru_alltoall_plan_execute(toru_alltoall_plan plan, const void* in, void* out) {
  return with_plan(plan, [&](const auto& p) { p.execute(in, out); });
}

toru_result toru_alltoall_plan_execute_ws(toru_alltoall_plan plan, const void* in, void* out, void* ws) {
  return with_plan(plan, [&](const auto& p) { p.execute(in, out, ws); });
}

toru_result toru_alltoall_plan_start(toru_alltoall_plan plan, const void* in, void* out) {
  return with_plan(plan, [&](const auto& p) { p.start(in, out); });
}

toru_result toru_alltoall_plan_init(toru_alltoall_plan plan, const void* in, void* out, toru_request* request) {
  return with_plan(plan, [&](const auto& p) {
    toru::expect(request != nullptr, "request", "a pointer to a toru_request", "NULL");
    *request = new toru_request_s{p.init(in, out)};
  });
}

toru_result toru_alltoall_plan_wait(toru_alltoall_plan plan) {
  return with_plan(plan, [&](const auto& p) { p.wait(); });
}

toru_result toru_alltoall_plan_workspace_size(toru_alltoall_plan plan, size_t* bytes) {
  return with_plan(plan, [&](const auto& p) {
    toru::expect(bytes != nullptr, "bytes", "a pointer", "NULL");
    *bytes = p.workspace_size();
  });
}

toru_result toru_alltoall_plan_algorithm(toru_alltoall_plan plan, toru_alltoall_algorithm* algorithm) {
  return with_plan(plan, [&](const auto& p) {
    toru::expect(algorithm != nullptr, "algorithm", "a pointer", "NULL");
    *algorithm = static_cast<toru_alltoall_algorithm>(p.algorithm());
  });
}

toru_result toru_alltoall_plan_chunks(toru_alltoall_plan plan, int* chunks) {
  return with_plan(plan, [&](const auto& p) {
    toru::expect(chunks != nullptr, "chunks", "a pointer", "NULL");
    *chunks = p.chunks();
  });
}

toru_result toru_alltoall_plan_destroy(toru_alltoall_plan plan) {
  return toru::detail::c_guarded([&] { delete plan; });
}

toru_result toru_alltoall_wisdom_save(MPI_Comm comm, const char* path) {
  return toru::detail::c_guarded([&] {
    agree_on_path(comm, "toru_alltoall_wisdom_save", path);
    toru::comm::save_wisdom(comm, path);
  });
}

toru_result toru_alltoall_wisdom_load(MPI_Comm comm, const char* path) {
  return toru::detail::c_guarded([&] {
    agree_on_path(comm, "toru_alltoall_wisdom_load", path);
    toru::comm::load_wisdom(comm, path);
  });
}

}  // extern "C"
