// SPDX-License-Identifier: BSD-3-Clause
// Helpers shared by the CPU kernels.
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cpu.hpp"
#include "toru/core/error.hpp"

namespace toru::train::detail::cpu {

std::int64_t numel(const std::vector<std::int64_t>& s) {
  std::int64_t n = 1;
  for (auto e : s) n *= e;
  return n;
}

md any_md(const std::vector<std::int64_t>& shape) {
  return md(dims(shape.begin(), shape.end()), dnnl::memory::data_type::f32, dnnl::memory::format_tag::any);
}

md strided_md(dims d, dims strides) { return md(d, dnnl::memory::data_type::f32, strides); }

void bad(const swap::op& o, const std::string& what) {
  throw error(errc::invalid_argument, fmt::format("op '{}' ({}): {}", o.name, o.type, what));
}

geometry make_geometry(const swap::op& o, const std::vector<std::int64_t>& in, const std::vector<std::int64_t>& out,
                       const std::vector<std::int64_t>& kernel) {
  const std::size_t nd = in.size() - 2;
  auto get = [&](const std::vector<std::int64_t>& v, std::int64_t def, const char* name) {
    dims r(nd, def);
    if (v.size() == 1)
      std::fill(r.begin(), r.end(), v[0]);
    else if (v.size() == nd)
      std::copy(v.begin(), v.end(), r.begin());
    else if (!v.empty())
      bad(o, fmt::format("attribute {}: expected {} values, got {}", name, nd, v.size()));
    return r;
  };
  geometry geo;
  geo.kernel = get(kernel, 1, "kernel");
  geo.stride = get(o.attr.stride, 1, "stride");
  geo.pad_l = get(o.attr.pad_begin, 0, "pad_begin");
  const dims d = get(o.attr.dilation, 1, "dilation");
  geo.dilation.resize(nd);
  geo.pad_r.resize(nd);
  for (std::size_t i = 0; i < nd; ++i) {
    geo.dilation[i] = d[i] - 1;
    geo.pad_r[i] = (out[2 + i] - 1) * geo.stride[i] + (geo.kernel[i] - 1) * d[i] + 1 - in[2 + i] - geo.pad_l[i];
    if (geo.kernel[i] <= 0 || geo.stride[i] <= 0 || d[i] <= 0 || geo.pad_l[i] < 0)
      bad(o, "expected positive kernel, stride and dilation and non-negative padding");
    // A negative right padding means trailing input the windows never reach (floor mode).
    if (geo.pad_r[i] < 0 && -geo.pad_r[i] >= geo.stride[i] * d[i] + geo.kernel[i])
      bad(o, fmt::format("output extent {} does not fit input extent {}", out[2 + i], in[2 + i]));
  }
  return geo;
}

}  // namespace toru::train::detail::cpu
