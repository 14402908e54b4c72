// SPDX-License-Identifier: BSD-3-Clause
#include "common/cli.hpp"

#include <cstdio>
#include <iostream>
#include <new>
#include <string>

#include <fmt/format.h>

#include "toru/core/error.hpp"

namespace toru::apps {
namespace {

// Codes that mean "the caller's input was refused": a usage error. The rest (I/O, MPI, FFTW,
// memory, internal) happened while running.
bool is_usage(errc code) { return code == errc::invalid_argument || code == errc::mismatch; }

}  // namespace

void print_error(std::string_view program, int rank, std::string_view message) {
  const std::string line = rank < 0 ? fmt::format("{}: error: {}\n", program, message)
                                    : fmt::format("{} (rank {}): error: {}\n", program, rank, message);
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
}

int report_exception(const CLI::App& app, int rank) noexcept {
  const std::string program = app.get_name().empty() ? "toru" : app.get_name();
  try {
    throw;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) {
      if (rank <= 0) std::cout << app.help() << std::flush;
      return exit_ok;
    }
    print_error(program, rank, e.what());
    if (rank <= 0) std::fprintf(stderr, "Run '%s --help' for usage.\n", program.c_str());
    return exit_usage_error;
  } catch (const toru::error& e) {
    print_error(program, rank, e.message());
    return is_usage(e.code()) ? exit_usage_error : exit_runtime_error;
  } catch (const std::bad_alloc&) {
    print_error(program, rank, "out of memory");
    return exit_runtime_error;
  } catch (const std::exception& e) {
    print_error(program, rank, e.what());
    return exit_runtime_error;
  } catch (...) {
    print_error(program, rank, "unknown exception");
    return exit_runtime_error;
  }
}

int run_cli(CLI::App& app, int argc, const char* const* argv, const std::function<int()>& body, int rank) {
  try {
    app.parse(argc, argv);
    return body();
  } catch (...) {
    return report_exception(app, rank);
  }
}

}  // namespace toru::apps
