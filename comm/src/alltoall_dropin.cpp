// SPDX-License-Identifier: BSD-3-Clause
// The drop-in calls. A call whose local signature (counts, displacements, types) was planned before on
// the communicator runs the cached plan with no other collective (alltoall) or with one small
// allreduce that tells whether every rank found its plan (alltoallv, whose counts may change on some
// ranks only). The first call of a signature agrees on every argument collectively and plans it.
// docs/comm.md states the contract.
#include "toru/comm/alltoall.hpp"

#include <algorithm>
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "dropin_state.hpp"
#include "toru/core/agreement.hpp"
#include "toru/core/error.hpp"
#include "toru/core/mpi.hpp"

namespace toru::comm {

namespace {

using detail::alltoall_entry;
using detail::alltoall_signature;
using detail::alltoallv_entry;
using detail::alltoallv_signature;
using detail::type_key;

int type_size(MPI_Datatype t, const char* name) {
  expect(t != MPI_DATATYPE_NULL, name, "a committed MPI datatype", "MPI_DATATYPE_NULL");
  int s = 0;
  check_mpi(MPI_Type_size(t, &s), "MPI_Type_size");
  return s;
}

// Bytes a buffer of `elements` elements of `t` spans from its pointer, rounded up to cover the
// type's true bounds (for scratch stand-ins).
std::size_t span_bytes(std::int64_t elements, const type_key& t) {
  if (elements <= 0) return 0;
  const std::int64_t b = (elements - 1) * std::max<MPI_Aint>(t.extent, 0) + std::max<MPI_Aint>(t.true_lb, 0) +
                         std::max<MPI_Aint>(t.true_extent, 0);
  return static_cast<std::size_t>(std::max<std::int64_t>(b, 0));
}

// Elements a v-variant buffer spans: max over peers of displacement + count.
std::int64_t span_elements(const int* counts, const int* displs, std::size_t n) {
  std::int64_t e = 0;
  for (std::size_t j = 0; j < n; ++j)
    if (counts[j] > 0) e = std::max<std::int64_t>(e, std::int64_t{displs[j]} + counts[j]);
  return e;
}

// On a call that is not agreed (its signature was), a rank whose buffer is null while it has data to
// move takes part in the exchange with scratch data and throws afterwards: no peer waits for it.
struct stand_in {
  std::vector<std::byte> in, out;
  std::string bad;
  void replace(const void*& send, void*& recv, std::size_t send_bytes, std::size_t recv_bytes) {
    if (recv == nullptr && recv_bytes > 0) {
      bad = fmt::format("recvbuf: expected a buffer of {} bytes, got a null pointer", recv_bytes);
      out.resize(recv_bytes);
      recv = out.data();
    }
    if (send != MPI_IN_PLACE && send == nullptr && send_bytes > 0) {
      if (bad.empty()) bad = fmt::format("sendbuf: expected a buffer of {} bytes, got a null pointer", send_bytes);
      in.resize(send_bytes);
      send = in.data();
    }
  }
  void throw_if_bad() const {
    if (!bad.empty()) throw error(errc::invalid_argument, bad);
  }
};

void run(const alltoall_entry& e, const void* sendbuf, void* recvbuf, MPI_Comm comm) {
  if (e.plan) {
    // The plan stands in for null buffers itself.
    e.plan->execute(sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, recvbuf);
    return;
  }
  const auto P = std::int64_t{mpi_size(comm)};
  stand_in s;
  s.replace(sendbuf, recvbuf, span_bytes(P * e.sig.scount, e.sig.stype), span_bytes(P * e.sig.rcount, e.sig.rtype));
  check_mpi(MPI_Alltoall(sendbuf, e.sig.scount, e.sig.stype.handle, recvbuf, e.sig.rcount, e.sig.rtype.handle, comm),
            "MPI_Alltoall");
  s.throw_if_bad();
}

// The first call of a signature: every argument, agreed over all ranks.
void agree_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, const void* recvbuf, int recvcount,
                    MPI_Datatype recvtype, MPI_Comm comm) {
  const bool in_place = sendbuf == MPI_IN_PLACE;
  std::int64_t bytes = 0;
  validate_collectively(comm, [&] {
    expect(recvcount >= 0, "recvcount", ">= 0", std::to_string(recvcount));
    const int rsize = type_size(recvtype, "recvtype");
    bytes = std::int64_t{recvcount} * rsize;
    expect(recvbuf != nullptr || bytes == 0, "recvbuf", "a buffer (recvcount > 0)", "a null pointer");
    if (!in_place) {
      expect(sendcount >= 0, "sendcount", ">= 0", std::to_string(sendcount));
      const int ssize = type_size(sendtype, "sendtype");
      expect(std::int64_t{sendcount} * ssize == bytes, "sendcount * size(sendtype)",
             fmt::format("recvcount * size(recvtype) = {} bytes", bytes),
             fmt::format("{} bytes", std::int64_t{sendcount} * ssize));
      expect(sendbuf != nullptr || bytes == 0, "sendbuf", "a buffer (sendcount > 0)", "a null pointer");
    }
  });
  expect_same_on_all_ranks(comm, bytes, "bytes per pair (recvcount * size(recvtype))");
}

// Whether every rank found the same cached v plan (one allreduce); false if any rank did not.
bool all_found(const alltoallv_entry* e, MPI_Comm comm) {
  const std::int64_t id = e ? e->id : -1;
  std::int64_t w[2] = {id, -id};
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, w, 2, MPI_INT64_T, MPI_MAX, comm), "MPI_Allreduce");
  return w[0] >= 0 && w[0] == -w[1];
}

void run(const alltoallv_entry& e, const void* sendbuf, void* recvbuf, MPI_Comm comm) {
  if (e.plan) {
    e.plan->execute(sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, recvbuf);
    return;
  }
  const std::size_t n = e.sig.arrays.size() / 4;
  const int* a = e.sig.arrays.data();
  stand_in s;
  s.replace(sendbuf, recvbuf, span_bytes(span_elements(a, a + n, n), e.sig.stype),
            span_bytes(span_elements(a + 2 * n, a + 3 * n, n), e.sig.rtype));
  check_mpi(
      MPI_Alltoallv(sendbuf, a, a + n, e.sig.stype.handle, recvbuf, a + 2 * n, a + 3 * n, e.sig.rtype.handle, comm),
      "MPI_Alltoallv");
  s.throw_if_bad();
}

void agree_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                     const void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                     MPI_Comm comm, int P) {
  const bool in_place = sendbuf == MPI_IN_PLACE;
  validate_collectively(comm, [&] {
    expect(recvcounts != nullptr && rdispls != nullptr, "recvcounts, rdispls", "arrays of the communicator size",
           "a null pointer");
    type_size(recvtype, "recvtype");
    bool any = false;
    for (int j = 0; j < P; ++j) any = any || recvcounts[j] > 0;
    expect(recvbuf != nullptr || !any, "recvbuf", "a buffer (some recvcounts > 0)", "a null pointer");
    if (!in_place) {
      expect(sendcounts != nullptr && sdispls != nullptr, "sendcounts, sdispls", "arrays of the communicator size",
             "a null pointer");
      expect(type_size(sendtype, "sendtype") == type_size(recvtype, "recvtype") || sendtype == recvtype,
             "size(sendtype)", "size(recvtype)", "a different size");
      any = false;
      for (int j = 0; j < P; ++j) any = any || sendcounts[j] > 0;
      expect(sendbuf != nullptr || !any, "sendbuf", "a buffer (some sendcounts > 0)", "a null pointer");
    }
  });
}

}  // namespace

int alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
             MPI_Datatype recvtype, MPI_Comm comm) {
  expect_intracommunicator(comm, "comm");
  auto& st = detail::dropin_for(comm);
  const bool in_place = sendbuf == MPI_IN_PLACE;
  alltoall_signature sig;
  sig.rcount = recvcount;
  sig.rtype = detail::describe_type(recvtype);
  sig.scount = in_place ? recvcount : sendcount;
  sig.stype = in_place || sendtype == recvtype ? sig.rtype : detail::describe_type(sendtype);
  if (!st.check_every_call)
    if (const auto* e = st.find(sig)) {
      run(*e, sendbuf, recvbuf, comm);
      return MPI_SUCCESS;
    }

  agree_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  const alltoall_entry* e = st.find(sig);
  if (st.check_every_call) {
    // Every rank agreed on the arguments; whether each has a plan for them must agree too (a type of
    // the same size may be new on one rank only).
    int found = e ? 1 : 0, all = 0;
    check_mpi(MPI_Allreduce(&found, &all, 1, MPI_INT, MPI_MIN, st.comm.mpi()), "MPI_Allreduce");
    if (!all) e = nullptr;
  }
  if (!e) {
    alltoall_entry fresh{sig, nullptr};
    // Different type signatures of equal size: MPI's own algorithm handles the conversion.
    if (in_place || (sendtype == recvtype && sendcount == recvcount))
      fresh.plan = std::make_unique<alltoall_plan>(st.comm, static_cast<std::size_t>(recvcount), recvtype);
    e = &st.insert(std::move(fresh));
  }
  run(*e, sendbuf, recvbuf, comm);
  return MPI_SUCCESS;
}

int alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
              const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  expect_intracommunicator(comm, "comm");
  auto& st = detail::dropin_for(comm);
  const bool in_place = sendbuf == MPI_IN_PLACE;
  const int P = st.comm.size();
  alltoallv_signature sig;
  sig.in_place = in_place;
  sig.rtype = detail::describe_type(recvtype);
  sig.stype = in_place || sendtype == recvtype ? sig.rtype : detail::describe_type(sendtype);
  sig.scounts = in_place ? recvcounts : sendcounts;
  sig.sdispls = in_place ? rdispls : sdispls;
  sig.rcounts = recvcounts;
  sig.rdispls = rdispls;
  sig.n = static_cast<std::size_t>(P);
  const bool arrays = sig.scounts && sig.sdispls && sig.rcounts && sig.rdispls;
  if (!st.check_every_call) {
    const auto* e = arrays ? st.find(sig) : nullptr;
    if (all_found(e, st.comm.mpi())) {
      run(*e, sendbuf, recvbuf, comm);
      return MPI_SUCCESS;
    }
  }

  agree_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, P);
  if (st.check_every_call)
    if (const auto* e = st.find(sig); all_found(e, st.comm.mpi())) {
      run(*e, sendbuf, recvbuf, comm);
      return MPI_SUCCESS;
    }
  std::unique_ptr<alltoallv_plan> plan;
  if (in_place || sendtype == recvtype) {
    const auto n = sig.n;
    plan = std::make_unique<alltoallv_plan>(st.comm, std::span(sig.scounts, n), std::span(sig.sdispls, n),
                                            std::span(recvcounts, n), std::span(rdispls, n), recvtype);
  }
  run(st.insert(sig, std::move(plan)), sendbuf, recvbuf, comm);
  return MPI_SUCCESS;
}

}  // namespace toru::comm
