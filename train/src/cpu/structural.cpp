// SPDX-License-Identifier: BSD-3-Clause
// Layers that move data: reshape-like ops, add, concat.
#include <algorithm>
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cpu.hpp"
#include "toru/core/error.hpp"

namespace toru::train::detail::cpu {

namespace {

using prop = dnnl::prop_kind;

// Reshape-like ops (flatten, reshape, squeeze, identity): a plain copy under a new shape.
class reshape final : public cpu_kernel {
 public:
  reshape(cpu_backend& be, const swap::graph& g, int op) : cpu_kernel(be, g, op) {
    if (numel(in_shape(0)) != numel(out_shape(0)))
      bad(this->op(),
          fmt::format("cannot reshape [{}] to [{}]", fmt::join(in_shape(0), ","), fmt::join(out_shape(0), ",")));
    to_plain_ = relayout(be, in_md(0), plain_md(in_shape(0)), what("x"));
    from_plain_ = relayout(be, plain_md(in_shape(0)), in_md(0), what("dx"));
    set_out_md(0, plain_md(out_shape(0)));
  }
  void forward(const forward_args& a) override {
    be_.set_threads();
    to_plain_.run(a.in[0], a.out[0]);
  }
  void backward(const backward_args& a) override {
    if (!a.d_in[0]) return;
    be_.set_threads();
    from_plain_.run(a.d_out[0], a.d_in[0]);
  }
  bool backward_reads_input(int) const override { return false; }
  bool backward_reads_output(int) const override { return false; }

 private:
  relayout to_plain_, from_plain_;
};

// A ReLU its batch norm applied (fused_relu_of): the data passes through (nothing to do where the
// model placed the output over the input), the gradient goes back unchanged (the batch norm's
// backward applies the mask).
class fused_relu final : public cpu_kernel {
 public:
  fused_relu(cpu_backend& be, const swap::graph& g, int op) : cpu_kernel(be, g, op) { set_out_md(0, in_md(0)); }
  void forward(const forward_args& a) override {
    be_.set_threads();
    if (a.out[0] != a.in[0]) parallel_copy(a.out[0], a.in[0], in_md(0).get_size());
  }
  void backward(const backward_args& a) override {
    if (!a.d_in[0]) return;
    be_.set_threads();
    parallel_copy(a.d_in[0], a.d_out[0], in_md(0).get_size());
  }
  bool backward_reads_input(int) const override { return false; }
  bool backward_reads_output(int) const override { return false; }
};

// ---------------------------------------------------------------------------------------------
// a + b of equal shapes, in a's layout.
class add final : public cpu_kernel {
 public:
  add(cpu_backend& be, const swap::graph& g, int op) : cpu_kernel(be, g, op) {
    if (this->op().inputs.size() != 2 || in_shape(0) != in_shape(1) || in_shape(0) != out_shape(0))
      bad(this->op(), fmt::format("expected two inputs of equal shape, got [{}] and [{}]", fmt::join(in_shape(0), ","),
                                  fmt::join(in_shape(this->op().inputs.size() > 1 ? 1 : 0), ",")));
    const md& a = in_md(0);
    b_ = relayout(be, in_md(1), a, what("b"));
    db_ = relayout(be, a, in_md(1), what("db"));
    pd_ = dnnl::binary::primitive_desc(dnnl::binary::desc(dnnl::algorithm::binary_add, a, a, a), be.eng);
    prim_ = dnnl::binary(pd_);
    set_out_md(0, a);
  }
  void forward(const forward_args& a) override {
    be_.set_threads();
    exec(prim_, {{DNNL_ARG_SRC_0, mem(in_md(0), a.in[0])},
                 {DNNL_ARG_SRC_1, mem(in_md(0), b_.in(a.in[1]))},
                 {DNNL_ARG_DST, mem(in_md(0), a.out[0])}});
    wait();
  }
  void backward(const backward_args& a) override {
    be_.set_threads();
    if (a.d_in[0]) parallel_copy(a.d_in[0], a.d_out[0], in_md(0).get_size());
    if (a.d_in[1]) db_.run(a.d_out[0], a.d_in[1]);
  }
  bool backward_reads_input(int) const override { return false; }
  bool backward_reads_output(int) const override { return false; }

 private:
  relayout b_, db_;
  dnnl::binary::primitive_desc pd_;
  dnnl::binary prim_;
};

// ---------------------------------------------------------------------------------------------
// Concatenation along an axis; the output is plain so that the gradient splits into plain views.
class concat final : public cpu_kernel {
 public:
  concat(cpu_backend& be, const swap::graph& g, int op) : cpu_kernel(be, g, op) {
    const auto& o = this->op();
    const auto& ys = out_shape(0);
    axis_ = static_cast<int>(o.attr.axis < 0 ? static_cast<std::int64_t>(ys.size()) + o.attr.axis : o.attr.axis);
    std::vector<md> srcs;
    const md y = plain_md(ys);
    dims offset(ys.size(), 0);
    for (std::size_t i = 0; i < o.inputs.size(); ++i) {
      srcs.push_back(in_md(static_cast<int>(i)));
      const auto& s = in_shape(static_cast<int>(i));
      const md view = y.submemory_desc(dims(s.begin(), s.end()), offset);
      split_.emplace_back(be, view, in_md(static_cast<int>(i)), what("dx"));
      offset[static_cast<std::size_t>(axis_)] += s[static_cast<std::size_t>(axis_)];
    }
    if (offset[static_cast<std::size_t>(axis_)] != ys[static_cast<std::size_t>(axis_)])
      bad(o, "input extents along the axis do not add up to the output's");
    pd_ = dnnl::concat::primitive_desc(y, axis_, srcs, be.eng);
    prim_ = dnnl::concat(pd_);
    set_out_md(0, y);
  }
  void forward(const forward_args& a) override {
    be_.set_threads();
    std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_DST, mem(pd_.dst_desc(), a.out[0])}};
    for (std::size_t i = 0; i < a.in.size(); ++i)
      args.emplace(DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i), mem(in_md(static_cast<int>(i)), a.in[i]));
    exec(prim_, args);
    wait();
  }
  void backward(const backward_args& a) override {
    be_.set_threads();
    for (std::size_t i = 0; i < a.d_in.size(); ++i)
      if (a.d_in[i]) split_[i].run(a.d_out[0], a.d_in[i]);
  }
  bool backward_reads_input(int) const override { return false; }
  bool backward_reads_output(int) const override { return false; }

 private:
  int axis_ = 1;
  std::vector<relayout> split_;
  dnnl::concat::primitive_desc pd_;
  dnnl::concat prim_;
};

}  // namespace

std::unique_ptr<kernel> make_reshape(cpu_backend& be, const swap::graph& g, int op) {
  return std::make_unique<reshape>(be, g, op);
}
std::unique_ptr<kernel> make_fused_relu(cpu_backend& be, const swap::graph& g, int op) {
  return std::make_unique<fused_relu>(be, g, op);
}
std::unique_ptr<kernel> make_add(cpu_backend& be, const swap::graph& g, int op) {
  return std::make_unique<add>(be, g, op);
}
std::unique_ptr<kernel> make_concat(cpu_backend& be, const swap::graph& g, int op) {
  return std::make_unique<concat>(be, g, op);
}

}  // namespace toru::train::detail::cpu
