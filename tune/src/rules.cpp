// SPDX-License-Identifier: BSD-3-Clause
#include "toru/tune/rules.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include <fmt/format.h>

#include "toru/core/error.hpp"

#ifndef TORU_TUNE_RULES_INSTALLED
#define TORU_TUNE_RULES_INSTALLED ""
#endif
#ifndef TORU_TUNE_RULES_SOURCE
#define TORU_TUNE_RULES_SOURCE ""
#endif

namespace toru::tune {

using json = nlohmann::json;

std::vector<std::string> default_rule_dirs() {
  std::vector<std::string> dirs;
  namespace fs = std::filesystem;
  // The installed copy when present, else the source tree's (a build that was not installed).
  if (fs::is_directory(TORU_TUNE_RULES_INSTALLED))
    dirs.emplace_back(TORU_TUNE_RULES_INSTALLED);
  else if (fs::is_directory(TORU_TUNE_RULES_SOURCE))
    dirs.emplace_back(TORU_TUNE_RULES_SOURCE);
  if (const char* env = std::getenv("TORU_TUNE_RULES")) {
    std::string s = env;
    std::size_t b = 0;
    while (b <= s.size()) {
      const std::size_t e = std::min(s.find(':', b), s.size());
      if (e > b) dirs.push_back(s.substr(b, e - b));
      b = e + 1;
    }
  }
  return dirs;
}

rule parse_rule(const json& j, const std::string& file) {
  auto where = [&] { return fmt::format("rule file {}", file.empty() ? "(inline)" : file); };
  if (!j.is_object()) throw error(errc::invalid_argument, where() + ": a rule must be a JSON object");
  auto str = [&](const char* key, bool required) -> std::string {
    if (!j.contains(key)) {
      if (required)
        throw error(errc::invalid_argument,
                    fmt::format("{}: rule '{}' lacks \"{}\"", where(), j.value("id", std::string("?")), key));
      return {};
    }
    if (!j[key].is_string())
      throw error(errc::invalid_argument, fmt::format("{}: \"{}\" must be a string", where(), key));
    return j[key].get<std::string>();
  };
  rule r{.id = str("id", true),
         .title = str("title", false),
         .category = str("category", false),
         .scope = str("scope", true),
         .condition = expression::parse(str("condition", true)),
         .severity = str("severity", false),
         .diagnosis = str("diagnosis", true),
         .evidence = {},
         .mitigation = j.value("mitigation", json::object()),
         .file = file};
  static const char* scopes[] = {"run", "site", "io_site", "region", "cause"};
  if (std::find_if(std::begin(scopes), std::end(scopes), [&](const char* s) { return r.scope == s; }) ==
      std::end(scopes))
    throw error(errc::invalid_argument,
                fmt::format("{}: rule '{}': scope must be run, site, io_site, region or cause, got '{}'", where(), r.id,
                            r.scope));
  if (!r.severity.empty()) (void)expression::parse(r.severity);
  if (j.contains("root_cause")) {
    if (!j["root_cause"].is_boolean())
      throw error(errc::invalid_argument,
                  fmt::format("{}: rule '{}': \"root_cause\" must be true or false", where(), r.id));
    r.root_cause = j["root_cause"].get<bool>();
  }
  if (j.contains("evidence")) r.evidence = j["evidence"].get<std::vector<std::string>>();
  if (r.title.empty()) r.title = r.id;
  return r;
}

std::vector<rule> load_rules(const std::vector<std::string>& dirs) {
  namespace fs = std::filesystem;
  std::vector<rule> rules;
  std::map<std::string, std::size_t> by_id;
  for (const auto& d : dirs) {
    if (!fs::is_directory(d)) continue;
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(d))
      if (e.path().extension() == ".json") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      std::ifstream in(f);
      json j = json::parse(in, nullptr, false);
      if (j.is_discarded())
        throw error(errc::invalid_argument, fmt::format("rule file {}: not valid JSON", f.string()));
      const json list = j.is_object() && j.contains("rules") ? j["rules"] : json::array({j});
      for (const auto& rj : list) {
        rule r = parse_rule(rj, f.string());
        if (auto it = by_id.find(r.id); it != by_id.end())
          rules[it->second] = std::move(r);
        else {
          by_id[r.id] = rules.size();
          rules.push_back(std::move(r));
        }
      }
    }
  }
  return rules;
}

std::string expand(const std::string& text, const json& values) {
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t b = text.find('{', i);
    if (b == std::string::npos) break;
    const std::size_t e = text.find('}', b);
    if (e == std::string::npos) break;
    out += text.substr(i, b - i);
    const std::string field = text.substr(b + 1, e - b - 1);
    const std::size_t colon = field.find(':');
    const std::string name = field.substr(0, colon);
    const std::string spec = colon == std::string::npos ? "" : field.substr(colon);
    if (!values.contains(name)) {
      out += "{" + field + "}";
    } else if (values[name].is_string()) {
      out += values[name].get<std::string>();
    } else {
      try {
        // Python's "%" presentation, which fmt lacks: a fraction shown as a percentage. The format
        // strings are built by fmt, not by string '+': GCC 12 at -O3 reports a false -Wrestrict
        // in the inlined concatenation (GCC bug 105329).
        if (spec.size() > 1 && spec.back() == '%')
          out += fmt::format(fmt::runtime(fmt::format("{{{}f}}%", std::string_view(spec).substr(0, spec.size() - 1))),
                             100 * values[name].get<double>());
        else
          out += fmt::format(fmt::runtime(fmt::format("{{{}}}", spec)), values[name].get<double>());
      } catch (const std::exception&) {
        out += fmt::format("{}", values[name].get<double>());
      }
    }
    i = e + 1;
  }
  out += text.substr(std::min(i, text.size()));
  return out;
}

std::vector<finding> diagnose(const json& profile, const std::vector<rule>& rules) {
  const auto sets = metrics_of(profile);
  std::vector<finding> out;
  for (const auto& r : rules)
    for (const auto& m : sets) {
      if (m.scope != r.scope) continue;
      const metric_lookup look = [&](std::string_view n) -> std::optional<value> {
        auto it = m.values.find(std::string(n));
        if (it == m.values.end() || it->is_null()) return std::nullopt;
        if (it->is_string()) return value(it->get<std::string>());
        if (it->is_boolean()) return value(it->get<bool>() ? 1.0 : 0.0);
        return value(it->get<double>());
      };
      try {
        if (!r.condition.test(look)) continue;
        finding f{.rule = r.id, .title = r.title, .category = r.category, .scope = r.scope, .location = m.location};
        f.root_cause = r.root_cause;
        f.severity = 1;
        if (!r.severity.empty()) {
          const value v = expression::parse(r.severity).eval(look);
          if (const double* d = std::get_if<double>(&v)) f.severity = *d;
        }
        f.diagnosis = expand(r.diagnosis, m.values);
        f.evidence = json::object();
        for (const auto& e : r.evidence)
          if (m.values.contains(e)) f.evidence[e] = m.values[e];
        f.suggestion = expand(r.mitigation.value("suggestion", std::string()), m.values);
        f.action = r.mitigation.value("action", json::object());
        out.push_back(std::move(f));
      } catch (const error&) {
        continue;  // a metric this set lacks: the rule does not apply here
      }
    }
  // A cause before its symptoms: the wait states it explains are advice only once it is fixed.
  std::stable_sort(out.begin(), out.end(), [](const finding& a, const finding& b) {
    if (a.root_cause != b.root_cause) return a.root_cause;
    return a.severity > b.severity;
  });
  return out;
}

json findings_json(const std::vector<finding>& findings) {
  json a = json::array();
  for (const auto& f : findings)
    a.push_back({{"rule", f.rule},
                 {"title", f.title},
                 {"category", f.category},
                 {"scope", f.scope},
                 {"location", f.location},
                 {"severity", f.severity},
                 {"diagnosis", f.diagnosis},
                 {"evidence", f.evidence},
                 {"suggestion", f.suggestion},
                 {"action", f.action},
                 {"root_cause", f.root_cause}});
  return {{"toru_tune_findings", 1}, {"findings", a}};
}

}  // namespace toru::tune
