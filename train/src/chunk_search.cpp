// SPDX-License-Identifier: BSD-3-Clause
#include "toru/train/chunk_search.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "toru/core/error.hpp"

namespace toru::train {

chunk_search::chunk_search(int max_chunk, int start, const chunk_search_options& o) : options_(o) {
  expect(max_chunk >= 1, "max_chunk", ">= 1", std::to_string(max_chunk));
  expect(o.window >= 1, "window", ">= 1 step", std::to_string(o.window));
  expect(o.warmup >= 0 && o.warmup < o.window, "warmup", fmt::format("0..{} (less than the window)", o.window - 1),
         std::to_string(o.warmup));
  expect(std::isfinite(o.growth) && o.growth > 1, "growth", "a factor > 1", fmt::format("{}", o.growth));
  max_ = max_chunk;
  current_ = best_ = std::clamp(start, 1, max_chunk);
}

void chunk_search::record(double seconds) {
  if (done_) return;
  window_.push_back(seconds);
  if (static_cast<int>(window_.size()) < options_.window) return;
  std::vector<double> v(window_.begin() + options_.warmup, window_.end());
  std::sort(v.begin(), v.end());
  const auto n = v.size();
  const double median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  window_.clear();
  next(median);
}

void chunk_search::next(double median) {
  log_.push_back({current_, median});
  const bool first = log_.size() == 1;
  const bool improved = first || median < best_seconds_;
  if (improved) {
    best_ = current_;
    best_seconds_ = median;
  }
  auto step = [&](int from) {
    return direction_ > 0 ? std::min(max_, std::max(from + 1, static_cast<int>(std::lround(from * options_.growth))))
                          : std::max(1, std::min(from - 1, static_cast<int>(std::lround(from / options_.growth))));
  };
  if (!improved) {
    // A larger chunk no longer improves: stop, unless the first larger one already failed, in
    // which case the smaller side is searched from the start point.
    if (direction_ > 0 && log_.size() == 2 && log_[0].chunk_layers > 1) {
      direction_ = -1;
      current_ = step(log_[0].chunk_layers);
      return;
    }
    done_ = true;
    current_ = best_;
    return;
  }
  const int n = step(current_);
  if (n == current_) {  // the end of the range in this direction
    if (direction_ > 0 && first && current_ > 1) {
      direction_ = -1;
      current_ = step(current_);
      return;
    }
    done_ = true;
    current_ = best_;
    return;
  }
  current_ = n;
}

}  // namespace toru::train
