// SPDX-License-Identifier: BSD-3-Clause
// Builders against published counts, and the derived backward graph against hand derivation.
#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>

#include <stdexcept>

#include "toru/core/error.hpp"
#include "toru/swap/graph.hpp"
#include "toru/swap/models.hpp"

namespace ts = toru::swap;

namespace {

// Multiply-accumulates of the convolution and fully connected layers (the published convention).
double product_macs(const ts::graph& g) {
  double m = 0;
  for (const auto& o : g.ops)
    if (o.type == "conv" || o.type == "linear") m += o.flops / 2;
  return m;
}

const ts::op& find_op(const ts::graph& g, const std::string& name) {
  auto it = std::find_if(g.ops.begin(), g.ops.end(), [&](const ts::op& o) { return o.name == name; });
  if (it == g.ops.end()) throw std::runtime_error("no op named " + name);
  return *it;
}

std::vector<std::string> names(const ts::graph& g, const std::vector<int>& ts_) {
  std::vector<std::string> n;
  for (int t : ts_) n.push_back(g.tensors[t].name);
  return n;
}

// An op from its fields (designated initializers would trip -Wmissing-field-initializers).
ts::op mk(std::string name, std::string type, std::vector<int> in, std::vector<int> out, std::vector<int> saved = {},
          double flops = 0, double backward_flops = 0, bool passthrough = false) {
  ts::op o;
  o.name = std::move(name);
  o.type = std::move(type);
  o.inputs = std::move(in);
  o.outputs = std::move(out);
  o.saved = std::move(saved);
  o.flops = flops;
  o.backward_flops = backward_flops;
  o.grad_passthrough = passthrough;
  return o;
}

}  // namespace

struct published {
  const char* model;
  double params;  // torchvision / reference parameter counts
  double gmacs;   // forward GMAC per 224x224 sample
  double tol;
};

class model_counts : public ::testing::TestWithParam<published> {};

TEST_P(model_counts, match_published) {
  const auto p = GetParam();
  const auto g = ts::build_model(p.model, {.batch = 1});
  EXPECT_EQ(static_cast<double>(g.parameter_count()), p.params) << p.model;
  EXPECT_NEAR(product_macs(g) / 1e9, p.gmacs, p.tol) << p.model;
}

INSTANTIATE_TEST_SUITE_P(
    torchvision, model_counts,
    ::testing::Values(published{"resnet50", 25557032, 4.09, 0.03}, published{"resnet101", 44549160, 7.8, 0.05},
                      published{"resnet152", 60192808, 11.5, 0.1}, published{"vgg16", 138357544, 15.47, 0.03},
                      published{"alexnet", 61100840, 0.71, 0.01}, published{"googlenet", 6624904, 1.5, 0.03}));

TEST(models, transformer_layer_is_12h2_plus_13h) {
  const std::int64_t h = 768, layers = 3;
  const auto g =
      ts::build_model("transformer", {.batch = 2, .sequence = 128, .hidden = h, .heads = 12, .layers = layers});
  EXPECT_EQ(g.parameter_count(), layers * (12 * h * h + 13 * h) + 2 * h);  // + final layer norm
}

TEST(models, activations_scale_with_batch_and_pixels) {
  auto act = [](const ts::graph& g) {
    std::int64_t b = 0;
    for (const auto& t : g.tensors)
      if (t.kind == ts::tensor_kind::activation && t.shape.size() == 4) b += t.bytes;
    return b;
  };
  const auto a = act(ts::build_model("resnet50", {.batch = 1, .height = 448, .width = 448}));
  const auto b = act(ts::build_model("resnet50", {.batch = 3, .height = 448, .width = 448}));
  const auto c = act(ts::build_model("resnet50", {.batch = 1, .height = 896, .width = 896}));
  EXPECT_EQ(b, 3 * a);
  EXPECT_NEAR(static_cast<double>(c) / static_cast<double>(a), 4.0, 0.01);
}

TEST(models, unet3d_and_deeplab_shapes) {
  const auto u = ts::build_model("unet3d", {.batch = 2, .height = 64, .width = 48, .depth = 32});
  const auto& out = u.tensors[u.ops[u.ops.size() - 2].outputs[0]];  // sigmoid before the loss
  EXPECT_EQ(out.shape, (std::vector<std::int64_t>{2, 3, 32, 64, 48}));
  const auto d = ts::build_model("deeplabv3plus", {.batch = 1, .height = 512, .width = 512});
  const auto& logits = d.tensors[d.ops[d.ops.size() - 2].outputs[0]];
  EXPECT_EQ(logits.shape, (std::vector<std::int64_t>{1, 21, 512, 512}));
}

// Isensee et al. 2017 as in smatzek/3DUnetCNN: parameters counted by hand from the layer list
// (conv k^3*cin*cout + cout bias, instance norm 2*c): encoder 5 levels x 3 blocks, decoder 4 levels
// x (up-sampling block, 3x3x3 and 1x1x1 localization blocks), 3 segmentation 1x1x1 blocks.
TEST(models, unet3d_isensee_structure) {
  const auto u = ts::build_model("unet3d-isensee", {.batch = 2, .height = 64, .width = 48, .depth = 32});
  EXPECT_EQ(u.parameter_count(), 8'269'700);
  const auto& out = u.tensors[u.ops[u.ops.size() - 2].outputs[0]];  // sigmoid before the loss
  EXPECT_EQ(out.shape, (std::vector<std::int64_t>{2, 4, 32, 64, 48}));
  auto count = [&](const char* type) {
    return std::count_if(u.ops.begin(), u.ops.end(), [&](const ts::op& o) { return o.type == type; });
  };
  EXPECT_EQ(count("conv"), 30);
  EXPECT_EQ(count("leaky_relu"), 30);
  EXPECT_EQ(count("concat"), 4);
  EXPECT_EQ(count("upsample"), 6);  // 4 decoder levels + 2 deep-supervision
  EXPECT_EQ(count("add"), 7);       // 5 residual context modules + 2 deep-supervision sums
  EXPECT_THROW(ts::build_model("unet3d-isensee", {.height = 72, .width = 72}), toru::error);  // not / 16
  EXPECT_EQ(ts::input_multiple("unet3d-isensee"), 16);
  EXPECT_TRUE(ts::model_is_3d("unet3d-isensee"));
}

TEST(models, bad_input_is_rejected) {
  EXPECT_THROW(ts::build_model("resnet9000", {}), toru::error);
  EXPECT_THROW(ts::build_model("resnet50", {.batch = 0}), toru::error);
  EXPECT_THROW(ts::build_model("resnet50", {.height = -224}), toru::error);
  EXPECT_THROW(ts::build_model("unet3d", {.height = 100, .width = 100}), toru::error);  // not divisible by 8
  EXPECT_THROW(ts::build_model("alexnet", {.height = 16, .width = 16}), toru::error);   // below the window
  try {
    ts::build_model("nosuch", {});
    ADD_FAILURE() << "no error for an unknown model";
  } catch (const toru::error& e) {
    EXPECT_NE(e.message().find("resnet50"), std::string::npos) << "error should list the known models";
  }
}

// x[4,8] -> fc1 -> relu -> fc2 -> loss, derived by hand.
TEST(training_graph, mlp_matches_hand_derivation) {
  ts::graph g;
  g.name = "mlp";
  const auto f32 = ts::dtype::f32;
  const int x = g.add_tensor("x", {4, 8}, f32, ts::tensor_kind::input);
  const int w1 = g.add_tensor("fc1/weight", {16, 8}, f32, ts::tensor_kind::parameter);
  const int h = g.add_tensor("fc1/out", {4, 16}, f32, ts::tensor_kind::activation);
  const int r = g.add_tensor("relu/out", {4, 16}, f32, ts::tensor_kind::activation);
  const int w2 = g.add_tensor("fc2/weight", {3, 16}, f32, ts::tensor_kind::parameter);
  const int y = g.add_tensor("fc2/out", {4, 3}, f32, ts::tensor_kind::activation);
  const int lab = g.add_tensor("labels", {4, 3}, f32, ts::tensor_kind::input);
  const int l = g.add_tensor("loss/out", {1}, f32, ts::tensor_kind::activation);
  g.add_op(mk("fc1", "linear", {x, w1}, {h}, {x, w1}, 2 * 4 * 8 * 16, 4 * 4 * 8 * 16, false));
  g.add_op(mk("relu", "relu", {h}, {r}, {r}, 64, 128, false));
  g.add_op(mk("fc2", "linear", {r, w2}, {y}, {r, w2}, 2 * 4 * 16 * 3, 4 * 4 * 16 * 3, false));
  g.add_op(mk("loss", "loss", {y, lab}, {l}, {y, lab}, 60, 60, false));
  // One op per gradient (split_weight_grad = false).
  const auto one = ts::make_training_graph(g, {.split_weight_grad = false});
  ASSERT_EQ(one.ops.size(), 4u + 4u + 2u);
  const auto& g2one = find_op(one, "grad/fc2");
  EXPECT_EQ(names(one, g2one.inputs), (std::vector<std::string>{"dfc2/out", "relu/out", "fc2/weight"}));
  EXPECT_EQ(names(one, g2one.outputs), (std::vector<std::string>{"drelu/out", "dfc2/weight"}));
  EXPECT_DOUBLE_EQ(g2one.flops, 4.0 * 4 * 16 * 3);
  // Default: fc2's weight and data gradients are two ops, weight first; fc1 has only a weight gradient.
  const auto t = ts::make_training_graph(g);
  ASSERT_EQ(t.ops.size(), 4u + 5u + 2u);
  const auto& gl = find_op(t, "grad/loss");
  EXPECT_EQ(names(t, gl.inputs), (std::vector<std::string>{"fc2/out", "labels"}));
  EXPECT_EQ(names(t, gl.outputs), (std::vector<std::string>{"dfc2/out"}));
  const auto& w2g = find_op(t, "grad_weight/fc2");
  EXPECT_EQ(names(t, w2g.inputs), (std::vector<std::string>{"dfc2/out", "relu/out"}));
  EXPECT_EQ(names(t, w2g.outputs), (std::vector<std::string>{"dfc2/weight"}));
  EXPECT_DOUBLE_EQ(w2g.flops, 2.0 * 4 * 16 * 3);
  const auto& g2 = find_op(t, "grad/fc2");
  EXPECT_EQ(names(t, g2.inputs), (std::vector<std::string>{"dfc2/out", "fc2/weight"}));
  EXPECT_EQ(names(t, g2.outputs), (std::vector<std::string>{"drelu/out"}));
  EXPECT_DOUBLE_EQ(g2.flops, 2.0 * 4 * 16 * 3);
  ASSERT_EQ(g2.control_inputs.size(), 1u);
  EXPECT_EQ(t.ops[g2.control_inputs[0]].name, "grad_weight/fc2");
  const auto& gr = find_op(t, "grad/relu");
  EXPECT_EQ(names(t, gr.inputs), (std::vector<std::string>{"drelu/out", "relu/out"}));
  EXPECT_EQ(names(t, gr.outputs), (std::vector<std::string>{"dfc1/out"}));
  const auto& g1 = find_op(t, "grad/fc1");
  EXPECT_EQ(names(t, g1.inputs), (std::vector<std::string>{"dfc1/out", "x", "fc1/weight"}));
  EXPECT_EQ(names(t, g1.outputs), (std::vector<std::string>{"dfc1/weight"}));  // x needs no gradient
  EXPECT_DOUBLE_EQ(g1.flops, 2.0 * 4 * 8 * 16);                                // dW only: half
  const auto& u2 = find_op(t, "update/fc2");
  EXPECT_EQ(u2.cat, ts::category::update);
  EXPECT_EQ(names(t, u2.inputs), (std::vector<std::string>{"fc2/weight", "dfc2/weight"}));
  EXPECT_EQ(t.tensors[r].grad, find_op(t, "grad/fc2").outputs[0]);
}

// x -> conv1 -> relu -> conv2 -> add(relu, conv2) -> loss: the fork gets an add_n, the add passes
// its gradient through.
TEST(training_graph, residual_cnn_accumulates_fork_gradient) {
  ts::graph g;
  const auto f32 = ts::dtype::f32;
  const int x = g.add_tensor("x", {1, 3, 5, 5}, f32, ts::tensor_kind::input);
  const int w1 = g.add_tensor("w1", {4, 3, 3, 3}, f32, ts::tensor_kind::parameter);
  const int c1 = g.add_tensor("c1", {1, 4, 5, 5}, f32, ts::tensor_kind::activation);
  const int r = g.add_tensor("r", {1, 4, 5, 5}, f32, ts::tensor_kind::activation);
  const int w2 = g.add_tensor("w2", {4, 4, 3, 3}, f32, ts::tensor_kind::parameter);
  const int c2 = g.add_tensor("c2", {1, 4, 5, 5}, f32, ts::tensor_kind::activation);
  const int s = g.add_tensor("s", {1, 4, 5, 5}, f32, ts::tensor_kind::activation);
  const int lab = g.add_tensor("labels", {1, 4, 5, 5}, f32, ts::tensor_kind::input);
  const int l = g.add_tensor("l", {1}, f32, ts::tensor_kind::activation);
  g.add_op(mk("conv1", "conv", {x, w1}, {c1}, {x, w1}, 0, 0, false));
  g.add_op(mk("relu", "relu", {c1}, {r}, {r}, 0, 0, false));
  g.add_op(mk("conv2", "conv", {r, w2}, {c2}, {r, w2}, 0, 0, false));
  g.add_op(mk("add", "add", {r, c2}, {s}, {}, 0, 0, true));
  g.add_op(mk("loss", "loss", {s, lab}, {l}, {s, lab}, 0, 0, false));
  const auto t = ts::make_training_graph(g);
  const auto& wc2 = find_op(t, "grad_weight/conv2");
  EXPECT_EQ(names(t, wc2.inputs), (std::vector<std::string>{"ds", "r"}));  // dc2 is ds itself
  const auto& gc2 = find_op(t, "grad/conv2");
  EXPECT_EQ(names(t, gc2.inputs), (std::vector<std::string>{"ds", "w2"}));
  EXPECT_TRUE(std::none_of(t.ops.begin(), t.ops.end(), [](const ts::op& o) {
    return o.name == "grad_weight/conv1";
  }));  // x needs no gradient: one op
  const auto& acc = find_op(t, "add_n/r");
  EXPECT_EQ(acc.inputs.size(), 2u);
  EXPECT_EQ(names(t, acc.outputs), (std::vector<std::string>{"dr"}));
  const auto& gr = find_op(t, "grad/relu");
  EXPECT_EQ(gr.inputs[0], acc.outputs[0]);
  EXPECT_EQ(t.tensors[r].grad, acc.outputs[0]);
  EXPECT_EQ(std::count_if(t.ops.begin(), t.ops.end(), [](const ts::op& o) { return o.cat == ts::category::update; }),
            2);
  EXPECT_THROW(ts::make_training_graph(t), toru::error);  // not a forward graph
}

TEST(training_graph, needs_a_loss) {
  ts::graph g;
  const int x = g.add_tensor("x", {2, 2}, ts::dtype::f32, ts::tensor_kind::input);
  const int y = g.add_tensor("y", {2, 2}, ts::dtype::f32, ts::tensor_kind::activation);
  g.add_op(mk("relu", "relu", {x}, {y}, {}, 0, 0, false));
  EXPECT_THROW(ts::make_training_graph(g), toru::error);
}

TEST(graph, rejects_malformed_ops) {
  ts::graph g;
  const int x = g.add_tensor("x", {2, 2}, ts::dtype::f32, ts::tensor_kind::input);
  EXPECT_THROW(g.add_tensor("bad", {2, 0}, ts::dtype::f32, ts::tensor_kind::activation), toru::error);
  EXPECT_THROW(g.add_op(mk("a", "", {x + 7}, {})), toru::error);
  const int y = g.add_tensor("y", {2, 2}, ts::dtype::f32, ts::tensor_kind::activation);
  g.add_op(mk("a", "", {x}, {y}));
  EXPECT_THROW(g.add_op(mk("b", "", {x}, {y})), toru::error);  // y produced twice
  EXPECT_EQ(g.tensors[y].bytes, 16);
}

// PyTorch's batch norm saves its batch mean and inverse standard deviation: one float per channel
// each, two more outputs of the op, read by its gradient.
TEST(training_graph, batchnorm_stats_are_saved_per_channel) {
  const auto g = ts::build_model("resnet50", {.batch = 2});
  const auto plain = ts::make_training_graph(g);
  const auto with = ts::make_training_graph(g, {.batchnorm_stats = true});
  std::int64_t channels = 0;
  for (const auto& o : with.ops) {
    if (o.cat != ts::category::forward || o.type != "batchnorm") continue;
    ASSERT_EQ(o.outputs.size(), 3u) << o.name;
    const auto c = with.tensors[o.outputs[0]].shape.at(1);
    for (int k : {1, 2}) {
      EXPECT_EQ(with.tensors[o.outputs[k]].shape, (std::vector<std::int64_t>{c}));
      EXPECT_NE(std::find(o.saved.begin(), o.saved.end(), o.outputs[k]), o.saved.end());
    }
    channels += c;
  }
  EXPECT_GT(channels, 0);
  EXPECT_EQ(ts::saved_bytes(with) - ts::saved_bytes(plain), 2 * 4 * channels);
}
