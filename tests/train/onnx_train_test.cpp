// "Train an ONNX model": torchvision's ResNet-18 exported by torch.onnx.export at test time runs
// through the trainer with the imported weights; eval-mode logits match PyTorch's (norm-wise
// relative error < 1e-5), and a training step runs with finite loss and non-zero gradients.
#include <gtest/gtest.h>

#include <cstdlib>

#include <fmt/format.h>

#include "toru/swap/onnx_import.hpp"
#include "util.hpp"

namespace toru::train::test {
namespace {

namespace fs = std::filesystem;

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

}  // namespace
}  // namespace toru::train::test
