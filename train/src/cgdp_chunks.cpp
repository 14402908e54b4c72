// SPDX-License-Identifier: BSD-3-Clause
// Layers and chunks of a model's parameter slots (toru/train/cgdp.hpp).
#include <numeric>
#include <string>

#include <fmt/format.h>

#include "toru/core/error.hpp"
#include "toru/train/cgdp.hpp"

namespace toru::train {

std::string_view to_string(engine_kind e) noexcept {
  switch (e) {
    case engine_kind::allreduce:
      return "allreduce";
    case engine_kind::cgdp:
      return "cgdp";
    case engine_kind::cgdp_sum:
      return "cgdp-sum";
    case engine_kind::auto_select:
      return "auto";
  }
  return "?";
}

engine_kind parse_engine(std::string_view name, std::string_view argument) {
  for (auto e : {engine_kind::allreduce, engine_kind::cgdp, engine_kind::cgdp_sum, engine_kind::auto_select})
    if (name == to_string(e)) return e;
  throw error(errc::invalid_argument,
              fmt::format("{}: expected allreduce, cgdp, cgdp-sum or auto, got '{}'", argument, name));
}

std::vector<model_layer> group_layers(std::span<const parameter_slot> slots) {
  std::vector<model_layer> out;
  std::int64_t end = slots.empty() ? 0 : slots.front().offset;
  for (int s = 0; s < static_cast<int>(slots.size()); ++s) {
    const auto& sl = slots[static_cast<std::size_t>(s)];
    if (sl.offset != end)
      throw error(errc::invalid_argument,
                  fmt::format("slots: chunks need consecutive slots, but '{}' starts at element {} instead of {}",
                              sl.name, sl.offset, end));
    end = sl.offset + sl.count;
    if (out.empty() || out.back().op != sl.first_forward_op) {
      out.push_back({.first_slot = s, .last_slot = s, .op = sl.first_forward_op, .offset = sl.offset, .count = 0});
    }
    out.back().last_slot = s;
    out.back().count += sl.count;
  }
  return out;
}

std::vector<int> uniform_chunking(int layers, int chunk_layers) {
  expect(layers >= 1, "layers", ">= 1 (a model with parameters)", std::to_string(layers));
  const int rest = layers - 1;  // without the last layer
  expect(chunk_layers >= 1 && chunk_layers <= std::max(1, rest), "chunk_layers",
         fmt::format("a chunk size in 1..{} layers (the model has {} layers; the last is its own chunk)",
                     std::max(1, rest), layers),
         std::to_string(chunk_layers));
  std::vector<int> sizes;
  int left = rest;
  while (left > 0) {
    const int k = std::min(chunk_layers, left);
    sizes.insert(sizes.begin(), k);  // filled from the output side: the remainder ends input-side
    left -= k;
  }
  return sizes;
}

std::vector<chunk> make_chunks(std::span<const model_layer> layers, std::span<const int> sizes) {
  const int L = static_cast<int>(layers.size());
  expect(L >= 1, "layers", ">= 1 (a model with parameters)", "0");
  int total = 0;
  for (int k : sizes) {
    expect(k >= 1, "chunk sizes", "sizes >= 1 layer", describe_chunking(sizes));
    total += k;
  }
  expect(total == L - 1, "chunk sizes",
         fmt::format("sizes adding up to {} layers (all but the model's last of {})", L - 1, L),
         fmt::format("{} (total {})", describe_chunking(sizes), total));
  std::vector<chunk> out;
  auto add = [&](int first, int last) {
    const auto& a = layers[static_cast<std::size_t>(first)];
    const auto& b = layers[static_cast<std::size_t>(last)];
    out.push_back({.first_layer = first,
                   .last_layer = last,
                   .first_slot = a.first_slot,
                   .last_slot = b.last_slot,
                   .offset = a.offset,
                   .count = b.offset + b.count - a.offset});
  };
  int l = 0;
  for (int k : sizes) {
    add(l, l + k - 1);
    l += k;
  }
  add(L - 1, L - 1);
  return out;
}

std::string describe_chunking(std::span<const int> sizes) { return fmt::format("{}|1", fmt::join(sizes, "+")); }

}  // namespace toru::train
