// SPDX-License-Identifier: BSD-3-Clause
// apps/common/cli.hpp: the command-line convention every bundled program follows (apps/toru-*):
//   exit 0 on success (and for --help), 2 for a usage error (an option CLI11 rejects, or a value
//   toru rejects as an invalid argument), 1 for a runtime error (I/O, MPI, memory, a failed check);
//   every message on stderr starts with the program name ("toru-plan: error: ...", or
//   "toru-topo (rank 2): error: ..." from a rank of an MPI job).
//
//   CLI::App app{"...", "toru-plan"};
//   ...
//   return toru::apps::run_cli(app, argc, argv, [&] { return run(settings); });
#pragma once

#include <exception>
#include <functional>
#include <string_view>

#include <CLI/CLI.hpp>

namespace toru::apps {

inline constexpr int exit_ok = 0;
inline constexpr int exit_runtime_error = 1;
inline constexpr int exit_usage_error = 2;

/// Prints "<program>[ (rank r)]: error: <message>" on stderr. rank < 0: not in an MPI job.
void print_error(std::string_view program, int rank, std::string_view message);

/// Call inside a catch block: prints the exception in flight by the convention above and returns
/// the exit code. CLI11's --help (and other success exits) prints the help on stdout and returns 0.
/// Every rank prints its error (a job's ranks may fail differently); the --help hint is rank 0's.
int report_exception(const CLI::App& app, int rank = -1) noexcept;

/// Parses argv, then runs body(); returns its exit code, or the code of what either threw.
int run_cli(CLI::App& app, int argc, const char* const* argv, const std::function<int()>& body, int rank = -1);

}  // namespace toru::apps
