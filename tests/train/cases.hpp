// SPDX-License-Identifier: BSD-3-Clause
// Small graphs, one per layer (and two whole networks), shared by the PyTorch comparison and the
// finite-difference tests. Awkward sizes on purpose: odd channels, prime extents, batch 1.
//
// Layer cases read their input through `add(image, x)` with a parameter `x`: the gradient of `x`
// is then the gradient with respect to the layer's input, through the public model interface.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "toru/swap/builder.hpp"
#include "toru/swap/models.hpp"

namespace toru::train::test {

namespace sw = toru::swap;
using sw::builder;

struct layer_case {
  std::string name;
  std::function<sw::graph()> make;
};

inline int input_param(builder& b, const std::vector<std::int64_t>& shape) {
  const int img = b.input("image", shape);
  const int x = b.param("x", shape);
  return b.add(img, x);
}

/// An op the builder has no method for (the importer's vocabulary: transpose, slice, gather, ...).
inline int raw_op(builder& b, const std::string& type, std::vector<int> inputs, std::vector<std::int64_t> out,
                  const std::function<void(sw::op_attributes&)>& set = {}) {
  sw::op o;
  o.name = type + "_" + std::to_string(b.g.ops.size());  // the builder names its own ops "add1", ...
  o.type = type;
  o.inputs = std::move(inputs);
  if (set) set(o.attr);
  const int y = b.g.add_tensor(o.name + "/out", std::move(out), sw::dtype::f32, sw::tensor_kind::activation);
  o.outputs = {y};
  b.g.add_op(std::move(o));
  return y;
}

inline sw::graph finish(builder& b, int y, std::int64_t axis = 1) {
  b.loss(y, axis);
  return std::move(b.g);
}

inline std::vector<layer_case> layer_cases() {
  std::vector<layer_case> c;
  c.push_back({"linear", [] {
                 builder b("linear", sw::dtype::f32);
                 return finish(b, b.linear(input_param(b, {3, 7}), 5));
               }});
  c.push_back({"linear_batch1_nobias", [] {
                 builder b("linear_batch1_nobias", sw::dtype::f32);
                 return finish(b, b.linear(input_param(b, {1, 13}), 11, false));
               }});
  c.push_back({"linear_3d", [] {
                 builder b("linear_3d", sw::dtype::f32);
                 return finish(b, b.linear(input_param(b, {2, 3, 5}), 7), -1);
               }});
  c.push_back({"conv_bias", [] {
                 builder b("conv_bias", sw::dtype::f32);
                 return finish(b, b.conv(input_param(b, {2, 5, 11, 13}), 7, {3}, {1}, {1}, {1}, true));
               }});
  c.push_back({"conv_groups_stride", [] {
                 builder b("conv_groups_stride", sw::dtype::f32);
                 return finish(b, b.conv(input_param(b, {2, 6, 9, 9}), 9, {3}, {2}, {1}, {1}, false, 3));
               }});
  c.push_back({"conv_dilation_batch1", [] {
                 builder b("conv_dilation_batch1", sw::dtype::f32);
                 return finish(b, b.conv(input_param(b, {1, 3, 13, 11}), 4, {3}, {1}, {2}, {2}, true));
               }});
  c.push_back({"conv_1x1_stride2", [] {
                 builder b("conv_1x1_stride2", sw::dtype::f32);
                 return finish(b, b.conv(input_param(b, {3, 7, 7, 5}), 5, {1}, {2}, {0}));
               }});
  c.push_back({"conv_depthwise", [] {
                 builder b("conv_depthwise", sw::dtype::f32);
                 return finish(b, b.conv(input_param(b, {2, 5, 7, 7}), 5, {3}, {1}, {1}, {1}, true, 5));
               }});
  c.push_back({"batchnorm", [] {
                 builder b("batchnorm", sw::dtype::f32);
                 return finish(b, b.batchnorm(input_param(b, {3, 5, 7, 7})));
               }});
  c.push_back({"batchnorm_1d", [] {
                 builder b("batchnorm_1d", sw::dtype::f32);
                 return finish(b, b.batchnorm(input_param(b, {5, 3})));
               }});
  c.push_back({"relu", [] {
                 builder b("relu", sw::dtype::f32);
                 return finish(b, b.relu(input_param(b, {2, 3, 5, 7})));
               }});
  c.push_back({"gelu", [] {
                 builder b("gelu", sw::dtype::f32);
                 return finish(b, b.gelu(input_param(b, {2, 3, 5, 7})));
               }});
  c.push_back({"sigmoid", [] {
                 builder b("sigmoid", sw::dtype::f32);
                 return finish(b, b.sigmoid(input_param(b, {2, 3, 5, 7})));
               }});
  // Bounds inside the data's range [-1.5, 1.5], so both the clipped and the passed region are tested.
  c.push_back({"clip", [] {
                 builder b("clip", sw::dtype::f32);
                 const int y = b.elementwise(input_param(b, {2, 3, 5, 7}), "clip", true, false, 1);
                 b.g.ops.back().attr.clip_min = -0.3;
                 b.g.ops.back().attr.clip_max = 0.45;
                 return finish(b, y);
               }});
  c.push_back({"hardswish", [] {
                 builder b("hardswish", sw::dtype::f32);
                 return finish(b, b.elementwise(input_param(b, {2, 3, 5, 7}), "hardswish", true, false, 4));
               }});
  // SiLU fused (what the importer makes of the export), and as torch.onnx exports it (opset < 14):
  // x * sigmoid(x), a fork joined by a product.
  c.push_back({"silu_fused", [] {
                 builder b("silu_fused", sw::dtype::f32);
                 return finish(b, b.elementwise(input_param(b, {2, 3, 5, 7}), "silu", true, false, 5));
               }});
  c.push_back({"silu", [] {
                 builder b("silu", sw::dtype::f32);
                 const int x = input_param(b, {2, 3, 5, 7});
                 return finish(b, b.mul(x, b.sigmoid(x)));
               }});
  // Squeeze-and-excitation's scale: [N, C, 1, 1] broadcast over the image, and a broadcast
  // parameter with fewer axes ([C, 1, W]).
  c.push_back({"mul_broadcast", [] {
                 builder b("mul_broadcast", sw::dtype::f32);
                 const int x = input_param(b, {2, 3, 5, 7});
                 const int s = b.mul(x, b.sigmoid(b.global_avgpool(x)));
                 return finish(b, b.mul(b.param("scale", {3, 1, 7}), s));
               }});
  // Asymmetric, on every axis but the batch, with a non-zero value (F.pad's constant mode).
  c.push_back({"pad", [] {
                 builder b("pad", sw::dtype::f32);
                 return finish(b, b.pad(input_param(b, {2, 3, 5, 7}), {0, 1, 0, 2}, {0, 2, 1, 3}, 0.25));
               }});
  c.push_back({"maxpool", [] {
                 builder b("maxpool", sw::dtype::f32);
                 return finish(b, b.maxpool(input_param(b, {2, 3, 11, 11}), 3, 2, 1));
               }});
  c.push_back({"maxpool_ceil", [] {
                 builder b("maxpool_ceil", sw::dtype::f32);
                 return finish(b, b.maxpool(input_param(b, {1, 3, 7, 7}), 2, 2, 0, true));
               }});
  c.push_back({"avgpool", [] {
                 builder b("avgpool", sw::dtype::f32);
                 return finish(b, b.avgpool(input_param(b, {2, 3, 11, 11}), 3, 2, 1));
               }});
  c.push_back({"global_avgpool", [] {
                 builder b("global_avgpool", sw::dtype::f32);
                 return finish(b, b.flatten(b.global_avgpool(input_param(b, {3, 5, 7, 7}))));
               }});
  c.push_back({"adaptive_avgpool", [] {
                 builder b("adaptive_avgpool", sw::dtype::f32);
                 return finish(b, b.adaptive_avgpool(input_param(b, {2, 3, 5, 7}), {3, 3}));
               }});
  c.push_back({"add_fork", [] {
                 builder b("add_fork", sw::dtype::f32);
                 const int x = input_param(b, {2, 3, 5, 5});
                 return finish(b, b.add(b.relu(x), x));
               }});
  c.push_back({"concat", [] {
                 builder b("concat", sw::dtype::f32);
                 const int x = input_param(b, {2, 3, 5, 5});
                 return finish(b, b.concat({x, b.sigmoid(x)}));
               }});
  c.push_back({"flatten_linear", [] {
                 builder b("flatten_linear", sw::dtype::f32);
                 return finish(b, b.linear(b.flatten(input_param(b, {2, 3, 5, 5})), 7));
               }});
  c.push_back({"layernorm", [] {
                 builder b("layernorm", sw::dtype::f32);
                 return finish(b, b.layernorm(input_param(b, {3, 4, 11})), -1);
               }});
  c.push_back({"softmax", [] {
                 builder b("softmax", sw::dtype::f32);
                 return finish(b, b.softmax(input_param(b, {3, 7})));
               }});
  // Transformer ops (ONNX exports of ViT and nn.TransformerEncoder, opset 13).
  c.push_back({"transpose", [] {
                 builder b("transpose", sw::dtype::f32);
                 return finish(b, raw_op(b, "transpose", {input_param(b, {2, 3, 5, 7})}, {5, 2, 7, 3}, [](auto& a) {
                                 a.perm = {2, 0, 3, 1};
                               }));
               }});
  // Attention's q k^T: both operands carry gradients (the second is a parameter here).
  c.push_back({"matmul_batched", [] {
                 builder b("matmul_batched", sw::dtype::f32);
                 const int x = input_param(b, {2, 3, 5, 4});
                 return finish(b, raw_op(b, "matmul", {x, b.param("k", {2, 3, 4, 6})}, {2, 3, 5, 6}));
               }});
  // A bias [D] first (as torch.onnx exports x @ W^T + b), then a positional embedding [1, S, D].
  c.push_back({"add_broadcast", [] {
                 builder b("add_broadcast", sw::dtype::f32);
                 const int x = input_param(b, {3, 5, 7});
                 const int y = raw_op(b, "add", {b.param("bias", {7}), x}, {3, 5, 7});
                 return finish(b, raw_op(b, "add", {y, b.param("pos", {1, 5, 7})}, {3, 5, 7}), -1);
               }});
  c.push_back({"scale", [] {
                 builder b("scale", sw::dtype::f32);
                 return finish(b, raw_op(b, "scale", {input_param(b, {3, 4, 5})}, {3, 4, 5}, [](auto& a) {
                                 a.scale = 0.35355339;
                                 a.shift = -0.25;
                               }));
               }});
  // The in_proj q/k/v split (step 1) and a strided slice on two axes.
  c.push_back({"slice", [] {
                 builder b("slice", sw::dtype::f32);
                 const int x = input_param(b, {3, 4, 11});
                 const int y = raw_op(b, "slice", {x}, {3, 2, 4}, [](auto& a) {
                   a.axes = {1, 2};
                   a.starts = {1, 3};
                   a.steps = {1, 2};
                 });
                 return finish(b, y);
               }});
  // First-token pooling x[:, 0] (one constant index), and repeated indices whose gradients add.
  c.push_back({"gather_first_token", [] {
                 builder b("gather_first_token", sw::dtype::f32);
                 return finish(b, raw_op(b, "gather", {input_param(b, {3, 5, 7})}, {3, 7}, [](auto& a) {
                                 a.axis = 1;
                                 a.starts = {0};
                               }));
               }});
  c.push_back({"gather_repeated", [] {
                 builder b("gather_repeated", sw::dtype::f32);
                 return finish(b, raw_op(b, "gather", {input_param(b, {3, 5, 7})}, {3, 4, 7}, [](auto& a) {
                                 a.axis = 1;
                                 a.starts = {4, 1, 4, 2};
                               }));
               }});
  // ViT's class token: a [1, 1, D] parameter expanded over the batch and concatenated to the patches.
  c.push_back({"expand_class_token", [] {
                 builder b("expand_class_token", sw::dtype::f32);
                 const int x = input_param(b, {3, 4, 7});
                 const int t = raw_op(b, "expand", {b.param("class_token", {1, 1, 7})}, {3, 1, 7});
                 return finish(b, b.concat({t, x}));
               }});
  c.push_back(
      {"reduce_mean", [] {
         builder b("reduce_mean", sw::dtype::f32);
         return finish(b, raw_op(b, "reduce_mean", {input_param(b, {3, 5, 7})}, {3, 7}, [](auto& a) { a.axes = {1}; }));
       }});
  c.push_back({"reduce_mean_keepdims", [] {
                 builder b("reduce_mean_keepdims", sw::dtype::f32);
                 return finish(b, raw_op(b, "reduce_mean", {input_param(b, {3, 5, 7, 2})}, {1, 5, 1, 2}, [](auto& a) {
                                 a.axes = {0, 2};
                               }));
               }});
  // A bias wider than one summing chunk (130 = 2 x 64 + 2) and a per-sample embedding [N, 1, D]:
  // the sums over outer and middle axes with the last axis kept.
  c.push_back({"add_broadcast_wide", [] {
                 builder b("add_broadcast_wide", sw::dtype::f32);
                 const int x = input_param(b, {2, 3, 130});
                 const int y = raw_op(b, "add", {x, b.param("bias", {130})}, {2, 3, 130});
                 return finish(b, raw_op(b, "add", {b.param("per_sample", {2, 1, 130}), y}, {2, 3, 130}), -1);
               }});
  // The last two axes reduced: each output sums contiguous runs (the class axis 1 stays, for the loss).
  c.push_back({"reduce_mean_last_axes", [] {
                 builder b("reduce_mean_last_axes", sw::dtype::f32);
                 return finish(b, raw_op(b, "reduce_mean", {input_param(b, {3, 2, 5, 7})}, {3, 2, 1, 1}, [](auto& a) {
                                 a.axes = {2, 3};
                               }));
               }});
  // alpha and beta put both bounds inside the data's range (PyTorch's own is alpha 1/6, beta 1/2).
  c.push_back({"hardsigmoid", [] {
                 builder b("hardsigmoid", sw::dtype::f32);
                 return finish(b, raw_op(b, "hardsigmoid", {input_param(b, {2, 3, 5, 7})}, {2, 3, 5, 7}, [](auto& a) {
                                 a.scale = 0.5;
                                 a.shift = 0.4;
                               }));
               }});
  // Reflect and edge (F.pad's replicate) padding, asymmetric, on the two spatial axes.
  c.push_back({"pad_reflect", [] {
                 builder b("pad_reflect", sw::dtype::f32);
                 return finish(b, raw_op(b, "pad", {input_param(b, {2, 3, 5, 7})}, {2, 3, 8, 11}, [](auto& a) {
                                 a.pad_begin = {0, 0, 2, 1};
                                 a.pad_end = {0, 0, 1, 3};
                                 a.pad_mode = "reflect";
                               }));
               }});
  c.push_back({"pad_edge", [] {
                 builder b("pad_edge", sw::dtype::f32);
                 return finish(b, raw_op(b, "pad", {input_param(b, {2, 3, 5, 7})}, {2, 3, 9, 9}, [](auto& a) {
                                 a.pad_begin = {0, 0, 3, 0};
                                 a.pad_end = {0, 0, 1, 2};
                                 a.pad_mode = "edge";
                               }));
               }});
  // A blocked-layout chain: conv -> bn -> relu -> maxpool -> conv, then global pooling.
  c.push_back({"conv_chain", [] {
                 builder b("conv_chain", sw::dtype::f32);
                 int y = b.relu(b.batchnorm(b.conv(input_param(b, {2, 3, 13, 13}), 17, {3}, {1}, {1})));
                 y = b.conv(b.maxpool(y, 2, 2, 0), 16, {3}, {1}, {1}, {1}, true);
                 return finish(b, b.flatten(b.global_avgpool(y)));
               }});
  // A fork of a blocked-layout tensor (a residual block's input inside a network).
  c.push_back({"blocked_fork", [] {
                 builder b("blocked_fork", sw::dtype::f32);
                 const int y =
                     b.maxpool(b.relu(b.batchnorm(b.conv(input_param(b, {4, 3, 16, 16}), 16, {3}, {1}, {1}))), 3, 2, 1);
                 const int z = b.relu(b.add(b.batchnorm(b.conv(y, 16, {3}, {1}, {1})), y));
                 return finish(b, b.linear(b.flatten(b.global_avgpool(z)), 10));
               }});
  return c;
}

/// torchvision BasicBlock with a downsample branch, then a classifier head.
inline sw::graph resnet_basic_block() {
  builder b("resnet_block", sw::dtype::f32);
  const int x = input_param(b, {2, 8, 9, 9});
  int y = b.relu(b.batchnorm(b.conv(x, 16, {3}, {2}, {1})));
  y = b.batchnorm(b.conv(y, 16, {3}, {1}, {1}));
  const int idn = b.batchnorm(b.conv(x, 16, {1}, {2}, {0}));
  y = b.relu(b.add(y, idn));
  y = b.linear(b.flatten(b.global_avgpool(y)), 10);
  return finish(b, y);
}

}  // namespace toru::train::test
