#include "toru/comm/alltoall.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <utility>

#include <fmt/format.h>

#include "toru/core/agreement.hpp"
#include "toru/core/error.hpp"
#include "toru/core/mpi.hpp"

namespace toru::comm {

namespace {

// What the drop-in calls keep on a caller's communicator.
struct attached {
  communicator comm;
  std::map<std::pair<int, MPI_Datatype>, std::unique_ptr<alltoall_plan>> plans;
  explicit attached(MPI_Comm c) : comm(c) {}
};

int delete_attached(MPI_Comm, int, void* value, void*) {
  delete static_cast<attached*>(value);
  return MPI_SUCCESS;
}

int keyval() {
  static int key = MPI_KEYVAL_INVALID;
  static std::once_flag once;
  std::call_once(once, [] {
    check_mpi(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_attached, &key, nullptr), "MPI_Comm_create_keyval");
  });
  return key;
}

// Collective: every rank finds or every rank creates (the attribute is set in the same call).
attached& attach(MPI_Comm comm) {
  void* value = nullptr;
  int found = 0;
  check_mpi(MPI_Comm_get_attr(comm, keyval(), &value, &found), "MPI_Comm_get_attr");
  if (found) return *static_cast<attached*>(value);
  auto a = std::make_unique<attached>(comm);
  check_mpi(MPI_Comm_set_attr(comm, keyval(), a.get()), "MPI_Comm_set_attr");
  return *a.release();
}

int type_size(MPI_Datatype t, const char* name) {
  expect(t != MPI_DATATYPE_NULL, name, "a committed MPI datatype", "MPI_DATATYPE_NULL");
  int s = 0;
  check_mpi(MPI_Type_size(t, &s), "MPI_Type_size");
  return s;
}

}  // namespace

int alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
             MPI_Datatype recvtype, MPI_Comm comm) {
  expect_intracommunicator(comm, "comm");
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
  if (!in_place && (sendtype != recvtype || sendcount != recvcount)) {
    // Different type signatures of equal size: MPI's own algorithm handles the conversion.
    check_mpi(MPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm), "MPI_Alltoall");
    return MPI_SUCCESS;
  }
  auto& a = attach(comm);
  auto& plan = a.plans[{recvcount, recvtype}];
  if (!plan) plan = std::make_unique<alltoall_plan>(a.comm, static_cast<std::size_t>(recvcount), recvtype);
  plan->execute(in_place ? recvbuf : sendbuf, recvbuf);
  return MPI_SUCCESS;
}

int alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
              const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  expect_intracommunicator(comm, "comm");
  const bool in_place = sendbuf == MPI_IN_PLACE;
  const int P = mpi_size(comm);
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
  if (!in_place && sendtype != recvtype) {
    check_mpi(MPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm),
              "MPI_Alltoallv");
    return MPI_SUCCESS;
  }
  auto& a = attach(comm);
  const auto n = static_cast<std::size_t>(P);
  const std::span<const int> sc(in_place ? recvcounts : sendcounts, n), sd(in_place ? rdispls : sdispls, n);
  alltoallv_plan plan(a.comm, sc, sd, std::span<const int>(recvcounts, n), std::span<const int>(rdispls, n), recvtype);
  plan.execute(in_place ? recvbuf : sendbuf, recvbuf);
  return MPI_SUCCESS;
}

}  // namespace toru::comm
