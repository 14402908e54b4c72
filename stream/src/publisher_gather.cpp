// SPDX-License-Identifier: BSD-3-Clause
// publish_gathered's pipeline. Why a pipeline driven by the calls and not a background thread:
// the simulation's thread is the only one that makes MPI calls, so it works at any thread level
// (MPI_THREAD_FUNNELED included) and never contends with the solver's own MPI calls for a lock,
// and the requests progress inside the solver's MPI calls between two publishes. Why two stages:
// the root cannot post the MPI_Igatherv before it knows every tile's size, and waiting for the
// sizes in the same call would make the root wait for the slowest rank. The waits in call k are
// for requests started in calls k-1 and k-2, which every rank has long entered when it reaches
// call k in a code that communicates every step, so they return at once. Every rank starts the
// same requests in the same order (sizes k-1 complete, data k-1 start, sizes k start), as MPI's
// ordering of collectives requires, whatever each rank's tile.
#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "toru/core/error.hpp"
#include "toru/core/log.hpp"
#include "toru/core/mpi.hpp"
#include "toru/stream/publisher.hpp"

namespace toru::stream {

namespace {

enum tile_status : std::int64_t { tile_ok = 0, tile_invalid = 1, tile_oversize = 2 };
enum size_field { f_status, f_dtype, f_axes, f_name, f_extents, f_bytes };

std::int64_t digest(std::string_view s) {  // FNV-1a: the same on every rank, unlike std::hash's contract
  std::uint64_t h = 1469598103934665603ull;
  for (const char c : s) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return static_cast<std::int64_t>(h);
}

std::string trailing_extents(const std::vector<std::int64_t>& shape) {
  std::string t;
  for (std::size_t i = 1; i < shape.size(); ++i) t += std::to_string(shape[i]) + ",";
  return t;
}

}  // namespace

push_result publisher::publish_gathered(const frame_view& tile) {
  if (comm_ == MPI_COMM_NULL) return publish(tile);
  finish_data();   // call k-2: published at the root
  finish_sizes();  // call k-1: its data gather starts (or every rank throws its error)

  auto& s = staged_[next_stage_];
  s.error.clear();
  s.name.assign(tile.name);
  s.step = tile.step, s.time = tile.time, s.shape = tile.shape, s.type = tile.type, s.bytes = 0;
  std::int64_t status = tile_ok;
  try {
    expect(!tile.shape.empty(), "frame.shape", "at least one axis (tiles are gathered along axis 0)", "[]");
    validate(tile);
  } catch (const std::exception& e) {
    s.error = e.what();
    status = tile_invalid;
  }
  if (status == tile_ok && tile.data.size() > opt_.max_frame_bytes) status = tile_oversize;
  if (status == tile_ok) {
    // Grow only: after the first frames the copy is all that a call costs.
    if (s.data.size() < tile.data.size()) s.data.resize(tile.data.size());
    if (!tile.data.empty()) std::memcpy(s.data.data(), tile.data.data(), tile.data.size());
    s.bytes = tile.data.size();
  }
  my_sizes_[f_status] = status;
  my_sizes_[f_dtype] = static_cast<std::int64_t>(tile.type);
  my_sizes_[f_axes] = static_cast<std::int64_t>(tile.shape.size());
  my_sizes_[f_name] = digest(tile.name);
  my_sizes_[f_extents] = digest(trailing_extents(tile.shape));
  my_sizes_[f_bytes] = static_cast<std::int64_t>(s.bytes);
  all_sizes_.resize(static_cast<std::size_t>(size_fields * nranks_));
  check_mpi(MPI_Iallgather(my_sizes_, size_fields, MPI_INT64_T, all_sizes_.data(), size_fields, MPI_INT64_T, comm_,
                           &sizes_req_),
            "MPI_Iallgather");
  sizes_stage_ = next_stage_;
  next_stage_ ^= 1;
  return status == tile_oversize ? push_result::refused_oversize : push_result::queued;
}

void publisher::complete_gathers() {
  if (comm_ == MPI_COMM_NULL) return;
  finish_data();
  finish_sizes();
  finish_data();
}

void publisher::finish_sizes() {
  if (sizes_stage_ < 0) return;
  check_mpi(MPI_Wait(&sizes_req_, MPI_STATUS_IGNORE), "MPI_Wait");
  const int stage = sizes_stage_;
  sizes_stage_ = -1;
  const auto& s = staged_[stage];
  auto at = [&](int r, size_field f) { return all_sizes_[static_cast<std::size_t>(r * size_fields + f)]; };
  const std::string call =
      fmt::format("toru::stream::publisher::publish_gathered: frame '{}' (step {})", s.name, s.step);
  // Every rank sees the same table, so every rank throws the same kind of error for the same rank.
  for (int r = 0; r < nranks_; ++r)
    if (at(r, f_status) == tile_invalid)
      throw error(errc::invalid_argument,
                  fmt::format("{}: rank {}'s tile is invalid{}", call, r, r == rank_ ? ": " + s.error : ""));
  static constexpr std::pair<size_field, const char*> agreed[] = {{f_name, "frame.name"},
                                                                  {f_dtype, "frame.dtype"},
                                                                  {f_axes, "frame.shape (number of axes)"},
                                                                  {f_extents, "frame.shape[1:]"}};
  for (int r = 1; r < nranks_; ++r)
    for (const auto& [f, what] : agreed)
      if (at(r, f) != at(0, f))
        throw error(errc::mismatch, fmt::format("{}: ranks 0 and {} disagree on {} (this rank: {})", call, r, what,
                                                f == f_name      ? "'" + s.name + "'"
                                                : f == f_extents ? trailing_extents(s.shape)
                                                                 : std::to_string(at(rank_, f))));
  std::int64_t total = 0;
  bool oversize = false;
  counts_.resize(static_cast<std::size_t>(nranks_));
  displs_.resize(counts_.size());
  for (int r = 0; r < nranks_; ++r) {
    oversize = oversize || at(r, f_status) == tile_oversize;
    displs_[static_cast<std::size_t>(r)] = static_cast<int>(std::min<std::int64_t>(total, 1ll << 30));
    counts_[static_cast<std::size_t>(r)] = static_cast<int>(std::min<std::int64_t>(at(r, f_bytes), 1ll << 30));
    total += at(r, f_bytes);
  }
  if (oversize || total > static_cast<std::int64_t>(opt_.max_frame_bytes)) {
    if (rank_ == root_) {
      ++refused_gathered_;
      if (!warned_refused_) {
        warned_refused_ = true;
        log::write(log::level::warn,
                   fmt::format("{} refused: larger than max_frame_bytes = {} (logged once; see counters().refused)",
                               call, opt_.max_frame_bytes));
      }
    }
    return;  // every rank skips this frame's gather
  }
  if (rank_ == root_ && gather_.size() < static_cast<std::size_t>(total))
    gather_.resize(static_cast<std::size_t>(total));
  check_mpi(MPI_Igatherv(s.data.data(), static_cast<int>(s.bytes), MPI_BYTE, gather_.data(), counts_.data(),
                         displs_.data(), MPI_BYTE, root_, comm_, &data_req_),
            "MPI_Igatherv");
  data_stage_ = stage;
  data_total_ = total;
}

void publisher::finish_data() {
  if (data_stage_ < 0) return;
  check_mpi(MPI_Wait(&data_req_, MPI_STATUS_IGNORE), "MPI_Wait");
  const auto& s = staged_[data_stage_];
  data_stage_ = -1;
  if (rank_ != root_) return;
  frame_view whole{.name = s.name, .step = s.step, .time = s.time, .shape = s.shape, .type = s.type};
  std::int64_t row_bytes = static_cast<std::int64_t>(dtype_size(s.type));
  for (std::size_t i = 1; i < s.shape.size(); ++i) row_bytes *= s.shape[i];
  whole.shape[0] = row_bytes > 0 ? data_total_ / row_bytes : 0;
  whole.data = std::span<const std::byte>(gather_.data(), static_cast<std::size_t>(data_total_));
  publish(whole);
}

}  // namespace toru::stream
