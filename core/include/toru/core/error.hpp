// SPDX-License-Identifier: BSD-3-Clause
// toru::error — the one exception type every toru module throws.
//
// A message names the offending argument and what was expected; the error also
// carries a code (for the C API's result codes), the MPI rank that raised it
// (-1 outside MPI) and where in toru it was raised.
#pragma once

#include <source_location>
#include <stdexcept>
#include <string>
#include <string_view>

namespace toru {

enum class errc {
  success = 0,
  invalid_argument,  // a caller's argument is malformed or out of range
  mismatch,          // arguments disagree across ranks, or with a plan
  unsupported,       // valid, but not supported by this build or backend
  mpi,               // an MPI call failed
  fftw,              // FFTW failed to plan
  hwloc,             // hwloc failed
  cuda,              // a CUDA, cuFFT or NCCL call failed
  no_device,         // a GPU was required and none is present
  io,                // a file could not be read or written
  out_of_memory,     // an allocation (host or device) failed
  internal,          // a bug in toru: please report it
};

/// Short stable name of a code ("invalid_argument", ...).
std::string_view to_string(errc code) noexcept;

class error : public std::runtime_error {
 public:
  error(errc code, std::string message, std::source_location where = std::source_location::current());
  /// An error raised on another rank and agreed on collectively (see agree_on_error).
  error(errc code, std::string message, int rank, std::string where);

  errc code() const noexcept { return code_; }
  /// The message alone, without code, rank and location.
  const std::string& message() const noexcept { return message_; }
  int rank() const noexcept { return rank_; }
  const std::string& where() const noexcept { return where_; }

 private:
  errc code_;
  std::string message_;
  int rank_;
  std::string where_;
};

/// Throws error(errc::invalid_argument, "<argument>: expected <expected>, got <got>") unless ok.
void expect(bool ok, std::string_view argument, std::string_view expected, std::string_view got,
            std::source_location where = std::source_location::current());

/// The rank stamped on errors (and log lines) this process raises; -1 until set. toru sets it to the
/// world rank the first time it validates collectively; a program that can fail before that (while
/// parsing its options, say) calls set_error_rank right after MPI_Init. Thread-safe.
void set_error_rank(int rank) noexcept;
int error_rank() noexcept;

}  // namespace toru
