// SPDX-License-Identifier: BSD-3-Clause
#include "toru/topology/torus.hpp"

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <fstream>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "toru/core/error.hpp"
#include "toru/topology/network_model.hpp"
#include "toru/topology/units.hpp"

namespace toru::topology {
namespace {

constexpr const char* default_names[max_axes] = {"X", "Y", "Z", "T", "U", "V"};

bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

bool valid_name(std::string_view s) {
  return !s.empty() && is_name_start(s.front()) && std::all_of(s.begin(), s.end(), is_name_char);
}

std::string axis_label(int i, const axis& a) {
  return a.name.empty() ? fmt::format("axis {}", i) : fmt::format("axis {} ({})", i, a.name);
}

// Settings a spec or JSON object may give for one axis or for all of them.
struct axis_options {
  std::optional<bool> wrap, switched;
  std::optional<double> bandwidth, latency;
  std::optional<link_transport> transport;  // the whole torus only

  void apply_defaults(const axis_options& d) {
    if (!wrap && !switched) {
      wrap = d.wrap;
      switched = d.switched;
    }
    if (!bandwidth) bandwidth = d.bandwidth;
    if (!latency) latency = d.latency;
  }
  void set_kind(std::string_view kind, std::string_view what) {
    if (kind == "torus" || kind == "ring") {
      wrap = true;
      switched = false;
    } else if (kind == "mesh") {
      wrap = false;
      switched = false;
    } else if (kind == "switch" || kind == "switched") {
      wrap = true;
      switched = true;
    } else {
      throw error(errc::invalid_argument,
                  fmt::format("{}: expected a link kind 'torus', 'ring', 'mesh' or 'switch', got '{}'", what, kind));
    }
  }
  axis make(int extent, std::string name) const {
    axis a;
    a.extent = extent;
    a.name = std::move(name);
    a.wrap = wrap.value_or(true);
    a.switched = switched.value_or(false);
    a.bandwidth = bandwidth.value_or(default_bandwidth);
    a.latency = latency.value_or(default_latency);
    return a;
  }
};

// A cursor over a spec string; every error quotes the spec and the offending token.
class spec_parser {
 public:
  explicit spec_parser(std::string_view spec) : s_(spec) {}

  torus parse() {
    skip_blanks();
    if (pos_ == s_.size()) fail("expected at least one axis such as '16' or 'X=16'", "an empty spec");
    struct pending {
      int extent;
      std::string name;
      axis_options opts;
    };
    std::vector<pending> axes;
    axis_options defaults;
    for (;;) {
      pending p;
      p.name = parse_optional_name();
      p.extent = parse_extent(static_cast<int>(axes.size()));
      skip_blanks();
      if (peek() == '[') {
        ++pos_;
        parse_options(p.opts, ']');
      }
      axes.push_back(std::move(p));
      skip_blanks();
      if (pos_ == s_.size()) break;
      const char c = s_[pos_];
      if (c == 'x' || c == 'X' || c == '*') {
        ++pos_;
        skip_blanks();
        continue;
      }
      if (c == ',') {
        ++pos_;
        parse_options(defaults, '\0');
        break;
      }
      fail("expected 'x' between axes, '[' for axis options or ',' for options of all axes", token());
    }
    if (axes.size() > static_cast<std::size_t>(max_axes))
      throw error(errc::invalid_argument,
                  fmt::format("torus spec '{}': expected 1 to {} axes, got {}", s_, max_axes, axes.size()));
    std::vector<axis> out;
    for (auto& p : axes) {
      if (p.opts.transport)
        throw error(errc::invalid_argument,
                    fmt::format("torus spec '{}': 'transport' describes the whole torus: give it after ',' "
                                "(e.g. '64x32x32,transport=credit'), not in an axis's brackets",
                                s_));
      p.opts.apply_defaults(defaults);
      out.push_back(p.opts.make(p.extent, p.name));
    }
    return torus(std::move(out), defaults.transport.value_or(link_transport::tcp));
  }

 private:
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  void skip_blanks() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t')) ++pos_;
  }
  // The rest of the current token, for error messages.
  std::string token() const {
    if (pos_ >= s_.size()) return "the end of the spec";
    std::size_t end = pos_ + 1;
    while (end < s_.size() && is_name_char(s_[end]) && is_name_char(s_[pos_])) ++end;
    return fmt::format("'{}' at position {}", s_.substr(pos_, end - pos_), pos_ + 1);
  }
  [[noreturn]] void fail(std::string_view expected, std::string_view got) const {
    throw error(errc::invalid_argument, fmt::format("torus spec '{}': {}, got {}", s_, expected, got));
  }

  std::string parse_optional_name() {
    if (!is_name_start(peek())) return {};
    const std::size_t start = pos_;
    std::size_t end = pos_;
    while (end < s_.size() && is_name_char(s_[end])) ++end;
    std::size_t after = end;
    while (after < s_.size() && s_[after] == ' ') ++after;
    if (after >= s_.size() || s_[after] != '=')
      fail("expected an extent such as '16' or a named axis such as 'X=16'", token());
    pos_ = after + 1;
    skip_blanks();
    return std::string(s_.substr(start, end - start));
  }

  int parse_extent(int index) {
    const std::size_t start = pos_;
    if (peek() == '-' || peek() == '+') ++pos_;
    while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) ++pos_;
    const std::string_view digits = s_.substr(start, pos_ - start);
    long long v = 0;
    auto [p, ec] = std::from_chars(digits.data() + (digits.starts_with('+') ? 1 : 0), digits.data() + digits.size(), v);
    if (digits.empty() || ec != std::errc() || p != digits.data() + digits.size()) {
      pos_ = start;
      fail(fmt::format("expected the extent of axis {} (an integer >= 1)", index), token());
    }
    if (v < 1 || v > INT_MAX)
      throw error(
          errc::invalid_argument,
          fmt::format("torus spec '{}': extent of axis {}: expected an integer >= 1, got '{}'", s_, index, digits));
    return static_cast<int>(v);
  }

  // option (',' option)* up to `close` (or the end when close is '\0').
  void parse_options(axis_options& o, char close) {
    for (;;) {
      skip_blanks();
      const std::size_t start = pos_;
      while (pos_ < s_.size() && s_[pos_] != ',' && s_[pos_] != close && !(close && s_[pos_] == ']')) ++pos_;
      std::string_view item = s_.substr(start, pos_ - start);
      while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
      if (item.empty()) {
        pos_ = start;
        fail("expected an option (torus, mesh, switch, bw=<bandwidth>, lat=<time>)", token());
      }
      const std::string what = fmt::format("torus spec '{}': option '{}'", s_, item);
      if (auto eq = item.find('='); eq != std::string_view::npos) {
        std::string_view key = item.substr(0, eq), value = item.substr(eq + 1);
        while (!key.empty() && key.back() == ' ') key.remove_suffix(1);
        if (key == "bw" || key == "bandwidth")
          o.bandwidth = parse_bandwidth(value, what);
        else if (key == "lat" || key == "latency")
          o.latency = parse_time(value, what);
        else if (key == "transport")
          o.transport = link_transport_from_string(value, what);
        else
          throw error(
              errc::invalid_argument,
              fmt::format("torus spec '{}': expected an option key 'bw', 'lat' or 'transport', got '{}'", s_, key));
      } else {
        o.set_kind(item, fmt::format("torus spec '{}'", s_));
      }
      if (pos_ == s_.size()) {
        if (close) fail(fmt::format("expected '{}' to close the axis options", close), "the end of the spec");
        return;
      }
      if (s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (close && s_[pos_] == close) {
        ++pos_;
        return;
      }
      fail("expected ',' or the end of the spec", token());
    }
  }

  std::string_view s_;
  std::size_t pos_ = 0;
};

double json_quantity(const nlohmann::json& v, const std::string& what, bool bandwidth) {
  if (v.is_number()) {
    const double x = v.get<double>();
    if (bandwidth && !(x > 0 && std::isfinite(x)))
      throw error(errc::invalid_argument, fmt::format("{}: expected a bandwidth > 0 in bytes/s, got {}", what, x));
    if (!bandwidth && !(x >= 0 && std::isfinite(x)))
      throw error(errc::invalid_argument, fmt::format("{}: expected a latency >= 0 in seconds, got {}", what, x));
    return x;
  }
  if (v.is_string())
    return bandwidth ? parse_bandwidth(v.get<std::string>(), what) : parse_time(v.get<std::string>(), what);
  throw error(errc::invalid_argument,
              fmt::format("{}: expected a number or a string with units, got {}", what, v.dump()));
}

void json_options(const nlohmann::json& j, const std::string& where, axis_options& o) {
  if (j.contains("kind")) {
    if (!j["kind"].is_string())
      throw error(errc::invalid_argument, fmt::format("{}.kind: expected a string, got {}", where, j["kind"].dump()));
    o.set_kind(j["kind"].get<std::string>(), where + ".kind");
  }
  if (j.contains("wrap")) {
    if (!j["wrap"].is_boolean())
      throw error(errc::invalid_argument,
                  fmt::format("{}.wrap: expected true or false, got {}", where, j["wrap"].dump()));
    if (o.switched.value_or(false))
      throw error(errc::invalid_argument, fmt::format("{}: 'wrap' conflicts with kind 'switch'", where));
    if (o.wrap && *o.wrap != j["wrap"].get<bool>())
      throw error(errc::invalid_argument, fmt::format("{}: 'wrap' conflicts with 'kind'", where));
    o.wrap = j["wrap"].get<bool>();
    o.switched = false;
  }
  if (j.contains("bandwidth")) o.bandwidth = json_quantity(j["bandwidth"], where + ".bandwidth", true);
  if (j.contains("latency")) o.latency = json_quantity(j["latency"], where + ".latency", false);
}

void json_expect_keys(const nlohmann::json& j, const std::string& where, std::initializer_list<std::string_view> keys) {
  for (const auto& [key, value] : j.items())
    if (std::find(keys.begin(), keys.end(), key) == keys.end())
      throw error(errc::invalid_argument,
                  fmt::format("{}: unknown key '{}' (expected one of {})", where, key, fmt::join(keys, ", ")));
}

// The shortest text with a unit that parses back to exactly v ("0.5us", not "499.99999999999994ns").
std::string exact_quantity(double v, bool bandwidth) {
  struct u {
    const char* suffix;
    double f;
  };
  static constexpr u bw[] = {{"TB/s", 1e12}, {"GB/s", 1e9}, {"MB/s", 1e6}, {"KB/s", 1e3}, {"B/s", 1}};
  static constexpr u tm[] = {{"s", 1}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}};
  std::string best = fmt::format("{}{}", v, bandwidth ? "B/s" : "s");
  for (const auto& x : bandwidth ? std::span<const u>(bw) : std::span<const u>(tm)) {
    for (int digits = 1; digits <= 17; ++digits) {
      std::string s = fmt::format("{:.{}g}{}", v / x.f, digits, x.suffix);
      if (s.find('e') != std::string::npos) break;
      const double back = bandwidth ? parse_bandwidth(s, "") : parse_time(s, "");
      if (back == v) {
        if (s.size() < best.size()) best = std::move(s);
        break;
      }
    }
  }
  return best;
}

std::string kind_name(const axis& a) { return a.switched ? "switch" : a.wrap ? "torus" : "mesh"; }

}  // namespace

std::string to_string(link_transport t) { return t == link_transport::credit ? "credit" : "tcp"; }

link_transport link_transport_from_string(std::string_view text, std::string_view what) {
  if (text == "credit") return link_transport::credit;
  if (text == "tcp") return link_transport::tcp;
  throw error(errc::invalid_argument,
              fmt::format("{}: expected a transport 'tcp' (Ethernet, drop-tail) or 'credit' (HPC, lossless), got '{}'",
                          what, text));
}

torus::torus(std::vector<axis> axes, link_transport transport) : axes_(std::move(axes)), transport_(transport) {
  if (axes_.empty() || axes_.size() > static_cast<std::size_t>(max_axes))
    throw error(errc::invalid_argument, fmt::format("torus: expected 1 to {} axes, got {}", max_axes, axes_.size()));
  for (std::size_t i = 0; i < axes_.size(); ++i) {
    auto& a = axes_[i];
    const int n = static_cast<int>(i);
    if (a.name.empty()) a.name = default_names[i];
    if (!valid_name(a.name))
      throw error(
          errc::invalid_argument,
          fmt::format("torus axis {} name: expected an identifier ([A-Za-z_][A-Za-z0-9_]*), got '{}'", n, a.name));
    if (a.extent < 1)
      throw error(errc::invalid_argument,
                  fmt::format("torus {} extent: expected an integer >= 1, got {}", axis_label(n, a), a.extent));
    if (!(a.bandwidth > 0) || !std::isfinite(a.bandwidth))
      throw error(errc::invalid_argument,
                  fmt::format("torus {} bandwidth: expected > 0 bytes/s, got {}", axis_label(n, a), a.bandwidth));
    if (!(a.latency >= 0) || !std::isfinite(a.latency))
      throw error(errc::invalid_argument,
                  fmt::format("torus {} latency: expected >= 0 seconds, got {}", axis_label(n, a), a.latency));
    if (a.switched) a.wrap = true;
    size_ *= a.extent;
    if (size_ > INT_MAX)
      throw error(errc::invalid_argument,
                  fmt::format("torus: expected at most {} nodes (MPI ranks are int), got more at {}", INT_MAX,
                              axis_label(n, a)));
  }
  for (std::size_t i = 0; i < axes_.size(); ++i)
    for (std::size_t j = i + 1; j < axes_.size(); ++j)
      if (axes_[i].name == axes_[j].name)
        throw error(
            errc::invalid_argument,
            fmt::format("torus axis names: expected distinct names, got '{}' for axes {} and {}", axes_[i].name, i, j));
}

torus torus::parse(std::string_view spec) { return spec_parser(spec).parse(); }

torus torus::from_json(const nlohmann::json& j) {
  if (j.is_string()) return parse(j.get<std::string>());
  if (!j.is_object() || !j.contains("axes") || !j["axes"].is_array())
    throw error(errc::invalid_argument,
                fmt::format("torus JSON: expected an object with an array 'axes' or a spec string, got {}",
                            j.dump().substr(0, 200)));
  json_expect_keys(j, "torus JSON", {"axes", "kind", "bandwidth", "latency", "transport"});
  axis_options defaults;
  json_options(j, "torus JSON", defaults);
  link_transport transport = link_transport::tcp;
  if (j.contains("transport")) {
    if (!j["transport"].is_string())
      throw error(errc::invalid_argument,
                  fmt::format("torus JSON.transport: expected \"tcp\" or \"credit\", got {}", j["transport"].dump()));
    transport = link_transport_from_string(j["transport"].get<std::string>(), "torus JSON.transport");
  }
  std::vector<axis> axes;
  for (std::size_t i = 0; i < j["axes"].size(); ++i) {
    const auto& a = j["axes"][i];
    const std::string where = fmt::format("torus JSON axes[{}]", i);
    if (!a.is_object())
      throw error(errc::invalid_argument, fmt::format("{}: expected an object, got {}", where, a.dump()));
    json_expect_keys(a, where, {"name", "extent", "kind", "wrap", "bandwidth", "latency"});
    if (!a.contains("extent") || !a["extent"].is_number_integer())
      throw error(errc::invalid_argument, fmt::format("{}.extent: expected an integer >= 1, got {}", where,
                                                      a.contains("extent") ? a["extent"].dump() : "nothing"));
    const auto extent = a["extent"].get<long long>();
    if (extent < 1 || extent > INT_MAX)
      throw error(errc::invalid_argument, fmt::format("{}.extent: expected an integer >= 1, got {}", where, extent));
    std::string name;
    if (a.contains("name")) {
      if (!a["name"].is_string())
        throw error(errc::invalid_argument, fmt::format("{}.name: expected a string, got {}", where, a["name"].dump()));
      name = a["name"].get<std::string>();
    }
    axis_options o;
    json_options(a, where, o);
    o.apply_defaults(defaults);
    axes.push_back(o.make(static_cast<int>(extent), std::move(name)));
  }
  return torus(std::move(axes), transport);
}

torus torus::load(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw error(errc::io, fmt::format("torus file '{}': cannot open it for reading", path));
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw error(errc::invalid_argument, fmt::format("torus file '{}': expected JSON: {}", path, e.what()));
  }
  try {
    return from_json(j);
  } catch (const error& e) {
    throw error(e.code(), fmt::format("torus file '{}': {}", path, e.message()));
  }
}

nlohmann::json torus::to_json() const {
  nlohmann::json axes = nlohmann::json::array();
  for (const auto& a : axes_)
    axes.push_back({{"name", a.name},
                    {"extent", a.extent},
                    {"kind", kind_name(a)},
                    {"bandwidth", a.bandwidth},
                    {"latency", a.latency}});
  nlohmann::json j{{"axes", axes}};
  if (transport_ != link_transport::tcp) j["transport"] = topology::to_string(transport_);
  return j;
}

std::string torus::to_string() const {
  auto all_same = [&](auto get) {
    return std::all_of(axes_.begin(), axes_.end(), [&](const axis& a) { return get(a) == get(axes_.front()); });
  };
  const bool common_bw = all_same([](const axis& a) { return a.bandwidth; });
  const bool common_lat = all_same([](const axis& a) { return a.latency; });
  std::string out;
  for (int i = 0; i < ndims(); ++i) {
    const axis& a = axes_[static_cast<std::size_t>(i)];
    if (i) out += 'x';
    if (a.name != default_names[i]) out += a.name + '=';
    out += std::to_string(a.extent);
    std::vector<std::string> opts;
    if (a.switched || !a.wrap) opts.push_back(kind_name(a));
    if (!common_bw) opts.push_back("bw=" + exact_quantity(a.bandwidth, true));
    if (!common_lat) opts.push_back("lat=" + exact_quantity(a.latency, false));
    if (!opts.empty()) out += fmt::format("[{}]", fmt::join(opts, ","));
  }
  if (common_bw && axes_.front().bandwidth != default_bandwidth)
    out += ",bw=" + exact_quantity(axes_.front().bandwidth, true);
  if (common_lat && axes_.front().latency != default_latency)
    out += ",lat=" + exact_quantity(axes_.front().latency, false);
  if (transport_ != link_transport::tcp) out += ",transport=" + topology::to_string(transport_);
  return out;
}

int torus::find_axis(std::string_view name) const {
  for (int i = 0; i < ndims(); ++i)
    if (axes_[static_cast<std::size_t>(i)].name == name) return i;
  auto lower = [](std::string_view s) {
    std::string r(s);
    for (auto& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return r;
  };
  for (int i = 0; i < ndims(); ++i)
    if (lower(axes_[static_cast<std::size_t>(i)].name) == lower(name)) return i;
  return -1;
}

int torus::longest_axis() const {
  int best = 0;
  double best_cost = -1;
  for (int i = 0; i < ndims(); ++i) {
    const auto& a = axes_[static_cast<std::size_t>(i)];
    const double cost = effective_extent(a) / a.bandwidth;
    if (cost >= best_cost) {
      best = i;
      best_cost = cost;
    }
  }
  return best;
}

std::vector<int> torus::coords(std::int64_t node) const {
  if (node < 0 || node >= size_)
    throw error(errc::invalid_argument,
                fmt::format("torus {} node: expected 0 <= node < {}, got {}", to_string(), size_, node));
  std::vector<int> c(axes_.size());
  coords_into(node, c);
  return c;
}

std::int64_t torus::node(std::span<const int> c) const {
  if (c.size() != axes_.size())
    throw error(errc::invalid_argument,
                fmt::format("torus {} coordinates: expected {} values, got {}", to_string(), axes_.size(), c.size()));
  for (std::size_t i = 0; i < c.size(); ++i)
    if (c[i] < 0 || c[i] >= axes_[i].extent)
      throw error(errc::invalid_argument, fmt::format("torus {} coordinate {} ({}): expected 0..{}, got {}",
                                                      to_string(), i, axes_[i].name, axes_[i].extent - 1, c[i]));
  return node_unchecked(c);
}

void torus::coords_into(std::int64_t node, std::span<int> c) const noexcept {
  for (std::size_t i = 0; i < axes_.size(); ++i) {
    c[i] = static_cast<int>(node % axes_[i].extent);
    node /= axes_[i].extent;
  }
}

std::int64_t torus::node_unchecked(std::span<const int> c) const noexcept {
  std::int64_t n = 0;
  for (std::size_t i = axes_.size(); i-- > 0;) n = n * axes_[i].extent + c[i];
  return n;
}

torus torus::sub(std::span<const int> axes) const {
  std::vector<axis> out;
  std::vector<bool> seen(axes_.size(), false);
  for (int a : axes) {
    if (a < 0 || a >= ndims() || seen[static_cast<std::size_t>(a)])
      throw error(errc::invalid_argument,
                  fmt::format("torus {} sub-torus axes: expected distinct axes in 0..{}, got [{}]", to_string(),
                              ndims() - 1, fmt::join(axes, ",")));
    seen[static_cast<std::size_t>(a)] = true;
    out.push_back(axes_[static_cast<std::size_t>(a)]);
  }
  return torus(std::move(out), transport_);
}

std::vector<int> factorize(int n, int ndims) {
  expect(n >= 1, "factorize n", "an integer >= 1", std::to_string(n));
  expect(ndims >= 1 && ndims <= max_axes, "factorize ndims", fmt::format("1..{}", max_axes), std::to_string(ndims));
  std::vector<int> primes;
  for (int p = 2, m = n; m > 1;) {
    if (static_cast<long long>(p) * p > m) {
      primes.push_back(m);
      break;
    }
    if (m % p == 0) {
      primes.push_back(p);
      m /= p;
    } else {
      ++p;
    }
  }
  std::vector<int> dims(static_cast<std::size_t>(ndims), 1);
  std::sort(primes.rbegin(), primes.rend());
  for (int p : primes) *std::min_element(dims.begin(), dims.end()) *= p;
  std::sort(dims.begin(), dims.end());
  return dims;
}

}  // namespace toru::topology
