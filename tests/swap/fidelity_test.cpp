// SPDX-License-Identifier: BSD-3-Clause
// Planner fidelity against PyTorch: torchvision models exported by torch.onnx.export at test time
// (tests/swap/torch_models.py) import to the same plans as toru's builders, and the bytes the planner
// says autograd saves match what PyTorch's saved_tensors_hooks sees.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "toru/core/error.hpp"
#include "toru/swap/models.hpp"
#include "toru/swap/onnx_import.hpp"
#include "toru/swap/tune.hpp"

namespace ts = toru::swap;
namespace fs = std::filesystem;

namespace {

// Output of a command, or nullopt when it failed.
std::string run(const std::string& cmd, int* status) {
  std::string out;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, p)) out += buf;
  *status = ::pclose(p);
  return out;
}

class torch_models : public ::testing::Test {
 protected:
  // One directory for the suite: an export (a Python start, slow on a loaded machine) is reused.
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / fmt::format("toru_swap_fidelity_{}", ::getpid());
    fs::create_directories(dir_);
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  void SetUp() override {
    if (!ts::onnx_available()) GTEST_SKIP() << "toru was built without ONNX (libonnx-dev)";
  }
  std::string exported(const std::string& model, int batch, int size, bool fixed = false) {
    const auto path = (dir_ / fmt::format("{}_{}_{}{}.onnx", model, batch, size, fixed ? "_fixed" : "")).string();
    if (fs::exists(path)) return path;
    int status = 0;
    const auto out = run(fmt::format("/usr/bin/python3 {} export {} {} {} {} {} 2>&1", TORU_TORCH_MODELS, model, path,
                                     batch, size, fixed ? "--fixed" : ""),
                         &status);
    if (status != 0) ADD_FAILURE() << "export of " << model << " failed:\n" << out;
    return path;
  }
  std::int64_t pytorch_saved(const std::string& model, int batch, int size) {
    int status = 0;
    const auto out = run(
        fmt::format("/usr/bin/python3 {} saved {} {} {} 2>/dev/null", TORU_TORCH_MODELS, model, batch, size), &status);
    if (status != 0) {
      ADD_FAILURE() << "saved-tensor measurement of " << model << " failed:\n" << out;
      return 0;
    }
    return nlohmann::json::parse(out.substr(out.rfind('{')))["saved_bytes"].get<std::int64_t>();
  }
  static inline fs::path dir_;
};

ts::training_options pytorch_training() {
  ts::training_options t;
  ts::sim_options s;
  ts::apply(ts::memory_profile_preset("pytorch"), t, s);
  return t;
}

ts::tune_options on_device(double gib) {
  ts::tune_options o;
  o.device = ts::device_preset("v100-nvlink2");
  o.device.memory_bytes = static_cast<std::int64_t>(gib * (1 << 30));
  ts::training_options t;
  ts::apply(ts::memory_profile_preset("pytorch"), t, o.sim);
  return o;
}

}  // namespace

// The same model built and imported: same ops in the same order under the builders' names, same
// units, same saved bytes, same plans and the same largest batches.
TEST_F(torch_models, resnet18_import_plans_like_the_builder) {
  const auto path = exported("resnet18", 2, 64);
  const auto imported = ts::import_onnx(path, {.batch = 6});
  const auto built = ts::build_model("resnet18", {.batch = 6, .height = 64, .width = 64});
  ASSERT_EQ(imported.ops.size(), built.ops.size());
  for (std::size_t i = 0; i < built.ops.size(); ++i) {
    EXPECT_EQ(imported.ops[i].type, built.ops[i].type) << "op " << i;
    EXPECT_EQ(imported.tensors[imported.ops[i].outputs[0]].shape, built.tensors[built.ops[i].outputs[0]].shape)
        << "op " << i << " " << built.ops[i].name;
  }
  EXPECT_EQ(imported.parameter_count(), built.parameter_count());
  const auto ti = ts::make_training_graph(imported, pytorch_training());
  const auto tb = ts::make_training_graph(built, pytorch_training());
  EXPECT_EQ(ti.ops.size(), tb.ops.size());  // split weight gradients and add_n alike
  EXPECT_EQ(ts::saved_bytes(ti), ts::saved_bytes(tb));
  for (bool fine : {false, true}) {
    const auto ui = ts::find_units(ti, 64, fine), ub = ts::find_units(tb, 64, fine);
    ASSERT_EQ(ui.size(), ub.size()) << "fine " << fine;
    for (std::size_t u = 0; u < ub.size(); ++u) {
      EXPECT_EQ(ui[u].ops, ub[u].ops);
      EXPECT_EQ(ui[u].bytes, ub[u].bytes);
    }
  }
  const auto o = on_device(1.5);  // the pytorch profile holds 1 GiB of context and workspace
  for (auto s : {ts::strategy::none, ts::strategy::swap, ts::strategy::recompute, ts::strategy::hybrid}) {
    EXPECT_EQ(ts::leanest_peak(ti, s, o), ts::leanest_peak(tb, s, o)) << ts::to_string(s);
    const auto fi = ts::largest_fitting(
        [&](std::int64_t b) { return ts::make_training_graph(ts::rebatch(imported, b), pytorch_training()); }, s, o);
    const auto fb = ts::largest_fitting(
        [&](std::int64_t b) {
          return ts::make_training_graph(ts::build_model("resnet18", {.batch = b, .height = 64, .width = 64}),
                                         pytorch_training());
        },
        s, o);
    EXPECT_GT(fb, 0) << ts::to_string(s);
    EXPECT_EQ(fi, fb) << ts::to_string(s);
  }
}

// Saved-tensor bytes of one training forward pass against torch.autograd.graph.saved_tensors_hooks.
TEST_F(torch_models, saved_bytes_match_pytorch) {
  struct c {
    const char* model;
    int batch, size;
  };
  for (const c& m : {c{"tiny", 3, 16}, c{"resnet18", 2, 64}, c{"mobilenet_v2", 2, 64}, c{"transformer", 3, 16}}) {
    const auto g = ts::import_onnx(exported(m.model, 2, m.size), {.batch = m.batch});
    const auto toru = ts::saved_bytes(ts::make_training_graph(g, pytorch_training()));
    const auto torch = pytorch_saved(m.model, m.batch, m.size);
    ASSERT_GT(torch, 0);
    EXPECT_NEAR(static_cast<double>(toru) / static_cast<double>(torch), 1.0, 0.05)
        << m.model << ": toru " << toru << " bytes, PyTorch " << torch;
  }
}

// Shape arithmetic is folded away, layer norm and GELU come back as one op each, and the graph at
// one batch equals the graph at another rebatched.
TEST_F(torch_models, transformer_imports_folded_and_rebatches) {
  const auto path = exported("transformer", 2, 16);
  const auto g5 = ts::import_onnx(path, {.batch = 5});
  int layernorms = 0, matmuls = 0;
  for (const auto& o : g5.ops) {
    EXPECT_TRUE(o.type != "shape" && o.type != "constant" && o.type != "gather" && o.type != "cast" &&
                o.type != "pow" && o.type != "sqrt")
        << o.name << " (" << o.type << ") was not folded or fused";
    layernorms += o.type == "layernorm";
    matmuls += o.type == "matmul";
  }
  EXPECT_EQ(layernorms, 4);  // two per encoder layer
  EXPECT_EQ(matmuls, 4);     // q k^T and attention x v per layer
  const auto g3 = ts::import_onnx(path, {.batch = 3});
  const auto r3 = ts::rebatch(g5, 3);
  ASSERT_EQ(g3.tensors.size(), r3.tensors.size());
  for (std::size_t t = 0; t < g3.tensors.size(); ++t) {
    EXPECT_EQ(g3.tensors[t].shape, r3.tensors[t].shape) << g3.tensors[t].name;
    EXPECT_EQ(g3.tensors[t].bytes, r3.tensors[t].bytes);
  }
  for (std::size_t i = 0; i < g3.ops.size(); ++i) EXPECT_NEAR(g3.ops[i].flops, r3.ops[i].flops, 1e-6 * g3.ops[i].flops);
  // Batch 3 sequences of 16 tokens, 64 features, into the first layer norm.
  EXPECT_EQ(g3.tensors[g3.ops[0].inputs[0]].shape, (std::vector<std::int64_t>{3, 16, 64}));
}

// A fixed-batch export is rebatched when its batch is a plain leading axis, and refused with a
// message naming the fixed batch otherwise; never silently planned at the exported batch.
// Which outcome each model has is known: the CNN's batch is a plain leading axis; the transformer's
// export bakes the batch into its reshapes.
TEST_F(torch_models, fixed_batch_files_are_rebatched_or_refused) {
  struct expectation {
    const char* model;
    bool rebatched;
  };
  for (const auto& [model, rebatched] : {expectation{"tiny", true}, expectation{"transformer", false}}) {
    const auto dynamic = ts::import_onnx(exported(model, 2, 16), {.batch = 7});
    const auto fixed_path = exported(model, 2, 16, true);
    const auto at_its_batch = ts::import_onnx(fixed_path, {.batch = 2});
    EXPECT_EQ(at_its_batch.tensors[at_its_batch.ops[0].inputs[0]].shape.at(0), 2) << model;
    if (rebatched) {
      const auto g = ts::import_onnx(fixed_path, {.batch = 7});
      ASSERT_EQ(g.tensors.size(), dynamic.tensors.size()) << model;
      for (std::size_t t = 0; t < g.tensors.size(); ++t)
        EXPECT_EQ(g.tensors[t].shape, dynamic.tensors[t].shape) << model << " " << g.tensors[t].name;
    } else {
      try {
        ts::import_onnx(fixed_path, {.batch = 7});
        ADD_FAILURE() << model << ": a fixed batch of 2 was rebatched to 7";
      } catch (const toru::error& e) {
        EXPECT_EQ(e.code(), toru::errc::invalid_argument) << model;
        EXPECT_NE(e.message().find("fixed batch of 2"), std::string::npos) << e.message();
        EXPECT_NE(e.message().find("use --batch 2"), std::string::npos) << e.message();
      }
    }
  }
}
