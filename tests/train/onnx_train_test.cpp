// SPDX-License-Identifier: BSD-3-Clause
// "Train an ONNX model": torchvision's ResNet-18 exported by torch.onnx.export at test time runs
// through the trainer with the imported weights; eval-mode logits match PyTorch's (norm-wise
// relative error < 1e-5), and a training step runs with finite loss and non-zero gradients.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "toru/swap/onnx_import.hpp"
#include "util.hpp"

namespace toru::train::test {
namespace {

namespace fs = std::filesystem;

constexpr double smooth_tolerance = 5e-5;

TEST(onnx_train, torchvision_resnet18_logits_match_pytorch) {
  if (!swap::onnx_available()) GTEST_SKIP() << "toru was built without ONNX (libonnx-dev)";
  const fs::path dir = fs::temp_directory_path() / fmt::format("toru_onnx_train_{}", ::getpid());
  fs::create_directories(dir);
  const std::int64_t batch = 2, size = 64;
  const auto cmd = fmt::format("/usr/bin/python3 {} {} {} {} 2>&1", TORU_ONNX_EXPORT, dir.string(), batch, size);
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;

  const auto g = swap::import_onnx((dir / "resnet18.onnx").string(), {.batch = batch});
  model m(g, {.seed = 1});
  EXPECT_EQ(m.input_shape(), (std::vector<std::int64_t>{batch, 3, size, size}));
  EXPECT_EQ(m.classes(), 10);
  const auto x = read_raw(dir / "x.bin");
  const auto ref = read_raw(dir / "logits.bin");
  const std::vector<std::int32_t> labels{3, 7};
  m.forward(x, labels, {.training = false});
  const auto logits = m.read_tensor("logits");
  const double err = rel_error(logits, ref);
  EXPECT_LT(err, 1e-5) << "logits relative error " << err;

  const auto r = m.forward(x, labels, {.training = true});
  EXPECT_TRUE(std::isfinite(r.loss));
  m.backward();
  double norm = 0;
  for (float v : m.gradient_data()) norm += static_cast<double>(v) * v;
  EXPECT_GT(norm, 0.0);
  std::error_code ec;
  fs::remove_all(dir, ec);
}

// One training forward and backward of the exported model (mode "train" or "train-smooth" of
// onnx_export.py) against PyTorch's in float64: loss (1e-5 relative), logits and running
// statistics (1e-4), every parameter gradient (grad_tol); `tensors`: parameters plus statistics.
void training_step_matches_pytorch(const char* mode, double grad_tol, const char* net = "resnet18",
                                   std::int64_t size = 64, int tensors = 62 + 40, double loss_tol = 1e-5,
                                   std::int64_t batch = 4) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("toru_onnx_{}_{}_{}", net, mode, ::getpid());
  fs::create_directories(dir);
  const auto cmd =
      fmt::format("/usr/bin/python3 {} {} {} {} {} {} 2>&1", TORU_ONNX_EXPORT, dir.string(), batch, size, mode, net);
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  const auto g = swap::import_onnx((dir / fmt::format("{}.onnx", net)).string(), {.batch = batch});
  model m(g, {.seed = 1});
  const auto x = read_raw(dir / "x.bin");
  const auto lab = read_raw(dir / "labels.bin");  // int32 bits
  std::vector<std::int32_t> labels(lab.size());
  std::memcpy(labels.data(), lab.data(), lab.size() * 4);
  const auto r = m.forward(x, labels, {.training = true});
  m.backward();
  std::ifstream f(dir / "ref.json");
  const auto ref = nlohmann::json::parse(f);
  EXPECT_LT(std::abs(r.loss - ref["loss"].get<double>()) / ref["loss"].get<double>(), loss_tol);
  const auto logits = m.read_tensor(g.tensors[g.ops[g.ops.size() - 2].outputs[0]].name);
  EXPECT_LT(rel_error(logits, read_raw(dir / "logits.bin")), 1e-4);
  int compared = 0;
  double worst = 0;
  const auto grads = m.gradient_data();
  for (const auto& s : m.parameters()) {
    ASSERT_TRUE(ref["files"].contains(s.name)) << s.name;
    const auto want = read_raw(dir / ref["files"][s.name].get<std::string>());
    const double err = rel_error(grads.subspan(s.offset, s.count), want);
    EXPECT_LT(err, grad_tol) << "gradient of " << s.name << ": relative error " << err;
    worst = std::max(worst, err);
    ++compared;
  }
  std::printf("%s %s: worst parameter-gradient relative error %.2e\n", net, mode, worst);
  const auto buf = m.buffer_data();
  for (const auto& s : m.buffers()) {
    ASSERT_TRUE(ref["files"].contains(s.name)) << s.name;
    const auto want = read_raw(dir / ref["files"][s.name].get<std::string>());
    const double err = rel_error(buf.subspan(s.offset, s.count), want);
    EXPECT_LT(err, 1e-4) << s.name << ": relative error " << err;
    ++compared;
  }
  EXPECT_EQ(compared, tensors);
  std::error_code ec;
  fs::remove_all(dir, ec);
}

TEST(onnx_train, torchvision_resnet18_smooth_training_step_matches_pytorch) {
  // ReLU -> Tanh, max pool -> average pool (onnx_export.py, make_smooth): no branch of the
  // forward depends on a value within float32 rounding of a kink, so every gradient must agree.
  // PyTorch's own float32 gradients differ from its float64 ones by up to 1.1e-5 here (rounding
  // through 18 layers of convolution and batch norm); smooth_tolerance allows toru a few times that.
  if (!swap::onnx_available()) GTEST_SKIP() << "toru was built without ONNX (libonnx-dev)";
  training_step_matches_pytorch("train-smooth", smooth_tolerance);
}

TEST(onnx_train, torchvision_resnet18_training_step_matches_pytorch) {
  // torchvision's ResNet-18 as is (ReLU, max pool). Layers from layer4 back to layer1.1 agree to
  // < 1e-5, but layer1.0 and the stem differ by 3e-3..1e-2, and so do PyTorch's own float32
  // gradients from its float64 ones: one ReLU input of layer1.0's residual sum is 4.7e-7 from zero
  // in float64, within float32 rounding (up to 1e-5 there), so float32 takes the other branch,
  // that element's gradient (2e-3 of the tensor's norm) is dropped, and every batch norm upstream
  // spreads the difference over its channel (onnx_export.py, before make_smooth). Not a defect:
  // the smooth test above holds every gradient to smooth_tolerance. Here the tolerance only catches
  // gross errors (a wrong layout or a missing accumulation shows as O(1)).
  if (!swap::onnx_available()) GTEST_SKIP() << "toru was built without ONNX (libonnx-dev)";
  training_step_matches_pytorch("train", 5e-2);
}

TEST(onnx_train, torchvision_mobilenet_v2_training_step_matches_pytorch) {
  // Width 0.25 at 32x32: Conv, BatchNormalization, Clip (ReLU6), Add, Gemm; 158 parameter
  // tensors, 52 batch norms x 2 statistics. Batch 8: the last blocks run at 1x1, where batch norm
  // normalises over the batch alone, and over 4 samples it amplifies float32 rounding so much that
  // PyTorch's own float32 step differs from its float64 one by up to 9e-3 in some gradients (2.3e-4
  // at batch 8; measured 2026-12-06). A wrong Clip gradient (passing it outside the bounds, or at
  // them) shows as O(1e-1).
  if (!swap::onnx_available()) GTEST_SKIP() << "toru was built without ONNX (libonnx-dev)";
  training_step_matches_pytorch("train", 2e-3, "mobilenet_v2", 32, 158 + 104, 1e-5, 8);
}

TEST(onnx_train, torchvision_efficientnet_b0_training_step_matches_pytorch) {
  // 32x32, stochastic depth and dropout off: SiLU exported as Sigmoid and Mul, the squeeze-and-
  // excitation scale [N, C, 1, 1] broadcast by Mul over the image; 213 parameter tensors, 49 batch
  // norms x 2 statistics. Measured: loss 2.1e-5 from float64 (float32 through 81 convolutions and
  // 49 batch norms), worst parameter gradient 6.6e-4.
  if (!swap::onnx_available()) GTEST_SKIP() << "toru was built without ONNX (libonnx-dev)";
  training_step_matches_pytorch("train", 2e-3, "efficientnet_b0", 32, 311, 1e-4);
}

TEST(onnx_train, torchvision_densenet_training_step_matches_pytorch) {
  // torchvision's DenseNet with growth 8, blocks (2, 2), 16 initial features, bottleneck 2, at
  // 32x32: every dense layer reads the Concat of all earlier feature maps (forks whose gradients
  // the executor sums), transitions average-pool; 34 parameter tensors, 11 batch norms x 2
  // statistics. Tolerance as MobileNet-V2's: ReLU inputs within float32 rounding of zero.
  if (!swap::onnx_available()) GTEST_SKIP() << "toru was built without ONNX (libonnx-dev)";
  training_step_matches_pytorch("train", 2e-3, "densenet", 32, 34 + 22);
}

TEST(onnx_train, torchvision_vit_training_step_matches_pytorch) {
  // A tiny torchvision VisionTransformer (32x32, patch 8, 2 layers, 2 heads, width 16, dropout 0),
  // exported in training mode: patch Conv, Transpose, the class token's Expand and Concat, the
  // positional embedding's broadcast Add, LayerNorm and erf-GELU (fused by the importer), the
  // in_proj Slice split, batched MatMuls, the 1/sqrt(d) Div, Softmax, first-token Gather; 32
  // parameter tensors. Smooth (no ReLU, no max pool), so float32 follows float64 closely: worst
  // parameter gradient measured 3.8e-7 (tolerance 1e-5).
  if (!swap::onnx_available()) GTEST_SKIP() << "toru was built without ONNX (libonnx-dev)";
  training_step_matches_pytorch("train", 1e-5, "vit", 32, 32);
}

TEST(onnx_train, transformer_encoder_training_step_matches_pytorch) {
  // A 2-layer nn.TransformerEncoder (batch_first, width 16, 2 heads, feed-forward 32 with ReLU,
  // dropout 0) over [4, 6, 8] features: linear embedding, a learned positional embedding [1, 6, 16]
  // added by broadcasting, mean pooling (ReduceMean over the sequence), a linear head; 29
  // parameter tensors. Worst parameter gradient measured 1.7e-7 (tolerance 1e-5).
  if (!swap::onnx_available()) GTEST_SKIP() << "toru was built without ONNX (libonnx-dev)";
  training_step_matches_pytorch("train", 1e-5, "transformer", 6, 29);
}

TEST(onnx_train, token_embedding_transformer_training_step_matches_pytorch) {
  // The same encoder over int64 token ids through an nn.Embedding (vocabulary 23): Gather from the
  // embedding table by a graph input (ids given to forward() as integral floats); the table's
  // gradient adds the rows of repeated tokens. 28 parameter tensors; worst gradient measured 2.5e-7.
  if (!swap::onnx_available()) GTEST_SKIP() << "toru was built without ONNX (libonnx-dev)";
  training_step_matches_pytorch("train", 1e-5, "tokens", 6, 28);
}

TEST(onnx_train, reflect_edge_pad_and_hardsigmoid_training_step_matches_pytorch) {
  // F.pad in reflect and replicate mode (ONNX Pad reflect / edge, pads computed by the exporter's
  // shape arithmetic and folded), F.hardsigmoid (HardSigmoid, alpha 1/6 read from the node),
  // between convolutions at 13x13; 6 parameter tensors.
  if (!swap::onnx_available()) GTEST_SKIP() << "toru was built without ONNX (libonnx-dev)";
  training_step_matches_pytorch("train", 1e-5, "padsig", 13, 6);
}

}  // namespace
}  // namespace toru::train::test
