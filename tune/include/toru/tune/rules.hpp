// SPDX-License-Identifier: BSD-3-Clause
// The open rules database: bottleneck patterns as data files (JSON), evaluated over the metrics of
// one run's profile (profile.json, written by libtoru_tune_pmpi.so at MPI_Finalize).
//
// A rule file holds one rule or {"rules": [...]}. A rule:
//   {"id": "late_sender", "title": "Late sender", "category": "communication",
//    "scope": "site",                                  // run | site | io_site | region | cause
//    "root_cause": false,                              // optional; true: listed before the symptoms
//    "condition": "late_sender_fraction > 0.05",       // toru::tune::expression over the scope's metrics
//    "severity": "late_sender_fraction",               // optional expression; orders the findings
//    "diagnosis": "Receives at {location} wait {late_sender:.3f} s ...",   // {metric[:fmt spec]}
//    "evidence": ["late_sender", "calls"],
//    "mitigation": {"suggestion": "...", "action": {"TORU_ALLTOALL_ALGORITHM": "pairwise"}}}
// Files are read from the built-in directory (share/toru/tune/rules) and then from every directory
// in TORU_TUNE_RULES (':'-separated) or given with --rules: a later rule with the same id replaces
// an earlier one, so a user overrides a threshold by copying one file. docs/tune.md lists metrics.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "toru/tune/expr.hpp"

namespace toru::tune {

struct rule {
  std::string id, title, category, scope;
  expression condition;
  std::string severity;  // expression text; empty: 1
  std::string diagnosis;
  std::vector<std::string> evidence;
  nlohmann::json mitigation;  // {"suggestion": text, "action": {...}} (both optional)
  std::string file;           // where it came from
  bool root_cause = false;    // names a cause: its findings come before the symptoms' (wait states)
};

struct finding {
  std::string rule{}, title{}, category{}, scope{}, location{};
  double severity = 0;
  std::string diagnosis{};
  nlohmann::json evidence{};  // metric -> value
  std::string suggestion{};
  nlohmann::json action{};
  bool root_cause = false;
};

/// The metrics of one scope instance (a call site, an I/O site, a toru region, the whole run).
struct metric_set {
  std::string scope{};
  std::string location{};
  nlohmann::json values{};  // name -> number or string
};

/// Directories searched by default: the built-in rules, then TORU_TUNE_RULES.
std::vector<std::string> default_rule_dirs();
/// Reads every *.json of the directories in order (missing directories are skipped, a malformed
/// file or condition throws toru::error(invalid_argument) naming the file and the rule).
std::vector<rule> load_rules(const std::vector<std::string>& dirs);
/// Parses one rule from JSON (for tests and tools).
rule parse_rule(const nlohmann::json& j, const std::string& file = "");

/// The metric sets of a profile (profile.json's content).
std::vector<metric_set> metrics_of(const nlohmann::json& profile);
/// Every rule over every metric set of its scope; findings of root-cause rules first, each group by
/// decreasing severity. A rule that fails
/// to evaluate on one set (a metric missing there) is skipped for that set.
std::vector<finding> diagnose(const nlohmann::json& profile, const std::vector<rule>& rules);
nlohmann::json findings_json(const std::vector<finding>& findings);
/// Expands "{metric}" and "{metric:spec}" (fmt format spec) from `values`.
std::string expand(const std::string& text, const nlohmann::json& values);

}  // namespace toru::tune
