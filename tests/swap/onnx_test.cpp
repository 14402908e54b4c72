// SPDX-License-Identifier: BSD-3-Clause
// ONNX import round trip on models the test writes itself with the ONNX protobuf API.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "toru/config.hpp"
#include "toru/core/error.hpp"
#include "toru/swap/onnx_import.hpp"
#include "toru/swap/tune.hpp"

#if TORU_ENABLE_ONNX
#include <onnx/onnx_pb.h>

#include "onnx_wire.hpp"  // swap/src
#endif

namespace ts = toru::swap;

#if TORU_ENABLE_ONNX

namespace {

void add_initializer(onnx::GraphProto* g, const std::string& name, std::vector<std::int64_t> dims) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto_DataType_FLOAT);
  std::int64_t n = 1;
  for (auto d : dims) {
    t->add_dims(d);
    n *= d;
  }
  for (std::int64_t i = 0; i < n; ++i) t->add_float_data(0.01f * static_cast<float>(i % 7));
}

onnx::NodeProto* add_node(onnx::GraphProto* g, const std::string& type, std::vector<std::string> in,
                          std::vector<std::string> out) {
  auto* n = g->add_node();
  n->set_op_type(type);
  n->set_name(type + "_" + out[0]);
  for (auto& i : in) n->add_input(i);
  for (auto& o : out) n->add_output(o);
  return n;
}

void int_attr(onnx::NodeProto* n, const std::string& name, std::vector<std::int64_t> v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  if (v.size() == 1 && name == "transB") {
    a->set_type(onnx::AttributeProto_AttributeType_INT);
    a->set_i(v[0]);
    return;
  }
  a->set_type(onnx::AttributeProto_AttributeType_INTS);
  for (auto x : v) a->add_ints(x);
}

// x[N,3,8,8] -> Conv(4,3x3,pad 1) -> BatchNorm -> Relu -> (Add with itself's conv) -> GlobalAveragePool
// -> Flatten -> Gemm(10) -> y
// `channels`: the conv's outputs; `raw`: initializers as raw_data (as PyTorch writes them).
std::string small_cnn(const std::string& extra_op = "", std::int64_t channels = 4, bool raw = false) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("toru-test");
  auto* opset = m.add_opset_import();
  opset->set_domain("");
  opset->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("small_cnn");
  auto* x = g->add_input();
  x->set_name("x");
  auto* tt = x->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto_DataType_FLOAT);
  tt->mutable_shape()->add_dim()->set_dim_param("N");
  for (int d : {3, 8, 8}) tt->mutable_shape()->add_dim()->set_dim_value(d);
  add_initializer(g, "conv.w", {channels, 3, 3, 3});
  add_initializer(g, "bn.scale", {channels});
  add_initializer(g, "bn.bias", {channels});
  add_initializer(g, "bn.mean", {channels});
  add_initializer(g, "bn.var", {channels});
  add_initializer(g, "fc.w", {10, channels});
  add_initializer(g, "fc.b", {10});
  if (raw)
    for (auto& t : *g->mutable_initializer()) {
      std::string r(static_cast<std::size_t>(t.float_data_size()) * 4, '\0');
      std::memcpy(r.data(), t.float_data().data(), r.size());
      t.clear_float_data();
      t.set_raw_data(r);
    }
  int_attr(add_node(g, "Conv", {"x", "conv.w"}, {"c"}), "pads", {1, 1, 1, 1});
  add_node(g, "BatchNormalization", {"c", "bn.scale", "bn.bias", "bn.mean", "bn.var"}, {"b"});
  add_node(g, "Relu", {"b"}, {"r"});
  add_node(g, "Add", {"r", "c"}, {"s"});
  std::string last = "s";
  if (!extra_op.empty()) {
    add_node(g, extra_op, {"s"}, {"e"});
    last = "e";
  }
  add_node(g, "GlobalAveragePool", {last}, {"p"});
  add_node(g, "Flatten", {"p"}, {"f"});
  int_attr(add_node(g, "Gemm", {"f", "fc.w", "fc.b"}, {"y"}), "transB", {1});
  auto* y = g->add_output();
  y->set_name("y");
  y->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto_DataType_FLOAT);
  std::string bytes;
  m.SerializeToString(&bytes);
  return bytes;
}

const ts::tensor& named(const ts::graph& g, const std::string& n) {
  for (const auto& t : g.tensors)
    if (t.name == n) return t;
  throw std::runtime_error("no tensor " + n);
}

}  // namespace

TEST(onnx, import_infers_shapes_and_derives_training) {
  const std::string path = ::testing::TempDir() + "toru_swap_small_cnn.onnx";
  {
    std::ofstream out(path, std::ios::binary);
    out << small_cnn();
  }
  const auto g = ts::import_onnx(path, {.batch = 5});
  std::remove(path.c_str());
  EXPECT_EQ(named(g, "c").shape, (std::vector<std::int64_t>{5, 4, 8, 8}));
  EXPECT_EQ(named(g, "y").shape, (std::vector<std::int64_t>{5, 10}));
  EXPECT_EQ(named(g, "bn.mean").kind, ts::tensor_kind::input);  // running statistics are not trained
  EXPECT_EQ(g.parameter_count(), 4 * 3 * 9 + 4 + 4 + 10 * 4 + 10);
  ASSERT_EQ(g.ops.size(), 8u);  // 7 nodes + loss
  EXPECT_EQ(g.ops.back().type, "loss");
  EXPECT_DOUBLE_EQ(g.ops[0].flops, 2.0 * 5 * 4 * 8 * 8 * 3 * 9);
  EXPECT_DOUBLE_EQ(g.ops[6].flops, 2.0 * 5 * 10 * 4);
  const auto t = ts::make_training_graph(g);
  int backward = 0, updates = 0;
  for (const auto& o : t.ops) {
    backward += o.cat == ts::category::backward;
    updates += o.cat == ts::category::update;
  }
  // Gradient ops: loss, Gemm as two (weight and data: imported ops carry the builders' names, so
  // the split applies), Flatten, GlobalAveragePool, Relu, BatchNorm, Conv, plus the add_n where the
  // Add's pass-through gradient meets BatchNorm's; updates: Conv, BatchNorm, Gemm.
  EXPECT_EQ(backward, 9);
  for (const char* type : {"conv", "batchnorm", "relu", "add", "avgpool", "flatten", "linear", "loss"})
    EXPECT_TRUE(std::any_of(g.ops.begin(), g.ops.end(), [&](const ts::op& o) { return o.type == type; })) << type;
  EXPECT_EQ(updates, 3);
  ts::tune_options o;
  o.device = ts::device_preset("v100-nvlink2");
  const auto p = ts::tune(t, ts::strategy::automatic, o);
  EXPECT_TRUE(p.result.fits);
}

// The weights are cut out of the wire bytes before parsing (swap/src/onnx_wire.hpp): the stripped
// bytes parse to the same model without the large raw_data, the cut bytes are the originals, and an
// import that keeps values gets them all back.
TEST(onnx, weights_cut_before_parsing_keep_their_values) {
  const auto bytes = small_cnn("", 128, true);
  onnx::ModelProto full;
  ASSERT_TRUE(full.ParseFromString(bytes));
  const auto stripped = toru::swap::detail::strip_initializer_data(bytes, 4096);
  ASSERT_TRUE(stripped.has_value());
  onnx::ModelProto cut;
  ASSERT_TRUE(cut.ParseFromString(stripped->bytes));
  EXPECT_LT(stripped->bytes.size(), bytes.size() - (128 * 27 + 10 * 128) * 4);
  ASSERT_EQ(cut.graph().initializer_size(), full.graph().initializer_size());
  EXPECT_EQ(cut.graph().node_size(), full.graph().node_size());
  EXPECT_EQ(stripped->weights.size(), 2u);  // conv.w (13.8 kB) and fc.w (5.1 kB); the rest < 4 kB
  for (int i = 0; i < full.graph().initializer_size(); ++i) {
    const auto& a = full.graph().initializer(i);
    const auto& b = cut.graph().initializer(i);
    EXPECT_EQ(a.name(), b.name());
    EXPECT_EQ(std::vector<std::int64_t>(a.dims().begin(), a.dims().end()),
              std::vector<std::int64_t>(b.dims().begin(), b.dims().end()));
    const bool big = a.raw_data().size() >= 4096;
    EXPECT_EQ(b.has_raw_data(), !big) << a.name();
    if (big) {
      EXPECT_EQ(stripped->weights.at(a.name()), a.raw_data()) << a.name();
    }
  }
  EXPECT_FALSE(toru::swap::detail::strip_initializer_data("\x0a\xff\xff\xff\xff\x0f").has_value());
  const auto g = ts::import_onnx_bytes(bytes, "raw", {.batch = 3, .values = true});
  for (const auto& t : full.graph().initializer()) {
    std::vector<float> want(t.raw_data().size() / 4);
    std::memcpy(want.data(), t.raw_data().data(), want.size() * 4);
    EXPECT_EQ(named(g, t.name()).init.values, want) << t.name();
  }
  EXPECT_EQ(named(g, "y").shape, (std::vector<std::int64_t>{3, 10}));
}

TEST(onnx, unsupported_ops_are_named) {
  try {
    ts::import_onnx_bytes(small_cnn("HardSwishPlus"), "bad", {.batch = 2});
    FAIL() << "expected an unsupported-op error";
  } catch (const toru::error& e) {
    EXPECT_EQ(e.code(), toru::errc::unsupported);
    EXPECT_NE(e.message().find("HardSwishPlus"), std::string::npos) << e.message();
  }
}

TEST(onnx, malformed_and_missing_files_are_rejected) {
  EXPECT_THROW(ts::import_onnx_bytes("this is not a protobuf \x01\x02\xff", "garbage"), toru::error);
  try {
    ts::import_onnx("/nonexistent/model.onnx");
    FAIL();
  } catch (const toru::error& e) {
    EXPECT_EQ(e.code(), toru::errc::io);
  }
  EXPECT_THROW(ts::import_onnx_bytes(small_cnn(), "b0", {.batch = 0}), toru::error);
}

TEST(onnx, empty_files_and_directories_get_their_own_messages) {
  const auto dir = std::filesystem::temp_directory_path();
  try {
    ts::import_onnx(dir.string());
    ADD_FAILURE() << "a directory was imported";
  } catch (const toru::error& e) {
    EXPECT_NE(e.message().find("got a directory"), std::string::npos) << e.message();
  }
  const auto empty = dir / ("toru_empty_" + std::to_string(::getpid()) + ".onnx");
  { std::ofstream touch(empty); }
  try {
    ts::import_onnx(empty.string());
    ADD_FAILURE() << "an empty file was imported";
  } catch (const toru::error& e) {
    EXPECT_NE(e.message().find("the file is empty"), std::string::npos) << e.message();
  }
  std::filesystem::remove(empty);
}

#else

TEST(onnx, disabled_build_says_so) {
  EXPECT_FALSE(ts::onnx_available());
  try {
    ts::import_onnx("model.onnx");
    FAIL();
  } catch (const toru::error& e) {
    EXPECT_EQ(e.code(), toru::errc::unsupported);
    EXPECT_NE(e.message().find("without ONNX"), std::string::npos);
  }
}

#endif
