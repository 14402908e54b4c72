// SPDX-License-Identifier: BSD-3-Clause
// toru-tune: what libtoru_tune_pmpi.so found in one run, and what to do about it.
//
//   toru-tune run -- mpiexec -n 4 ./app args        # run under the tool (LD_PRELOAD), then advise
//   toru-tune advise RUN_DIR [--json] [--rules DIR]  # the findings of the rules database
//   toru-tune report RUN_DIR [-o report.html]        # the self-contained HTML report
//   toru-tune rules [--rules DIR]                    # the rules in force
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "common/cli.hpp"
#include "toru/core/error.hpp"
#include "toru/tune/report.hpp"
#include "toru/tune/rules.hpp"

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

json read_profile(const std::string& dir) {
  const fs::path p = fs::path(dir) / "profile.json";
  std::ifstream in(p);
  if (!in)
    throw toru::error(toru::errc::io,
                      fmt::format("RUN_DIR: expected a run directory of libtoru_tune_pmpi with profile.json, "
                                  "cannot read {}",
                                  p.string()));
  json j = json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.contains("toru_tune_profile"))
    throw toru::error(toru::errc::invalid_argument, fmt::format("{}: not a toru-tune profile", p.string()));
  return j;
}

std::vector<toru::tune::rule> rules_from(const std::vector<std::string>& extra, bool builtin) {
  std::vector<std::string> dirs = builtin ? toru::tune::default_rule_dirs() : std::vector<std::string>{};
  for (const auto& d : extra) {
    if (!fs::is_directory(d))
      throw toru::error(toru::errc::invalid_argument, fmt::format("--rules: expected a directory, got '{}'", d));
    dirs.push_back(d);
  }
  return toru::tune::load_rules(dirs);
}

int advise(const std::string& dir, const std::vector<std::string>& extra, bool builtin, bool as_json) {
  const json p = read_profile(dir);
  const auto findings = toru::tune::diagnose(p, rules_from(extra, builtin));
  if (as_json) {
    std::cout << toru::tune::findings_json(findings).dump(1) << "\n";
    return 0;
  }
  fmt::print("{}: {} ranks, {:.3f} s; {} finding(s)\n", p.value("program", dir), p.value("nranks", 0),
             p.value("wall", 0.0), findings.size());
  const json& papi = p.value("papi", json::object());
  if (!papi.value("available", false))
    fmt::print("  (hardware counters: none: {}; memory-bound rules need them)\n", papi.value("note", std::string()));
  for (const auto& f : findings) {
    fmt::print("\n[{}] {} at {}\n  {}\n", f.category, f.title, f.location, f.diagnosis);
    if (!f.suggestion.empty()) fmt::print("  mitigation: {}\n", f.suggestion);
    if (!f.action.empty()) fmt::print("  action: {}\n", f.action.dump());
  }
  return 0;
}

int report(const std::string& dir, std::string out, const std::vector<std::string>& extra, bool builtin) {
  const json p = read_profile(dir);
  const auto findings = toru::tune::diagnose(p, rules_from(extra, builtin));
  if (out.empty()) out = (fs::path(dir) / "report.html").string();
  std::ofstream f(out);
  if (!f) throw toru::error(toru::errc::io, fmt::format("-o: cannot write '{}'", out));
  f << toru::tune::html_report(p, findings);
  fmt::print("{}\n", out);
  return 0;
}

int list_rules(const std::vector<std::string>& extra, bool builtin) {
  for (const auto& r : rules_from(extra, builtin))
    fmt::print("{:28} {:14} {:8} {}\n    when {}\n", r.id, r.category, r.scope, r.file, r.condition.text());
  return 0;
}

std::string preload_library() {
  if (const char* v = std::getenv("TORU_TUNE_LIBRARY")) return v;
  // Next to this program's own install (a moved prefix, or a package installed under /usr while
  // the build's prefix was /usr/local), then the configured prefix, then the build tree.
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec && fs::exists(self.parent_path() / TORU_TUNE_PRELOAD_FROM_BIN))
    return (self.parent_path() / TORU_TUNE_PRELOAD_FROM_BIN).lexically_normal().string();
  if (fs::exists(TORU_TUNE_PRELOAD_INSTALLED)) return TORU_TUNE_PRELOAD_INSTALLED;
  return TORU_TUNE_PRELOAD_BUILD;
}

int run(std::vector<std::string> cmd, std::string dir, bool trace, bool io) {
  if (cmd.empty()) throw toru::error(toru::errc::invalid_argument, "run: expected a command after --");
  const std::string lib = preload_library();
  if (!fs::exists(lib))
    throw toru::error(toru::errc::io,
                      fmt::format("libtoru_tune_pmpi.so not found at '{}' (set TORU_TUNE_LIBRARY)", lib));
  if (dir.empty()) dir = fmt::format("toru-tune.{}", static_cast<long>(getpid()));
  dir = fs::absolute(dir).string();
  const char* old = std::getenv("LD_PRELOAD");
  const std::string preload = old && *old ? lib + ":" + old : lib;
  setenv("TORU_TUNE_DIR", dir.c_str(), 1);
  setenv("TORU_TUNE_TRACE", trace ? "1" : "0", 1);
  setenv("TORU_TUNE_IO", io ? "1" : "0", 1);
  // Open MPI: the ranks get the library through -x NAME=VALUE (also to remote nodes), mpiexec itself
  // runs without it. Any other command (a singleton run) is preloaded directly.
  const std::string launcher = fs::path(cmd.front()).filename().string();
  if (launcher == "mpiexec" || launcher == "mpirun" || launcher == "orterun")
    cmd.insert(cmd.begin() + 1,
               {"-x", "LD_PRELOAD=" + preload, "-x", "TORU_TUNE_DIR", "-x", "TORU_TUNE_TRACE", "-x", "TORU_TUNE_IO"});
  else
    setenv("LD_PRELOAD", preload.c_str(), 1);
  std::vector<char*> argv;
  for (auto& a : cmd) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    execvp(argv[0], argv.data());
    std::perror("toru-tune run: exec");
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  unsetenv("LD_PRELOAD");
  const int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  if (rc != 0) std::fprintf(stderr, "toru-tune: the command exited with status %d\n", rc);
  if (!fs::exists(fs::path(dir) / "profile.json"))
    throw toru::error(toru::errc::io,
                      fmt::format("no profile in {}: did the program call MPI_Init and MPI_Finalize?", dir));
  advise(dir, {}, true, false);
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"toru-tune: one-run diagnosis of MPI applications (libtoru_tune_pmpi.so) from an open rules database",
               "toru-tune"};
  app.require_subcommand(1);
  std::string dir, out;
  std::vector<std::string> extra;
  bool as_json = false, no_builtin = false;

  auto* a = app.add_subcommand("advise", "print the findings of the rules for a run directory");
  a->add_option("RUN_DIR", dir, "run directory written by libtoru_tune_pmpi (profile.json)")->required();
  a->add_option("--rules", extra, "extra rule directories (after the built-in ones and TORU_TUNE_RULES)");
  a->add_flag("--no-builtin", no_builtin, "only the rules of --rules");
  a->add_flag("--json", as_json, "findings as JSON");

  auto* r = app.add_subcommand("report", "write the self-contained HTML report of a run directory");
  r->add_option("RUN_DIR", dir, "run directory written by libtoru_tune_pmpi (profile.json)")->required();
  r->add_option("-o,--output", out, "HTML file (default RUN_DIR/report.html)");
  r->add_option("--rules", extra, "extra rule directories");
  r->add_flag("--no-builtin", no_builtin, "only the rules of --rules");

  auto* l = app.add_subcommand("rules", "list the rules in force");
  l->add_option("--rules", extra, "extra rule directories");
  l->add_flag("--no-builtin", no_builtin, "only the rules of --rules");

  std::vector<std::string> cmd;
  bool no_trace = false, no_io = false;
  auto* x = app.add_subcommand("run", "run a command under libtoru_tune_pmpi.so (LD_PRELOAD), then advise");
  x->add_option("--dir", dir, "run directory (default ./toru-tune.<pid>)");
  x->add_flag("--no-trace", no_trace, "skip the OTF2 trace");
  x->add_flag("--no-io", no_io, "skip the POSIX I/O wrappers");
  x->add_option("command", cmd, "the command, after --: mpiexec -n 4 ./app ...")->required();

  return toru::apps::run_cli(app, argc, argv, [&]() -> int {
    if (*a) return advise(dir, extra, !no_builtin, as_json);
    if (*r) return report(dir, out, extra, !no_builtin);
    if (*l) return list_rules(extra, !no_builtin);
    return run(cmd, dir, !no_trace, !no_io);
  });
}
