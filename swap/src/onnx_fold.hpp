// SPDX-License-Identifier: BSD-3-Clause
// ONNX import, private: shape arithmetic folded with the static input shape, and the decomposed
// layer norm and GELU of PyTorch's exports fused back into one op each (what PyTorch runs and what
// its autograd saves). Only compiled with ONNX.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace toru::swap::detail {

/// A value known at import time (small integer or float tensor), row-major.
struct constant {
  std::vector<std::int64_t> dims;
  std::vector<double> v;
  int type = onnx::TensorProto_DataType_INT64;
};

/// Runs shape inference, evaluates every node whose inputs are all known (Constant, non-float
/// initializers, Shape of a tensor with an inferred static shape, and Gather, Slice, Cast, Concat,
/// Unsqueeze, Squeeze, Reshape, Transpose, Add, Sub, Mul, Div, Pow, Sqrt, Equal, Where, ConstantOfShape,
/// Expand, Range, Identity over known values), replaces them by initializers and repeats until
/// nothing changes, so a Reshape fed by Shape arithmetic gets a static output shape. Returns the
/// known values by name; the folded nodes are removed from the model. Throws toru::error
/// (invalid_argument) when shape inference fails.
std::map<std::string, constant> fold_constants(onnx::ModelProto& model, const std::string& name);

/// Replaces ReduceMean-Sub-Pow-ReduceMean-Add-Sqrt-Div-Mul-Add chains by LayerNormalization and
/// Div-Erf-Add-Mul-Mul chains by Gelu and x * Sigmoid(x) by Silu (node types of this importer; attributes epsilon /
/// axis).
void fuse_decompositions(onnx::GraphProto& graph, const std::map<std::string, constant>& known);

}  // namespace toru::swap::detail
