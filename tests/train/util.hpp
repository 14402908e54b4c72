// SPDX-License-Identifier: BSD-3-Clause
// Helpers of the trainer's tests: random data, norm-wise relative error, graph dumps for PyTorch.
#pragma once

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "toru/swap/graph.hpp"
#include "toru/train/model.hpp"

namespace toru::train::test {

inline std::vector<float> random_floats(std::size_t n, std::uint64_t seed, float lo = -1, float hi = 1) {
  std::mt19937_64 r(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = u(r);
  return v;
}

inline std::vector<std::int32_t> random_labels(std::size_t n, int classes, std::uint64_t seed) {
  std::mt19937_64 r(seed);
  std::uniform_int_distribution<int> u(0, classes - 1);
  std::vector<std::int32_t> v(n);
  for (auto& x : v) x = u(r);
  return v;
}

/// One step's data: normal-distributed inputs and uniform labels for m's input shape and classes.
struct batch {
  std::vector<float> x;
  std::vector<std::int32_t> y;
};

inline std::vector<batch> make_batches(const model& m, int steps, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::int64_t n = 1;
  for (auto e : m.input_shape()) n *= e;
  std::vector<batch> out(static_cast<std::size_t>(steps));
  for (auto& b : out) {
    b.x.resize(static_cast<std::size_t>(n));
    for (auto& v : b.x) v = nd(gen);
    b.y.resize(static_cast<std::size_t>(m.batch()));
    for (auto& v : b.y) v = static_cast<std::int32_t>(gen() % static_cast<std::uint64_t>(m.classes()));
  }
  return out;
}

/// ||a - b||_2 / ||b||_2 (absolute ||a - b||_2 when ||b||_2 < 1e-6).
inline double rel_error(std::span<const float> a, std::span<const float> b) {
  double d = 0, n = 0;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    d += (static_cast<double>(a[i]) - b[i]) * (static_cast<double>(a[i]) - b[i]);
    n += static_cast<double>(b[i]) * b[i];
  }
  if (a.size() != b.size()) return INFINITY;
  return n < 1e-12 ? std::sqrt(d) : std::sqrt(d / n);
}

inline std::int64_t count(const std::vector<std::int64_t>& s) {
  std::int64_t n = 1;
  for (auto e : s) n *= e;
  return n;
}

/// The graph as the PyTorch reference script reads it.
inline nlohmann::json to_json(const swap::graph& g) {
  nlohmann::json j;
  j["name"] = g.name;
  for (const auto& t : g.tensors) {
    const char* kind = t.kind == swap::tensor_kind::parameter ? "parameter"
                       : t.kind == swap::tensor_kind::input   ? "input"
                                                              : "activation";
    j["tensors"].push_back({{"name", t.name}, {"shape", t.shape}, {"kind", kind}});
  }
  for (const auto& o : g.ops) {
    const auto& a = o.attr;
    j["ops"].push_back({{"name", o.name},
                        {"type", o.type},
                        {"inputs", o.inputs},
                        {"outputs", o.outputs},
                        {"attr", {{"kernel", a.kernel},       {"stride", a.stride},
                                  {"pad_begin", a.pad_begin}, {"pad_end", a.pad_end},
                                  {"pad_value", a.pad_value}, {"pad_mode", a.pad_mode},
                                  {"dilation", a.dilation},   {"groups", a.groups},
                                  {"ceil_mode", a.ceil_mode}, {"count_include_pad", a.count_include_pad},
                                  {"epsilon", a.epsilon},     {"momentum", a.momentum},
                                  {"axis", a.axis},           {"trans_b", a.trans_b},
                                  {"clip_min", a.clip_min},   {"clip_max", a.clip_max},
                                  {"perm", a.perm},           {"axes", a.axes},
                                  {"starts", a.starts},       {"steps", a.steps},
                                  {"scale", a.scale},         {"shift", a.shift}}}});
  }
  return j;
}

template <class T>
void write_raw(const std::filesystem::path& p, std::span<const T> v) {
  std::ofstream f(p, std::ios::binary);
  f.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size_bytes()));
}

inline std::vector<float> read_raw(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary | std::ios::ate);
  const auto n = static_cast<std::size_t>(f.tellg());
  std::vector<float> v(n / 4);
  f.seekg(0);
  f.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(n));
  return v;
}

/// Sets every parameter of m to random values (batch-norm scales around 1), as a test wants them.
inline void randomize_parameters(model& m, std::uint64_t seed) {
  auto p = m.parameter_data();
  auto v = random_floats(p.size(), seed, -0.5f, 0.5f);
  for (const auto& s : m.parameters())
    if (s.name.ends_with("/weight") && s.shape.size() == 1)  // norm scales
      for (std::int64_t i = 0; i < s.count; ++i) v[s.offset + i] += 1.0f;
  std::copy(v.begin(), v.end(), p.begin());
  m.parameters_changed();
}

}  // namespace toru::train::test
