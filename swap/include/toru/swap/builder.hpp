// SPDX-License-Identifier: BSD-3-Clause
// toru::swap::builder — builds a forward training graph op by op, with each op's shapes, FLOPs and
// saved tensors filled in as the model builders (models.hpp) do; the trainer's tests and benchmarks
// build their small graphs with it, and swap::derive_backward (graph.hpp) adds the backward.
//
//   toru::swap::builder b("mlp", toru::swap::dtype::f32);
//   const int x = b.input("x", {32, 784});
//   const int y = b.linear(b.relu(b.linear(x, 128)), 10);
//   b.loss(y);  // mean softmax cross-entropy against an int32 "labels" input
//   toru::swap::graph g = std::move(b.g);
//
// Not thread-safe on one builder; ids are tensor indices into b.g.tensors.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "toru/swap/graph.hpp"

namespace toru::swap {

using shape_t = std::vector<std::int64_t>;

/// Elements of a tensor of shape s (1 for a scalar, {}).
std::int64_t numel(const shape_t& s);

/// Appends forward ops to a graph; every method returns the id of the op's (first) output tensor.
/// Tensors are [N, C, spatial...] for convolutional layers and [..., features] for linear ones.
class builder {
 public:
  builder(std::string name, dtype type);

  graph g;
  dtype type;

  /// Starts a new natural recompute unit; following ops carry its id.
  void begin_block() { ++block_; }

  int input(const std::string& name, shape_t shape);
  int param(const std::string& name, shape_t shape);
  int conv(int x, std::int64_t out_channels, std::vector<std::int64_t> kernel, std::vector<std::int64_t> stride,
           std::vector<std::int64_t> pad, std::vector<std::int64_t> dilation = {}, bool bias = false,
           std::int64_t groups = 1, const std::string& name = "");
  int batchnorm(int x, const std::string& name = "");
  int relu(int x, const std::string& name = "");
  int sigmoid(int x);
  int gelu(int x);
  int maxpool(int x, std::int64_t k, std::int64_t s, std::int64_t p, bool ceil_mode = false);
  int avgpool(int x, std::int64_t k, std::int64_t s, std::int64_t p, bool ceil_mode = false);
  int adaptive_avgpool(int x, std::vector<std::int64_t> out_spatial);
  int global_avgpool(int x);
  int add(int a, int b);
  /// Elementwise product with NumPy broadcasting (ONNX Mul); both inputs saved.
  int mul(int a, int b);
  /// Constant padding (ONNX Pad, mode constant): `begin`/`end` elements before/after every axis.
  int pad(int x, std::vector<std::int64_t> begin, std::vector<std::int64_t> end, double value = 0);
  int concat(const std::vector<int>& xs);
  int flatten(int x);
  int linear(int x, std::int64_t out_features, bool bias = true, const std::string& name = "");
  int upsample(int x, std::vector<std::int64_t> out_spatial);
  int layernorm(int x);
  int softmax(int x);
  /// Batched product with a given output shape and MAC count; both inputs saved.
  int matmul(int a, int b, shape_t out_shape, double macs);
  /// Generic elementwise op with a fixed saved set ("x", "y" or none) and FLOPs per element.
  int elementwise(int x, const std::string& type, bool save_input, bool save_output, double flops_per_elem);
  /// Dropout with probability p (an executor draws the mask).
  int dropout(int x, double p);
  /// Mean softmax cross-entropy of logits `x` over `class_axis` against an int32 "labels" input
  /// shaped like `x` without that axis.
  int loss(int x, std::int64_t class_axis = 1);

  const shape_t& shape(int t) const { return g.tensors[t].shape; }

 private:
  int emit(op o, std::vector<std::pair<std::string, shape_t>> outs, std::vector<int> save_outputs = {});
  int block_ = 0;
  int counter_ = 0;
};

}  // namespace toru::swap
