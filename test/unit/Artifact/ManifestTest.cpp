//===- ManifestTest.cpp - Tests for the artifact manifest -----------------===//
//
// Expected sizes are worked out by hand from the block layout of Manifest.h,
// [layers of the group][K, V][block size][KV heads][head_dim], and
// the shipped configs (test/data/models/README.md).
//
//===----------------------------------------------------------------------===//
#include "Artifact/Manifest.h"

#include <gtest/gtest.h>

using namespace cohere2c;

namespace {

Manifest manifestFor(const std::string &config, const std::string &precision,
                     const std::string &target = "host") {
  StatusOr<ModelConfig> parsed = ModelConfig::fromFile(
      std::string(COHERE2C_TEST_DATA_DIR) + "/" + config);
  EXPECT_TRUE(parsed.ok()) << parsed.status().message();
  return Manifest::ofConfig(*parsed, target, precision);
}

TEST(ManifestTest, KVBytesPerBlockOfTinyModel) {
  // 8 layers (S S S F S S S F) in 4 groups of 2, 2 KV heads of 32, f32.
  Manifest m = manifestFor("models/tiny-cohere2/config.json", "f32");
  EXPECT_EQ(kvBytesPerBlock(m, 16), 2 * 2 * 16 * 2 * 32 * 4);
  EXPECT_EQ(kvBytesPerBlock(m, 1), 2 * 2 * 1 * 2 * 32 * 4);
}

TEST(ManifestTest, KVBytesPerBlockFollowsPrecision) {
  // Command R7B: 8 full and 24 sliding layers in 4 groups of 8, 8 KV heads
  // of 128, bf16 on cuda (in bf16 and fp8-rowwise alike: FP8 is for the
  // linear weights).
  for (const char *precision : {"bf16", "fp8-rowwise"}) {
    Manifest m = manifestFor("configs/command-r7b.config.json", precision, "cuda");
    EXPECT_EQ(kvBytesPerBlock(m, 16), 8 * 2 * 16 * 8 * 128 * 2);
  }
  // The host keeps its KV cache in f32 for fp8-rowwise.
  Manifest host = manifestFor("configs/command-r7b.config.json", "fp8-rowwise");
  EXPECT_EQ(kvBytesPerBlock(host, 16), 8 * 2 * 16 * 8 * 128 * 4);
}

// A window's layers split into groups of gcd(layers per window) layers,
// ordered by window, then first layer; a model of one window has one group.
TEST(ManifestTest, KVGroupsHoldEqualLayerCounts) {
  Manifest m = manifestFor("models/tiny-cohere2/config.json", "f32");
  ASSERT_EQ(m.kvGroups.size(), 4u);
  EXPECT_EQ(m.kvGroups[0].layers, (std::vector<int64_t>{3, 7}));
  EXPECT_EQ(m.kvGroups[1].layers, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(m.kvGroups[2].layers, (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(m.kvGroups[3].layers, (std::vector<int64_t>{5, 6}));
  EXPECT_EQ(m.kvGroups[0].name(), "full");
  EXPECT_EQ(m.kvGroups[3].name(), "sliding8.2");
  m.config.layerKinds.assign(m.config.numLayers, LayerKind::Sliding);
  m.kvGroups = kvGroupsFor(m.config);
  ASSERT_EQ(m.kvGroups.size(), 1u);
  EXPECT_EQ(m.kvGroups[0].window, 8);
  EXPECT_EQ(m.kvGroups[0].name(), "sliding8");
  EXPECT_EQ(kvBytesPerBlock(m, 16), 8 * 2 * 16 * 2 * 32 * 4);
  // Windows of 2, 2 and 4 layers: gcd 2.
  std::vector<KVGroup> groups = kvGroupsOfWindows(
      {{0, 16}, {1, 0}, {2, 4}, {3, 16}, {4, 4}, {5, 0}, {6, 4}, {7, 4}});
  ASSERT_EQ(groups.size(), 4u);
  EXPECT_EQ(groups[0].window, 0);
  EXPECT_EQ(groups[0].layers, (std::vector<int64_t>{1, 5}));
  EXPECT_EQ(groups[1].window, 4);
  EXPECT_EQ(groups[1].layers, (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(groups[2].layers, (std::vector<int64_t>{6, 7}));
  EXPECT_EQ(groups[2].name(), "sliding4.1");
  EXPECT_EQ(groups[3].window, 16);
  EXPECT_EQ(groups[3].layers, (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(groups[0].name(), "full");
  EXPECT_EQ(groups[3].name(), "sliding16");
  // Coprime counts (1 full layer, 3 sliding): groups of one layer.
  groups = kvGroupsOfWindows({{0, 8}, {1, 8}, {2, 8}, {3, 0}});
  ASSERT_EQ(groups.size(), 4u);
  for (const KVGroup &group : groups)
    EXPECT_EQ(group.layers.size(), 1u);
}

TEST(ManifestTest, WeightsIdRoundTrips) {
  Manifest m = manifestFor("models/tiny-cohere2/config.json", "f32");
  m.weights = WeightLayout::forModel(m.config, DType::F32);
  for (const std::string &id : {std::string("00112233445566778899aabbccddeeff"),
                                std::string()}) {
    m.weightsId = id;
    StatusOr<Manifest> parsed = Manifest::parse(m.toJson(), "tiny.so");
    ASSERT_TRUE(parsed.ok()) << parsed.status().message();
    EXPECT_EQ(parsed->weightsId, id);
  }
}

// An fp8 KV cache (Precision.h) is the host target's so far: its values,
// rounded to e4m3, stay in the f32 pool, so a block takes f32 bytes.
TEST(ManifestTest, KVCacheDtypeRoundTripsAndIsChecked) {
  Manifest m = manifestFor("models/tiny-cohere2/config.json", "f32");
  m.weights = WeightLayout::forModel(m.config, DType::F32);
  m.kvCacheDtype = "fp8";
  StatusOr<Manifest> parsed = Manifest::parse(m.toJson(), "tiny.so");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(parsed->kvCacheDtype, "fp8");
  EXPECT_EQ(kvBytesPerBlock(*parsed, 16), 2 * 2 * 16 * 2 * 32 * 4);

  m.kvCacheDtype = "int8";
  StatusOr<Manifest> unknown = Manifest::parse(m.toJson(), "tiny.so");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().message(),
            "tiny.so: unknown KV cache dtype 'int8', expected auto or fp8");
}

TEST(PrecisionTest, FP8KVCacheIsTheHostTargetsSoFar) {
  StatusOr<Precision> host = Precision::forTarget("fp8-rowwise", "host", "fp8");
  ASSERT_TRUE(host.ok()) << host.status().message();
  EXPECT_TRUE(host->e4m3KVCache);
  EXPECT_EQ(host->kvCache, DType::F32);
  StatusOr<Precision> cuda = Precision::forTarget("bf16", "cuda", "auto");
  ASSERT_TRUE(cuda.ok()) << cuda.status().message();
  EXPECT_FALSE(cuda->e4m3KVCache);
  EXPECT_EQ(cuda->kvCache, DType::BF16);
  StatusOr<Precision> refused = Precision::forTarget("bf16", "cuda", "fp8");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(),
            "KV cache dtype fp8 is for the host target so far: the cuda "
            "target's attention kernels read a bf16 or f32 KV cache");
}

TEST(ManifestTest, RejectsBadWeightsId) {
  Manifest m = manifestFor("models/tiny-cohere2/config.json", "f32");
  m.weights = WeightLayout::forModel(m.config, DType::F32);
  m.weightsId = "not-an-id";
  StatusOr<Manifest> parsed = Manifest::parse(m.toJson(), "tiny.so");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().message(), "tiny.so: manifest weights_id must be "
                                       "empty or 32 lowercase hex digits");
}

// The KV groups travel in the manifest (the compiler reads them from the
// attention ops) and must agree with the config's layer kinds and window.
TEST(ManifestTest, KVGroupsRoundTripAndAgreeWithTheConfig) {
  Manifest m = manifestFor("models/tiny-cohere2/config.json", "f32");
  m.weights = WeightLayout::forModel(m.config, DType::F32);
  StatusOr<Manifest> parsed = Manifest::parse(m.toJson(), "tiny.so");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  ASSERT_EQ(parsed->kvGroups.size(), 4u);
  EXPECT_EQ(parsed->kvGroups[1].window, 8);
  EXPECT_EQ(parsed->kvGroups[1].layers, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(parsed->kvGroups[1].name(), "sliding8.0");
  EXPECT_EQ(parsed->kvGroups[0].layers, (std::vector<int64_t>{3, 7}));
  Manifest wrongWindow = m;
  wrongWindow.kvGroups[1].window = 16;
  StatusOr<Manifest> refused = Manifest::parse(wrongWindow.toJson(), "tiny.so");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(
      refused.status().message(),
      "tiny.so: manifest kv_groups "
      "[{\"layers\":[3,7],\"window\":0},{\"layers\":[0,1],\"window\":"
      "16},{\"layers\":[2,4],\"windo... disagree with the config's groups: "
      "full (2 layers), sliding8.0 (2 layers), sliding8.1 (2 layers), "
      "sliding8.2 (2 layers)");
  Manifest oneGroup = m;
  oneGroup.kvGroups.pop_back();
  refused = Manifest::parse(oneGroup.toJson(), "tiny.so");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(
      refused.status().message().find("disagree with the config's groups"),
      std::string::npos)
      << refused.status().message();
  // A group without layers is no group of the config's.
  Manifest noLayers = m;
  noLayers.kvGroups[0].layers.clear();
  refused = Manifest::parse(noLayers.toJson(), "tiny.so");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(
      refused.status().message(),
      "tiny.so: manifest kv_groups [{\"layers\":[],\"window\":0},{\"layers\":"
      "[0,1],\"window\":8},{\"layers\":[2,4],\"window\":8... disagree with "
      "the config's groups: full (2 layers), sliding8.0 (2 layers), sliding8.1 "
      "(2 layers), sliding8.2 (2 layers)");
}

TEST(ManifestTest, RejectsAnOlderFormatVersion) {
  // Version 12 had no kv_cache_dtype;
  // version 10 had KV groups of unequal size, one pool each; version 9 had
  // exactly two KV groups, the full and the sliding one;
  // version 7 plans named no weight-fill kernels; version 6 kernel steps
  // carried no spec; version 5 plans had one stream;
  // version 4 kernels did not wait for the
  // launch before them, so launching them early would race; version 3 plans
  // had no per-token kinds.
  Manifest m = manifestFor("models/tiny-cohere2/config.json", "f32");
  m.weights = WeightLayout::forModel(m.config, DType::F32);
  std::string text = m.toJson();
  size_t at = text.find("\"format_version\":13");
  ASSERT_NE(at, std::string::npos) << text;
  text.replace(at, 19, "\"format_version\":12");
  StatusOr<Manifest> parsed = Manifest::parse(text, "old.so");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().message(),
            "old.so: manifest format_version must be 13 (compiled by another "
            "version of cohere2c-compile: compile the model again)");
}

TEST(ManifestTest, RejectsJsonNestedTooDeep) {
  // The digest beside a manifest is no defence: whoever edits the manifest
  // can recompute it. 100,000 nested arrays in a field the reader quotes
  // (kv_groups) overflowed the stack.
  Manifest m = manifestFor("models/tiny-cohere2/config.json", "f32");
  m.weights = WeightLayout::forModel(m.config, DType::F32);
  std::string text = m.toJson();
  size_t at = text.find("\"kv_groups\":[");
  ASSERT_NE(at, std::string::npos) << text;
  text.insert(at + 13, std::string(100000, '[') + std::string(100000, ']') +
                           ",");
  StatusOr<Manifest> parsed = Manifest::parse(text, "deep.so");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().message(),
            "deep.so: the manifest: arrays and objects nested more than 64 "
            "levels deep (from byte " +
                std::to_string(at + 13 + 62) + ")");
  StatusOr<LaunchPlan> plan = LaunchPlan::parse(
      R"({"buffers":[)" + std::string(100000, '[') + "]}", "deep.so");
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().message(),
            "deep.so: launch plan: arrays and objects nested more than 64 "
            "levels deep (from byte 74)");
}

// The spec of an embedding kernel, as a manifest writes it.
constexpr const char *kEmbeddingSpec =
    R"("spec":{"family":"embedding","rows":"all","rope":false,"window":0,"out_f32":false,"addend":false,)"
    R"("grid_sync":false,)"
    R"("strides":[0,0,0]})";

// A plan naming a size or an input the runtime does not provide is refused
// on load, naming the entry (the executor would otherwise look up a missing name).
TEST(LaunchPlanTest, RejectsUnknownParameters) {
  auto parse = [](const std::string &step) {
    return LaunchPlan::parse(R"({"buffers":[],"steps":[)" + step + "]}", "x.so");
  };
  std::string kernel = R"({"kind":"kernel","kernel":"k",)" + std::string(kEmbeddingSpec) +
                       R"(,"grid_x":"GRID","grid_y":1,"block_x":32,"args":[ARG]})";
  auto with = [&](const std::string &grid, const std::string &arg) {
    std::string s = kernel;
    s.replace(s.find("GRID"), 4, grid);
    s.replace(s.find("ARG"), 3, arg);
    return s;
  };
  std::string tokensArg =
      R"({"kind":"param","name":"tokens","value":0,"group":0,"column":0,"width":0})";
  EXPECT_TRUE(parse(with("prefill_tiles", tokensArg)).ok());
  EXPECT_TRUE(parse(with("decode_tokens", tokensArg)).ok());
  StatusOr<LaunchPlan> grid = parse(with("lines", tokensArg));
  ASSERT_FALSE(grid.ok());
  EXPECT_NE(grid.status().message().find("malformed launch plan: grid_x \"lines\""),
            std::string::npos)
      << grid.status().message();
  std::string badArg =
      R"({"kind":"param","name":"depth","value":0,"group":0,"column":0,"width":0})";
  StatusOr<LaunchPlan> arg = parse(with("tokens", badArg));
  ASSERT_FALSE(arg.ok());
  EXPECT_NE(arg.status().message().find("malformed launch plan: parameter"), std::string::npos);
  std::string badInput =
      R"({"kind":"input","name":"pool","value":0,"group":0,"column":0,"width":0})";
  StatusOr<LaunchPlan> input = parse(with("tokens", badInput));
  ASSERT_FALSE(input.ok());
  EXPECT_EQ(input.status().message(),
            "x.so: malformed launch plan: argument names no step input: pool");
  StatusOr<LaunchPlan> rows = LaunchPlan::parse(
      R"({"buffers":[{"name":"b0","width":4,"dtype":"F32","rows":"layers"}],"steps":[]})", "x.so");
  ASSERT_FALSE(rows.ok());
  EXPECT_NE(rows.status().message().find("buffer rows \"layers\""), std::string::npos);
  std::string family = with("tokens", "");
  family.replace(family.find("embedding"), 9, "softmax");
  StatusOr<LaunchPlan> spec = parse(family);
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().message(), "x.so: malformed launch plan: kernel spec of k");
}

// Every name a plan uses resolves and every size is in range, or the plan
// is refused on load, naming the entry.
TEST(LaunchPlanTest, CheckRefusesWhatCannotLaunch) {
  Manifest m = manifestFor("models/tiny-cohere2/config.json", "f32");
  m.weights = WeightLayout::forModel(m.config, DType::F32);
  const std::string embedding = "model.embed_tokens.weight";
  auto plan = [&](const std::string &steps) {
    StatusOr<LaunchPlan> p = LaunchPlan::parse(
        R"({"buffers":[{"name":"b0","width":8,"dtype":"F32","rows":"tokens"},)"
        R"({"name":"h","width":128,"dtype":"F32","rows":"rows"},)"
        R"({"name":"b16","width":8,"dtype":"BF16","rows":"tokens"}],"steps":[)" +
            steps + "]}",
        "x.so");
    EXPECT_TRUE(p.ok()) << p.status().message();
    Status s = p->check(m.weights, (int64_t)m.kvGroups.size(), "x.so");
    return s.ok() ? std::string("ok") : s.message();
  };
  auto arg = [](const std::string &kind, const std::string &name,
                int column = 0, int width = 0, int group = 0) {
    return R"({"kind":")" + kind + R"(","name":")" + name +
           R"(","value":0,"group":)" + std::to_string(group) + R"(,"column":)" +
           std::to_string(column) + R"(,"width":)" + std::to_string(width) +
           "}";
  };
  auto kernel = [](const std::string &args, int gridY = 1, int block = 32,
                   const std::string &spec = kEmbeddingSpec) {
    return R"({"kind":"kernel","kernel":"k",)" + spec + R"(,"grid_x":"tokens","grid_y":)" +
           std::to_string(gridY) + R"(,"block_x":)" + std::to_string(block) +
           R"(,"args":[)" + args + "]}";
  };
  EXPECT_EQ(plan(kernel(arg("buffer", "b0") + "," + arg("weight", embedding) + "," +
                        arg("input", "generated_rows"))),
            "ok");
  EXPECT_EQ(plan(kernel(arg("buffer", "b1"))),
            "x.so: launch plan: argument names no buffer: b1");
  EXPECT_EQ(plan(kernel(arg("buffer", "b0", 4, 8))),
            "x.so: launch plan: view [4, 12) of buffer b0 of width 8");
  EXPECT_EQ(plan(kernel(arg("weight", embedding, 0, 512 * 128))), "ok");
  // A kernel whose blocks wait for each other is one grid_y of blocks.
  std::string synced = kernel(arg("buffer", "b0"), 4);
  synced.replace(synced.find(R"("grid_sync":false)"), 17,
                 R"("grid_sync":true)");
  EXPECT_EQ(plan(synced),
            "x.so: launch plan: kernel k synchronizes its grid but is launched "
            "over tokens (only gemv_token, at most 1)");
  synced.replace(synced.find(R"("grid_x":"tokens")"), 17,
                 R"("grid_x":"gemv_token")");
  EXPECT_EQ(plan(synced), "ok");
  EXPECT_NE(plan(kernel(arg("weight", embedding, 0, 1 << 30)))
                .find("a kernel reads 1073741824 elements from weight model.embed_tokens.weight, "
                      "past the weights"),
            std::string::npos);
  EXPECT_EQ(plan(kernel(arg("weight", "model.norm"))),
            "x.so: launch plan: argument names no weight: model.norm");
  EXPECT_EQ(plan(kernel("", 0)), "x.so: launch plan: kernel k launched with grid_y 0 and block_x 32");
  // A SwiGLU kernel compiled for gate rows of 768 (a column range of a
  // merged GEMM's output) given a buffer 8 wide would read the wrong rows.
  const std::string swiglu =
      R"("spec":{"family":"swiglu","rows":"all","rope":false,)"
      R"("window":0,"out_f32":false,"addend":false,"grid_sync":false,"strides":[768,768,0]})";
  EXPECT_EQ(plan(kernel(arg("buffer", "b0") + "," + arg("buffer", "b0") + "," +
                            arg("buffer", "b0"),
                        1, 32, swiglu)),
            "x.so: launch plan: kernel k: argument 0 must be a buffer of row width 768, the "
            "stride it was compiled for");
  EXPECT_EQ(plan(kernel("", 1, 2048)),
            "x.so: launch plan: kernel k launched with grid_y 1 and block_x 2048");
  auto gemm = [&](int64_t n, const std::string &a, const std::string &c = "",
                  const std::string &addend = "") {
    return R"({"kind":"gemm","weight":")" + embedding +
           R"(","weight_scale":"","m":"rows","n":)" + std::to_string(n) +
           R"(,"k":128,"alpha":1.0,"plus":)" +
           (addend.empty() ? "false" : "true") + R"(,"args":[)" +
           arg("buffer", a) + "," +
           (c.empty() ? arg("input", "logits") : arg("buffer", c)) +
           (addend.empty() ? "" : "," + arg("buffer", addend)) + "]}";
  };
  EXPECT_EQ(plan(gemm(m.config.vocabSize, "h")), "ok");
  // A GEMM that adds into c (cuBLASLt's beta = 1): the addend is c's shape
  // and dtype, c itself allowed.
  EXPECT_EQ(plan(gemm(8, "h", "b0", "b0")), "ok");
  EXPECT_EQ(plan(gemm(8, "h", "b0", "b16")),
            "x.so: launch plan: the GEMM of model.embed_tokens.weight: its "
            "addend b16 must be "
            "of the dtype of its output c");
  EXPECT_EQ(plan(gemm(8, "h", "b0", "h")),
            "x.so: launch plan: the GEMM of model.embed_tokens.weight: its "
            "addend must be a "
            "whole buffer of 8 values per row and rows rows, given h");
  // Side-stream steps between a fork and its join; forks not nested.
  const std::string fork = R"({"kind":"fork","args":[]})", join = R"({"kind":"join","args":[]})";
  std::string side = kernel(arg("buffer", "b0"));
  side.replace(side.find(R"("kernel":)"), 0, R"("side":true,)");
  EXPECT_EQ(plan(fork + "," + side + "," + kernel(arg("buffer", "h")) + "," + join), "ok");
  EXPECT_EQ(plan(side), "x.so: launch plan: a side-stream step (k) outside a fork and its join");
  EXPECT_EQ(plan(fork + "," + join + "," + side),
            "x.so: launch plan: a side-stream step (k) outside a fork and its join");
  EXPECT_EQ(plan(fork + "," + side), "x.so: launch plan: a fork without a join");
  EXPECT_EQ(plan(fork + "," + fork + "," + join),
            "x.so: launch plan: a fork before the join of the previous one");
  EXPECT_EQ(plan(join), "x.so: launch plan: a join without a fork");
  // Between the fork and the join the streams share no buffer column or
  // step input (a race on the GPU); before and after, they may.
  EXPECT_EQ(plan(fork + "," + side + "," + kernel(arg("buffer", "b0")) + "," + join),
            "x.so: launch plan: between a fork and its join, both streams use b0 (k on the main "
            "stream)");
  EXPECT_EQ(plan(fork + "," + side + "," + kernel(arg("buffer", "b0", 4, 4)) + "," + join),
            "x.so: launch plan: between a fork and its join, both streams use b0 (k on the main "
            "stream)");
  std::string sideColumns = kernel(arg("buffer", "b0", 0, 4) + "," + arg("input", "positions"));
  sideColumns.replace(sideColumns.find(R"("kernel":)"), 0, R"("side":true,)");
  EXPECT_EQ(plan(kernel(arg("buffer", "b0")) + "," + fork + "," + sideColumns + "," +
                 kernel(arg("buffer", "b0", 4, 4)) + "," + join + "," + kernel(arg("buffer", "b0"))),
            "ok");
  EXPECT_EQ(plan(fork + "," + sideColumns + "," + kernel(arg("input", "positions")) + "," + join),
            "x.so: launch plan: between a fork and its join, both streams use positions (k on "
            "the main stream)");
  // The tables input names one of the manifest's groups; no other input
  // names one (the KV pool is every group's).
  EXPECT_EQ(plan(kernel(arg("input", "kv_tables", 0, 0, 1))), "ok");
  EXPECT_EQ(plan(kernel(arg("input", "kv_pool"))), "ok");
  EXPECT_EQ(
      plan(kernel(arg("input", "kv_pool", 0, 0, 1))),
      "x.so: launch plan: argument kv_pool names KV group 1 (it has none)");
  EXPECT_EQ(plan(kernel(arg("input", "kv_tables", 0, 0, 4))),
            "x.so: launch plan: argument kv_tables names KV group 4 of 4");
  EXPECT_EQ(
      plan(kernel(arg("input", "positions", 0, 0, 1))),
      "x.so: launch plan: argument positions names KV group 1 (it has none)");
  EXPECT_EQ(plan(kernel(arg("buffer", "b0", 0, 0, 1))),
            "x.so: launch plan: argument b0 names KV group 1 (it has none)");
  // The same group's tables on both streams race; two groups' do not.
  std::string sideTables = kernel(arg("input", "kv_tables", 0, 0, 1));
  sideTables.replace(sideTables.find(R"("kernel":)"), 0, R"("side":true,)");
  EXPECT_EQ(plan(fork + "," + sideTables + "," +
                 kernel(arg("input", "kv_tables")) + "," + join),
            "ok");
  EXPECT_EQ(plan(fork + "," + sideTables + "," +
                 kernel(arg("input", "kv_tables", 0, 0, 1)) + "," + join),
            "x.so: launch plan: between a fork and its join, both streams use "
            "kv_tables of KV "
            "group 1 (k on the main stream)");
  EXPECT_NE(plan(gemm(1 << 30, "h")).find("reaches past the weights"), std::string::npos);
  EXPECT_EQ(plan(gemm(m.config.vocabSize, "b0")),
            "x.so: launch plan: the GEMM of model.embed_tokens.weight: its input a must be a "
            "whole buffer of 128 values per row and rows rows, given b0");
}

// The step parameters: decode_tokens counts a step's generated tokens,
// prefill_tiles its 16-token tiles when it has a prompt token;
// gemv_token / gemm_tokens pick the linear layers' kernels.
TEST(LaunchPlanTest, StepParametersFollowTheTokenKinds) {
  auto decode = stepParams(/*tokens=*/4, /*generated=*/4, /*rows=*/4, 16, 3,
                           /*maxKeys=*/0,
                           /*maxGeneratedKeys=*/40, /*tokensOnly=*/false);
  EXPECT_EQ(decode[StepParam::DecodeTokens], 4);
  EXPECT_EQ(decode[StepParam::PrefillTiles], 0);
  auto prefill = stepParams(33, 0, 1, 16, 3, /*maxKeys=*/4096 + 33, 0, false);
  EXPECT_EQ(prefill[StepParam::DecodeTokens], 0);
  EXPECT_EQ(prefill[StepParam::PrefillTiles], 3);
  auto mixed = stepParams(17, 1, 2, 16, 3, 40, 40, false);
  EXPECT_EQ(mixed[StepParam::DecodeTokens], 1);
  EXPECT_EQ(mixed[StepParam::PrefillTiles], 2);
  // One token: the matrix-vector kernels, not the GEMMs.
  auto one = stepParams(1, 1, 1, 16, 3, 0, 40, false);
  EXPECT_EQ(one[StepParam::GemvToken], 1);
  EXPECT_EQ(one[StepParam::GemmTokens], 0);
  EXPECT_EQ(mixed[StepParam::GemvToken], 0);
  EXPECT_EQ(mixed[StepParam::GemmTokens], 17);
  // Key splits of the prefill attention: 128 / tiles of them, each with at
  // least 8 key tiles of the longest sequence, at most 16; none for a step
  // without prompt tokens.
  EXPECT_EQ(decode[StepParam::PrefillSplits], 1);
  EXPECT_EQ(decode[StepParam::PrefillBlocks], 0);
  // 33 tokens after a 4096-token cached prefix: 3 tiles over 130 key tiles.
  EXPECT_EQ(prefill[StepParam::PrefillSplits], 16);
  EXPECT_EQ(prefill[StepParam::PrefillBlocks], 48);
  EXPECT_EQ(prefill[StepParam::PrefillPartials], 33 * 16);
  EXPECT_EQ(prefill[StepParam::PrefillMergeTokens], 33);
  // A fresh prompt of 128 tokens: 4 key tiles, too few to split.
  auto fresh128 = stepParams(128, 0, 1, 16, 8, 128, 0, false);
  EXPECT_EQ(fresh128[StepParam::PrefillSplits], 1);
  EXPECT_EQ(fresh128[StepParam::PrefillPartials], 0);
  EXPECT_EQ(fresh128[StepParam::PrefillMergeTokens], 0);
  auto fresh512 = stepParams(512, 0, 1, 16, 32, 512, 0, false);
  EXPECT_EQ(fresh512[StepParam::PrefillSplits], 2); // 16 key tiles
  EXPECT_EQ(fresh512[StepParam::PrefillBlocks], 64);
  auto fresh2048 = stepParams(2048, 0, 1, 16, 128, 2048, 0, false);
  EXPECT_EQ(fresh2048[StepParam::PrefillSplits], 1); // 128 tiles
  EXPECT_EQ(fresh2048[StepParam::PrefillBlocks], 128);
  // Key splits of a split kernel: splitTokens / tokens of them, a power of
  // two, each of at least 16 keys of the longest generated token's, at most
  // 32 (splitsFor).
  EXPECT_EQ(splitsFor(1, 512, 128), 32);
  EXPECT_EQ(splitsFor(1, 8064, 128), 32);
  EXPECT_EQ(splitsFor(1, 100, 128), 4); // 100 / 16 = 6, rounded down to 4
  EXPECT_EQ(splitsFor(1, 20, 128), 1);
  EXPECT_EQ(splitsFor(5, 8064, 128), 16); // 128 / 5 = 25, rounded down to 16
  EXPECT_EQ(splitsFor(16, 8064, 128), 8);
  EXPECT_EQ(splitsFor(64, 8064, 128), 2);
  EXPECT_EQ(splitsFor(256, 8064, 128), 1);
  EXPECT_EQ(splitsFor(64, 8064, 256), 4);
  EXPECT_EQ(splitsFor(256, 8064, 256), 1);
  EXPECT_EQ(splitsFor(0, 0, 256), 1);
  auto long1 = stepParams(1, 1, 1, 16, 64, 0, /*maxGeneratedKeys=*/1000, false);
  EXPECT_EQ(long1[StepParam::DecodeSplits], 32);
  EXPECT_EQ(long1[StepParam::DecodeSplitBlocks], 32);
  EXPECT_EQ(long1[StepParam::DecodeMergeTokens], 1);
  EXPECT_EQ(decode[StepParam::DecodeSplits], 2); // 4 tokens over 40 keys
  EXPECT_EQ(decode[StepParam::DecodeSplitBlocks], 8);
  EXPECT_EQ(decode[StepParam::DecodeMergeTokens], 4);
  // f32 plans run the split kernel over every token, prompt ones included.
  EXPECT_EQ(prefill[StepParam::DecodeSplitBlocks], 0);
  EXPECT_EQ(prefill[StepParam::TokenSplits], 2); // 128 / 33 = 3, rounded down to 2
  EXPECT_EQ(prefill[StepParam::TokenSplitBlocks], 66);
  // Greedy tokens on the GPU: a block per logits row, only when asked.
  EXPECT_EQ(decode[StepParam::SampledRows], 0);
  EXPECT_EQ(stepParams(4, 4, 4, 16, 3, 0, 40,
                       /*tokensOnly=*/true)[StepParam::SampledRows],
            4);
  EXPECT_TRUE(isDecodeStep(4, 4, 4, 4));
  EXPECT_FALSE(isDecodeStep(4, 3, 4, 4)); // a prompt token among them
  EXPECT_FALSE(isDecodeStep(4, 4, 4, 3)); // a token wanting no logits
  // The side stream in steps of at most kSideStreamMaxTokens tokens.
  EXPECT_EQ(stepParams(kSideStreamMaxTokens, 0, 1, 16, 3, 200, 0,
                       false)[StepParam::SideStream],
            1);
  EXPECT_EQ(stepParams(kSideStreamMaxTokens + 1, 0, 1, 16, 3, 200, 0,
                       false)[StepParam::SideStream],
            0);
  EXPECT_EQ(decode[StepParam::SideStream], 1);
}

} // namespace
