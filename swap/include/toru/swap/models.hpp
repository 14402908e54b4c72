// SPDX-License-Identifier: BSD-3-Clause
// Forward-graph builders for the models the planner is checked on.
//
// Every op carries the attributes an executor needs (op_attributes) and every parameter its
// PyTorch-default initialisation; the loss is softmax cross-entropy against int32 labels ([N] for
// classifiers). Trainer-sized models: "mlp" (flatten, 256, 128, classes), "fashion-cnn" (two
// conv3x3-bn-relu-maxpool stages of 32 and 64 channels, a 128-unit hidden layer; for 28x28x1),
// "lenet5" (ReLU/max-pool LeNet-5), "resnet18"/"resnet34" (torchvision BasicBlock ResNets).
//
// Layer definitions follow the public reference implementations: ResNet-50/101/152 and VGG-16,
// AlexNet, GoogLeNet from torchvision (ResNet v1.5: stride on the 3x3 conv); 3D U-Net from
// ellisdg/3DUnetCNN (depth 4, 32 base filters, 4 input channels, 3 labels, no batch norm) and the
// Isensee et al. 2017 variant of IBM's TFLMS example, smatzek/3DUnetCNN ("unet3d-isensee": depth 5,
// 16 base filters, instance norm, LeakyReLU, residual context modules, deep supervision);
// DeepLabV3+ from VainF/DeepLabV3Plus-Pytorch (ResNet-101 backbone, output stride 16, 21 classes);
// a pre-LN transformer block stack (BERT-base shapes by default, no embedding or LM head). Dropout is
// omitted (no parameters, negligible memory in these accounts). Every builder appends a `loss` op.
//
// Pure functions; thread-safe.
//
//   auto g = toru::swap::build_model("resnet152", {.batch = 4, .height = 1024, .width = 1024});
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "toru/swap/graph.hpp"

namespace toru::swap {

struct model_options {
  std::int64_t batch = 1;
  std::int64_t height = 224;  // image height; 3D U-Net: also the depth unless `depth` is set
  std::int64_t width = 224;
  std::int64_t depth = 0;  // 3D U-Net only; 0 means equal to height
  dtype type = dtype::f32;
  std::int64_t channels =
      0;                     // image channels; 0: the model's own (3 for ImageNet models, 1 for mlp/fashion-cnn/lenet5)
  std::int64_t classes = 0;  // classifier outputs; 0: the model's own (1000, or 10 for mlp/fashion-cnn/lenet5)
  // transformer only
  std::int64_t sequence = 512;
  std::int64_t hidden = 768;
  std::int64_t heads = 12;
  std::int64_t layers = 12;
};

/// Names accepted by build_model.
std::vector<std::string> model_names();
/// Whether the model's input is 3-D (voxels) — 3D U-Net.
bool model_is_3d(std::string_view name);
/// Whether the model takes a sequence rather than an image (transformer).
bool model_is_sequence(std::string_view name);
/// Granularity of the input extent the model accepts and --max-input steps by: 8 (3D U-Net, three
/// poolings), 16 (unet3d-isensee, four stride-2 convolutions), 64 tokens (transformer), 32 pixels.
std::int64_t input_multiple(std::string_view name);

/// Builds the forward graph. Throws toru::error (invalid_argument) for an unknown name, a
/// non-positive size, or an input too small for the model's downsampling.
graph build_model(std::string_view name, const model_options& options);

}  // namespace toru::swap
