// SPDX-License-Identifier: BSD-3-Clause
#include "toru/swap/models.hpp"

#include <functional>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "toru/core/error.hpp"
#include "toru/swap/builder.hpp"

namespace toru::swap {
namespace {

int conv_bn_relu(builder& b, int x, std::int64_t c, std::int64_t k, std::int64_t s, std::int64_t p,
                 std::int64_t d = 1) {
  return b.relu(b.batchnorm(b.conv(x, c, {k}, {s}, {p}, {d})));
}

// torchvision Bottleneck (v1.5).
int bottleneck(builder& b, int x, std::int64_t planes, std::int64_t stride, std::int64_t dilation, bool downsample) {
  b.begin_block();
  int y = conv_bn_relu(b, x, planes, 1, 1, 0);
  y = conv_bn_relu(b, y, planes, 3, stride, dilation, dilation);
  y = b.batchnorm(b.conv(y, planes * 4, {1}, {1}, {0}));
  int idn = x;
  if (downsample) idn = b.batchnorm(b.conv(x, planes * 4, {1}, {stride}, {0}));
  return b.relu(b.add(y, idn));
}

struct resnet_out {
  int low_level;  // layer1 output
  int out;        // layer4 output
};

resnet_out resnet_body(builder& b, int x, const std::vector<int>& blocks, const std::vector<bool>& dilate) {
  b.begin_block();
  int y = conv_bn_relu(b, x, 64, 7, 2, 3);
  y = b.maxpool(y, 3, 2, 1);
  std::int64_t inplanes = 64, dilation = 1;
  const std::int64_t widths[4] = {64, 128, 256, 512};
  int low = -1;
  for (int l = 0; l < 4; ++l) {
    std::int64_t stride = l == 0 ? 1 : 2;
    const std::int64_t previous = dilation;
    if (dilate[l]) {
      dilation *= stride;
      stride = 1;
    }
    for (int i = 0; i < blocks[l]; ++i) {
      const bool first = i == 0;
      y = bottleneck(b, y, widths[l], first ? stride : 1, first ? previous : dilation,
                     first && (stride != 1 || inplanes != widths[l] * 4));
      inplanes = widths[l] * 4;
    }
    if (l == 0) low = y;
  }
  return {low, y};
}

std::int64_t channels(const model_options& o, std::int64_t def) { return o.channels > 0 ? o.channels : def; }
std::int64_t classes(const model_options& o, std::int64_t def) { return o.classes > 0 ? o.classes : def; }

graph resnet(const model_options& o, const std::vector<int>& blocks, const char* name) {
  builder b(name, o.type);
  const int x = b.input("image", {o.batch, channels(o, 3), o.height, o.width});
  auto body = resnet_body(b, x, blocks, {false, false, false, false});
  b.begin_block();
  int y = b.flatten(b.global_avgpool(body.out));
  y = b.linear(y, classes(o, 1000), true, "fc");
  b.loss(y);
  return std::move(b.g);
}

// torchvision BasicBlock (ResNet-18/34).
int basic_block(builder& b, int x, std::int64_t planes, std::int64_t stride, bool downsample) {
  b.begin_block();
  int y = conv_bn_relu(b, x, planes, 3, stride, 1);
  y = b.batchnorm(b.conv(y, planes, {3}, {1}, {1}));
  int idn = x;
  if (downsample) idn = b.batchnorm(b.conv(x, planes, {1}, {stride}, {0}));
  return b.relu(b.add(y, idn));
}

graph resnet_basic(const model_options& o, const std::vector<int>& blocks, const char* name) {
  builder b(name, o.type);
  const int x = b.input("image", {o.batch, channels(o, 3), o.height, o.width});
  b.begin_block();
  int y = conv_bn_relu(b, x, 64, 7, 2, 3);
  y = b.maxpool(y, 3, 2, 1);
  std::int64_t inplanes = 64;
  const std::int64_t widths[4] = {64, 128, 256, 512};
  for (int l = 0; l < 4; ++l)
    for (int i = 0; i < blocks[l]; ++i) {
      const std::int64_t stride = (l > 0 && i == 0) ? 2 : 1;
      y = basic_block(b, y, widths[l], stride, stride != 1 || inplanes != widths[l]);
      inplanes = widths[l];
    }
  b.begin_block();
  y = b.flatten(b.global_avgpool(y));
  y = b.linear(y, classes(o, 1000), true, "fc");
  b.loss(y);
  return std::move(b.g);
}

// Multi-layer perceptron on the flattened image: 256 and 128 hidden units, ReLU.
graph mlp(const model_options& o) {
  builder b("mlp", o.type);
  int y = b.input("image", {o.batch, channels(o, 1), o.height, o.width});
  b.begin_block();
  y = b.flatten(y);
  y = b.relu(b.linear(y, 256));
  y = b.relu(b.linear(y, 128));
  y = b.linear(y, classes(o, 10));
  b.loss(y);
  return std::move(b.g);
}

// Small CNN for Fashion-MNIST (28x28x1): two conv-bn-relu-maxpool stages, then 128 hidden units.
graph fashion_cnn(const model_options& o) {
  builder b("fashion-cnn", o.type);
  int y = b.input("image", {o.batch, channels(o, 1), o.height, o.width});
  b.begin_block();
  y = b.maxpool(conv_bn_relu(b, y, 32, 3, 1, 1), 2, 2, 0);
  b.begin_block();
  y = b.maxpool(conv_bn_relu(b, y, 64, 3, 1, 1), 2, 2, 0);
  b.begin_block();
  y = b.relu(b.linear(b.flatten(y), 128));
  y = b.linear(y, classes(o, 10));
  b.loss(y);
  return std::move(b.g);
}

// LeNet-5 with ReLU and max pooling (the modern reading); padded first conv so 28x28 works.
graph lenet5(const model_options& o) {
  builder b("lenet5", o.type);
  int y = b.input("image", {o.batch, channels(o, 1), o.height, o.width});
  b.begin_block();
  y = b.maxpool(b.relu(b.conv(y, 6, {5}, {1}, {2}, {1}, true)), 2, 2, 0);
  y = b.maxpool(b.relu(b.conv(y, 16, {5}, {1}, {0}, {1}, true)), 2, 2, 0);
  b.begin_block();
  y = b.flatten(y);
  y = b.relu(b.linear(y, 120));
  y = b.relu(b.linear(y, 84));
  y = b.linear(y, classes(o, 10));
  b.loss(y);
  return std::move(b.g);
}

graph vgg16(const model_options& o) {
  builder b("vgg16", o.type);
  int y = b.input("image", {o.batch, channels(o, 3), o.height, o.width});
  const std::vector<std::vector<std::int64_t>> stages = {
      {64, 64}, {128, 128}, {256, 256, 256}, {512, 512, 512}, {512, 512, 512}};
  for (const auto& st : stages) {
    b.begin_block();
    for (auto c : st) y = b.relu(b.conv(y, c, {3}, {1}, {1}, {1}, true));
    y = b.maxpool(y, 2, 2, 0);
  }
  b.begin_block();
  y = b.flatten(b.adaptive_avgpool(y, {7, 7}));
  y = b.relu(b.linear(y, 4096));
  y = b.relu(b.linear(y, 4096));
  y = b.linear(y, classes(o, 1000));
  b.loss(y);
  return std::move(b.g);
}

graph alexnet(const model_options& o) {
  builder b("alexnet", o.type);
  int y = b.input("image", {o.batch, channels(o, 3), o.height, o.width});
  b.begin_block();
  y = b.maxpool(b.relu(b.conv(y, 64, {11}, {4}, {2}, {1}, true)), 3, 2, 0);
  b.begin_block();
  y = b.maxpool(b.relu(b.conv(y, 192, {5}, {1}, {2}, {1}, true)), 3, 2, 0);
  b.begin_block();
  y = b.relu(b.conv(y, 384, {3}, {1}, {1}, {1}, true));
  y = b.relu(b.conv(y, 256, {3}, {1}, {1}, {1}, true));
  y = b.relu(b.conv(y, 256, {3}, {1}, {1}, {1}, true));
  y = b.maxpool(y, 3, 2, 0);
  b.begin_block();
  y = b.flatten(b.adaptive_avgpool(y, {6, 6}));
  y = b.relu(b.linear(y, 4096));
  y = b.relu(b.linear(y, 4096));
  y = b.linear(y, classes(o, 1000));
  b.loss(y);
  return std::move(b.g);
}

// torchvision Inception (its "5x5" branch uses a 3x3 kernel).
int inception(builder& b, int x, std::int64_t c1, std::int64_t c3r, std::int64_t c3, std::int64_t c5r, std::int64_t c5,
              std::int64_t pp) {
  b.begin_block();
  const int b1 = conv_bn_relu(b, x, c1, 1, 1, 0);
  const int b2 = conv_bn_relu(b, conv_bn_relu(b, x, c3r, 1, 1, 0), c3, 3, 1, 1);
  const int b3 = conv_bn_relu(b, conv_bn_relu(b, x, c5r, 1, 1, 0), c5, 3, 1, 1);
  const int b4 = conv_bn_relu(b, b.maxpool(x, 3, 1, 1, true), pp, 1, 1, 0);
  return b.concat({b1, b2, b3, b4});
}

graph googlenet(const model_options& o) {
  builder b("googlenet", o.type);
  int y = b.input("image", {o.batch, 3, o.height, o.width});
  b.begin_block();
  y = b.maxpool(conv_bn_relu(b, y, 64, 7, 2, 3), 3, 2, 0, true);
  y = conv_bn_relu(b, y, 64, 1, 1, 0);
  y = b.maxpool(conv_bn_relu(b, y, 192, 3, 1, 1), 3, 2, 0, true);
  y = inception(b, y, 64, 96, 128, 16, 32, 32);
  y = inception(b, y, 128, 128, 192, 32, 96, 64);
  y = b.maxpool(y, 3, 2, 0, true);
  y = inception(b, y, 192, 96, 208, 16, 48, 64);
  y = inception(b, y, 160, 112, 224, 24, 64, 64);
  y = inception(b, y, 128, 128, 256, 24, 64, 64);
  y = inception(b, y, 112, 144, 288, 32, 64, 64);
  y = inception(b, y, 256, 160, 320, 32, 128, 128);
  y = b.maxpool(y, 2, 2, 0, true);
  y = inception(b, y, 256, 160, 320, 32, 128, 128);
  y = inception(b, y, 384, 192, 384, 48, 128, 128);
  b.begin_block();
  y = b.flatten(b.global_avgpool(y));
  y = b.linear(y, 1000);
  b.loss(y);
  return std::move(b.g);
}

graph unet3d(const model_options& o) {
  builder b("unet3d", o.type);
  const std::int64_t d = o.depth > 0 ? o.depth : o.height;
  for (auto e : {d, o.height, o.width})
    if (e % 8 != 0)
      throw error(errc::invalid_argument,
                  fmt::format("unet3d input: expected extents divisible by 8 (three 2x poolings), got {}x{}x{}", d,
                              o.height, o.width));
  int y = b.input("image", {o.batch, 4, d, o.height, o.width});
  auto block = [&](int x, std::int64_t c) { return b.relu(b.conv(x, c, {3}, {1}, {1}, {1}, true)); };
  const int depth = 4;
  const std::int64_t base = 32;
  std::vector<int> skips;
  for (int l = 0; l < depth; ++l) {
    b.begin_block();
    y = block(y, base << l);
    y = block(y, (base << l) * 2);
    if (l < depth - 1) {
      skips.push_back(y);
      y = b.maxpool(y, 2, 2, 0);
    }
  }
  for (int l = depth - 2; l >= 0; --l) {
    b.begin_block();
    const auto& s = b.shape(skips[l]);
    y = b.upsample(y, {s[2], s[3], s[4]});
    y = b.concat({y, skips[l]});
    y = block(y, s[1]);
    y = block(y, s[1]);
  }
  b.begin_block();
  y = b.sigmoid(b.conv(y, 3, {1}, {1}, {0}, {1}, true));
  b.loss(y);
  return std::move(b.g);
}

// Isensee et al. 2017 (BraTS 2017), as in smatzek/3DUnetCNN unet3d/model/isensee2017.py: the 3D
// U-Net of IBM's TFLMS 3D image-segmentation example. Depth 5, 16 base filters, 4 input channels,
// 4 labels; every convolution block is conv (bias) -> instance norm -> LeakyReLU; residual context
// modules; up-sampling modules (upsample, conv block); localization modules (3x3x3 then 1x1x1 block);
// deep supervision from the three finest levels. Spatial dropout omitted, as in every builder.
graph unet3d_isensee(const model_options& o) {
  builder b("unet3d-isensee", o.type);
  const std::int64_t d = o.depth > 0 ? o.depth : o.height;
  for (auto e : {d, o.height, o.width})
    if (e % 16 != 0)
      throw error(errc::invalid_argument,
                  fmt::format("unet3d-isensee input: expected extents divisible by 16 (four stride-2 convolutions), "
                              "got {}x{}x{}",
                              d, o.height, o.width));
  int y = b.input("image", {o.batch, 4, d, o.height, o.width});
  // Instance norm keeps the batch-norm accounting (saves its input; gamma and beta); LeakyReLU's
  // gradient reads its input (TensorFlow LeakyReluGrad, PyTorch leaky_relu_backward).
  auto block = [&](int x, std::int64_t c, std::int64_t k = 3, std::int64_t s = 1) {
    const int n = b.batchnorm(b.conv(x, c, {k}, {s}, {k / 2}, {1}, true));
    return b.elementwise(n, "leaky_relu", true, false, 1);
  };
  const int depth = 5;
  const std::int64_t base = 16;
  std::vector<int> level_out;
  for (int l = 0; l < depth; ++l) {
    b.begin_block();
    const std::int64_t c = base << l;
    const int in = block(y, c, 3, l == 0 ? 1 : 2);
    y = b.add(in, block(block(in, c), c));
    level_out.push_back(y);
  }
  std::vector<int> seg(3, -1);
  for (int l = depth - 2; l >= 0; --l) {
    b.begin_block();
    const auto& s = b.shape(level_out[l]);
    const int up = block(b.upsample(y, {s[2], s[3], s[4]}), s[1]);
    y = block(block(b.concat({level_out[l], up}), s[1]), s[1], 1);
    if (l < 3) seg[l] = block(y, 4, 1);
  }
  b.begin_block();
  int out = seg[2];
  for (int l = 1; l >= 0; --l) {
    const auto& s = b.shape(seg[l]);
    out = b.add(b.upsample(out, {s[2], s[3], s[4]}), seg[l]);
  }
  b.loss(b.sigmoid(out));
  return std::move(b.g);
}

graph deeplabv3plus(const model_options& o) {
  builder b("deeplabv3plus", o.type);
  const int x = b.input("image", {o.batch, 3, o.height, o.width});
  auto body = resnet_body(b, x, {3, 4, 23, 3}, {false, false, false, true});  // output stride 16
  b.begin_block();
  const int low = conv_bn_relu(b, body.low_level, 48, 1, 1, 0);
  const int f = body.out;
  std::vector<int> branches{conv_bn_relu(b, f, 256, 1, 1, 0)};
  for (std::int64_t r : {6, 12, 18}) branches.push_back(conv_bn_relu(b, f, 256, 3, 1, r, r));
  const auto& fs = b.shape(f);
  const int pooled = b.relu(b.batchnorm(b.conv(b.global_avgpool(f), 256, {1}, {1}, {0})));
  branches.push_back(b.upsample(pooled, {fs[2], fs[3]}));
  int y = conv_bn_relu(b, b.concat(branches), 256, 1, 1, 0);
  b.begin_block();
  const auto& ls = b.shape(low);
  y = b.upsample(y, {ls[2], ls[3]});
  y = conv_bn_relu(b, b.concat({low, y}), 256, 3, 1, 1);
  y = b.conv(y, 21, {1}, {1}, {0}, {1}, true);
  y = b.upsample(y, {o.height, o.width});
  b.loss(y);
  return std::move(b.g);
}

graph transformer(const model_options& o) {
  builder b("transformer", o.type);
  const std::int64_t B = o.batch, S = o.sequence, H = o.hidden, A = o.heads;
  if (H % A != 0)
    throw error(errc::invalid_argument,
                fmt::format("transformer hidden: expected a multiple of heads ({}), got {}", A, H));
  int x = b.input("embeddings", {B, S, H});
  for (std::int64_t l = 0; l < o.layers; ++l) {
    b.begin_block();
    const int h = b.layernorm(x);
    const int q = b.linear(h, H), k = b.linear(h, H), v = b.linear(h, H);
    const double score_macs = static_cast<double>(B * A * S * S * (H / A));
    const int scores = b.matmul(q, k, {B, A, S, S}, score_macs);
    const int p = b.softmax(scores);
    const int ctx = b.matmul(p, v, {B, S, H}, score_macs);
    x = b.add(x, b.linear(ctx, H));
    const int h2 = b.layernorm(x);
    const int m = b.gelu(b.linear(h2, 4 * H));
    x = b.add(x, b.linear(m, H));
  }
  b.begin_block();
  b.loss(b.layernorm(x), -1);
  return std::move(b.g);
}

using builder_fn = std::function<graph(const model_options&)>;
const std::map<std::string, builder_fn, std::less<>>& table() {
  static const std::map<std::string, builder_fn, std::less<>> t = {
      {"resnet50",
       [](const model_options& o) {
         return resnet(o, {3, 4, 6, 3}, "resnet50");
       }},
      {"resnet101",
       [](const model_options& o) {
         return resnet(o, {3, 4, 23, 3}, "resnet101");
       }},
      {"resnet152",
       [](const model_options& o) {
         return resnet(o, {3, 8, 36, 3}, "resnet152");
       }},
      {"resnet18",
       [](const model_options& o) {
         return resnet_basic(o, {2, 2, 2, 2}, "resnet18");
       }},
      {"resnet34",
       [](const model_options& o) {
         return resnet_basic(o, {3, 4, 6, 3}, "resnet34");
       }},
      {"mlp", mlp},
      {"fashion-cnn", fashion_cnn},
      {"lenet5", lenet5},
      {"vgg16", vgg16},
      {"alexnet", alexnet},
      {"googlenet", googlenet},
      {"unet3d", unet3d},
      {"unet3d-isensee", unet3d_isensee},
      {"deeplabv3plus", deeplabv3plus},
      {"transformer", transformer},
  };
  return t;
}

}  // namespace

std::vector<std::string> model_names() {
  std::vector<std::string> n;
  for (const auto& [k, v] : table()) n.push_back(k);
  return n;
}

bool model_is_3d(std::string_view name) { return name == "unet3d" || name == "unet3d-isensee"; }

std::int64_t input_multiple(std::string_view name) {
  if (name == "unet3d-isensee") return 16;
  if (name == "unet3d") return 8;
  if (model_is_sequence(name)) return 64;
  if (name == "mlp") return 1;
  if (name == "fashion-cnn" || name == "lenet5") return 4;
  return 32;
}
bool model_is_sequence(std::string_view name) { return name == "transformer"; }

graph build_model(std::string_view name, const model_options& o) {
  const auto it = table().find(name);
  if (it == table().end())
    throw error(errc::invalid_argument,
                fmt::format("model: expected one of {}, got '{}'", fmt::join(model_names(), ", "), name));
  auto positive = [](std::int64_t v, const char* what) {
    if (v <= 0) throw error(errc::invalid_argument, fmt::format("{}: expected a positive value, got {}", what, v));
  };
  positive(o.batch, "batch");
  positive(o.height, "height");
  positive(o.width, "width");
  if (o.depth < 0) positive(o.depth, "depth");
  positive(o.sequence, "sequence");
  positive(o.hidden, "hidden");
  positive(o.heads, "heads");
  positive(o.layers, "layers");
  if (o.channels < 0) positive(o.channels, "channels");
  if (o.classes < 0) positive(o.classes, "classes");
  return it->second(o);
}

}  // namespace toru::swap
