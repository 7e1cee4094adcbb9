//===- ConfigTest.cpp - Tests for the Cohere2 config parser ---------------===//
//
// Expected values come from the config files themselves and the published
// layer layouts (test/data/configs/README.md, test/data/models/README.md).
//
//===----------------------------------------------------------------------===//
#include "Model/Config.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <functional>
#include <unistd.h>

using namespace cohere2c;
using nlohmann::json;

namespace {

constexpr LayerKind S = LayerKind::Sliding;
constexpr LayerKind F = LayerKind::Full;

std::string dataPath(const std::string &relative) {
  return std::string(COHERE2C_TEST_DATA_DIR) + "/" + relative;
}

/// A small valid config in the released form; tests edit one field.
json baseConfig() {
  return json::parse(R"({
    "architectures": ["Cohere2ForCausalLM"],
    "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 8,
    "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 100,
    "sliding_window": 16, "sliding_window_pattern": 4,
    "layer_norm_eps": 1e-05, "logit_scale": 0.25,
    "max_position_embeddings": 2048,
    "use_parallel_block": true, "rotary_pct": 1.0, "rope_scaling": null,
    "order_of_interleaved_layers": "local_attn_first"
  })");
}

/// The error message of parsing `config` as "config.json", or "" on success.
std::string parseError(const json &config) {
  StatusOr<ModelConfig> parsed =
      ModelConfig::parse(config.dump(), "config.json");
  return parsed.ok() ? "" : parsed.status().message();
}

std::vector<int64_t> fullLayers(const ModelConfig &config) {
  std::vector<int64_t> layers;
  for (size_t i = 0; i < config.layerKinds.size(); ++i)
    if (config.layerKinds[i] == LayerKind::Full)
      layers.push_back(int64_t(i));
  return layers;
}

void expectEqual(const ModelConfig &a, const ModelConfig &b) {
  EXPECT_EQ(a.hiddenSize, b.hiddenSize);
  EXPECT_EQ(a.intermediateSize, b.intermediateSize);
  EXPECT_EQ(a.numLayers, b.numLayers);
  EXPECT_EQ(a.numHeads, b.numHeads);
  EXPECT_EQ(a.numKVHeads, b.numKVHeads);
  EXPECT_EQ(a.headDim, b.headDim);
  EXPECT_EQ(a.vocabSize, b.vocabSize);
  EXPECT_EQ(a.slidingWindow, b.slidingWindow);
  EXPECT_EQ(a.ropeTheta, b.ropeTheta);
  EXPECT_EQ(a.layerNormEps, b.layerNormEps);
  EXPECT_EQ(a.logitScale, b.logitScale);
  EXPECT_EQ(a.maxPositionEmbeddings, b.maxPositionEmbeddings);
  EXPECT_EQ(a.eosTokenIds, b.eosTokenIds);
  EXPECT_EQ(a.layerKinds, b.layerKinds);
}

TEST(ConfigTest, ParsesCommandR7B) {
  StatusOr<ModelConfig> config =
      ModelConfig::fromFile(dataPath("configs/command-r7b.config.json"));
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_EQ(config->hiddenSize, 4096);
  EXPECT_EQ(config->intermediateSize, 14336);
  EXPECT_EQ(config->numLayers, 32);
  EXPECT_EQ(config->numHeads, 32);
  EXPECT_EQ(config->numKVHeads, 8);
  EXPECT_EQ(config->headDim, 128);
  EXPECT_EQ(config->vocabSize, 256000);
  EXPECT_EQ(config->slidingWindow, 4096);
  EXPECT_EQ(config->ropeTheta, 50000.0);
  EXPECT_EQ(config->layerNormEps, 1e-5);
  EXPECT_EQ(config->logitScale, 0.25);
  EXPECT_EQ(config->maxPositionEmbeddings, 8192);
  EXPECT_EQ(config->eosTokenIds, std::vector<int64_t>{255001});
  EXPECT_EQ(fullLayers(*config),
            (std::vector<int64_t>{3, 7, 11, 15, 19, 23, 27, 31}));
  EXPECT_EQ(config->numSlidingLayers(), 24);
  EXPECT_EQ(config->numFullLayers(), 8);
}

TEST(ConfigTest, ParsesCommandA) {
  StatusOr<ModelConfig> config =
      ModelConfig::fromFile(dataPath("configs/command-a.config.json"));
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_EQ(config->hiddenSize, 12288);
  EXPECT_EQ(config->intermediateSize, 36864);
  EXPECT_EQ(config->numLayers, 64);
  EXPECT_EQ(config->numHeads, 96);
  EXPECT_EQ(config->numKVHeads, 8);
  EXPECT_EQ(config->headDim, 128);
  EXPECT_EQ(config->maxPositionEmbeddings, 131072);
  EXPECT_EQ(config->ropeTheta, 50000.0);
  EXPECT_EQ(config->numFullLayers(), 16);
  EXPECT_EQ(config->numSlidingLayers(), 48);
  std::vector<int64_t> expected;
  for (int64_t i = 3; i < 64; i += 4)
    expected.push_back(i);
  EXPECT_EQ(fullLayers(*config), expected);
}

TEST(ConfigTest, ParsesLayerTypesForm) {
  StatusOr<ModelConfig> config =
      ModelConfig::fromFile(dataPath("models/tiny-cohere2/config.json"));
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_EQ(config->layerKinds,
            (std::vector<LayerKind>{S, S, S, F, S, S, S, F}));
  EXPECT_EQ(config->hiddenSize, 128);
  EXPECT_EQ(config->intermediateSize, 256);
  EXPECT_EQ(config->numHeads, 4);
  EXPECT_EQ(config->numKVHeads, 2);
  EXPECT_EQ(config->headDim, 32);
  EXPECT_EQ(config->vocabSize, 512);
  EXPECT_EQ(config->slidingWindow, 8);
  EXPECT_EQ(config->ropeTheta, 50000.0);
  EXPECT_EQ(config->eosTokenIds, std::vector<int64_t>{3});
}

TEST(ConfigTest, ParsesPatternForm) {
  StatusOr<ModelConfig> config =
      ModelConfig::fromFile(dataPath("models/tiny-cohere2-bf16/config.json"));
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_EQ(config->layerKinds,
            (std::vector<LayerKind>{S, S, S, F, S, S, S, F}));
  EXPECT_EQ(config->slidingWindow, 16);
  EXPECT_EQ(config->headDim, 32);
  EXPECT_EQ(config->ropeTheta, 50000.0);
}

TEST(ConfigTest, LayerTypesOverridePattern) {
  json config = baseConfig();
  config["layer_types"] = {"full_attention",    "sliding_attention",
                           "sliding_attention", "sliding_attention",
                           "sliding_attention", "sliding_attention",
                           "sliding_attention", "full_attention"};
  StatusOr<ModelConfig> parsed = ModelConfig::parse(config.dump(), "c.json");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(parsed->layerKinds,
            (std::vector<LayerKind>{F, S, S, S, S, S, S, F}));
}

TEST(ConfigTest, Defaults) {
  StatusOr<ModelConfig> parsed =
      ModelConfig::parse(baseConfig().dump(), "c.json");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(parsed->headDim, 16); // 64 / 4
  EXPECT_EQ(parsed->ropeTheta, 10000.0);
  EXPECT_TRUE(parsed->eosTokenIds.empty());
}

TEST(ConfigTest, RopeParametersWinOverTopLevelTheta) {
  json config = baseConfig();
  config["rope_theta"] = 1000.0;
  config["rope_parameters"] = {{"rope_theta", 2000.0},
                               {"rope_type", "default"}};
  StatusOr<ModelConfig> parsed = ModelConfig::parse(config.dump(), "c.json");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(parsed->ropeTheta, 2000.0);
}

/// The quantization_config llm-compressor writes for "FP8 dynamic" (as in
/// the published FP8-dynamic checkpoints), with the fields older versions
/// of compressed-tensors wrote too.
json fp8DynamicConfig() {
  json activations = {{"actorder", nullptr},
                      {"block_structure", nullptr},
                      {"dynamic", true},
                      {"group_size", nullptr},
                      {"num_bits", 8},
                      {"observer", nullptr},
                      {"observer_kwargs", json::object()},
                      {"strategy", "token"},
                      {"symmetric", true},
                      {"type", "float"}};
  json weights = activations;
  weights["dynamic"] = false;
  weights["observer"] = "minmax";
  weights["strategy"] = "channel";
  return {{"config_groups",
           {{"group_0",
             {{"input_activations", activations},
              {"output_activations", nullptr},
              {"targets", {"Linear"}},
              {"weights", weights}}}}},
          {"format", "float-quantized"},
          {"global_compression_ratio", 1.24},
          {"ignore", {"lm_head"}},
          {"kv_cache_scheme", nullptr},
          {"quant_method", "compressed-tensors"},
          {"quantization_status", "compressed"},
          {"sparsity_config",
           {{"format", "dense"},
            {"global_sparsity", 0.01},
            {"registry_requires_subclass", false},
            {"sparsity_structure", "unstructured"}}},
          {"version", "0.6.0"}};
}

/// ModelConfig::parse's message for baseConfig() with `q` as its
/// quantization_config, or "" when it accepts it.
std::string parseWithQuantization(const json &q) {
  json config = baseConfig();
  config["quantization_config"] = q;
  StatusOr<ModelConfig> parsed = ModelConfig::parse(config.dump(), "c.json");
  return parsed.ok() ? "" : parsed.status().message();
}

TEST(ConfigTest, AcceptsCompressedTensorsFP8Dynamic) {
  json q = fp8DynamicConfig();
  EXPECT_EQ(parseWithQuantization(q), "");
  q["sparsity_config"] = json::object(); // what newer versions write
  q["transform_config"] = json::object();
  EXPECT_EQ(parseWithQuantization(q), "");
  // Weights alone (W8A16): activations are quantized as the recipe says.
  q["config_groups"]["group_0"].erase("input_activations");
  EXPECT_EQ(parseWithQuantization(q), "");
}

TEST(ConfigTest, RefusesOtherQuantizationSchemes) {
  const std::string tail =
      ", but cohere2c reads FP8 checkpoints in compressed-tensors' FP8 dynamic "
      "scheme only, where it is ";
  auto refusal = [&](const std::function<void(json &)> &edit) {
    json q = fp8DynamicConfig();
    edit(q);
    return parseWithQuantization(q);
  };
  EXPECT_EQ(refusal([](json &q) { q["quant_method"] = "fp8"; }),
            "c.json: quantization_config.quant_method is \"fp8\"" + tail +
                "\"compressed-tensors\"");
  EXPECT_EQ(
      refusal([](json &q) {
        q["config_groups"]["group_0"]["weights"]["strategy"] = "block";
      }),
      "c.json: quantization_config.config_groups.group_0.weights.strategy is "
      "\"block\"" +
          tail + "\"channel\"");
  EXPECT_EQ(refusal([](json &q) {
              q["config_groups"]["group_0"]["weights"]["num_bits"] = 4;
            }),
            "c.json: "
            "quantization_config.config_groups.group_0.weights.num_bits is 4" +
                tail + "8");
  // Static activation scales (input_scale tensors) are another scheme.
  EXPECT_EQ(
      refusal([](json &q) {
        q["config_groups"]["group_0"]["input_activations"]["dynamic"] = false;
      }),
      "c.json: "
      "quantization_config.config_groups.group_0.input_activations.dynamic is "
      "false" +
          tail + "true");
  EXPECT_EQ(refusal([](json &q) {
              q["kv_cache_scheme"] = {{"num_bits", 8}};
            }),
            "c.json: quantization_config.kv_cache_scheme is {\"num_bits\":8}" +
                tail + "null");
  // Rotated weights (online Hadamard transforms) would be misread.
  EXPECT_EQ(refusal([](json &q) {
              q["transform_config"] = {{"config_groups", {{"u", 1}}}};
            }),
            "c.json: quantization_config.transform_config is "
            "{\"config_groups\":{\"u\":1}}" +
                tail + "null or {}");
  EXPECT_EQ(refusal([](json &q) {
              q["sparsity_config"] = {{"format", "sparse-24-bitmask"}};
            }),
            "c.json: quantization_config.sparsity_config is "
            "{\"format\":\"sparse-24-bitmask\"}, but cohere2c reads dense "
            "tensors only "
            "(null, {} or format \"dense\")");
  EXPECT_EQ(refusal([](json &q) { q["config_groups"] = json::object(); }),
            "c.json: quantization_config.config_groups has no group");
  EXPECT_EQ(refusal([](json &q) { q = "fp8"; }),
            "c.json: quantization_config must be an object, found \"fp8\"");
}

TEST(ConfigTest, EosTokenIdForms) {
  json config = baseConfig();
  config["eos_token_id"] = {3, 99}; // vocab_size 100
  StatusOr<ModelConfig> list = ModelConfig::parse(config.dump(), "c.json");
  ASSERT_TRUE(list.ok()) << list.status().message();
  EXPECT_EQ(list->eosTokenIds, (std::vector<int64_t>{3, 99}));
  // An id the model cannot generate would never end a request.
  config["eos_token_id"] = {3, 100};
  StatusOr<ModelConfig> outside = ModelConfig::parse(config.dump(), "c.json");
  ASSERT_FALSE(outside.ok());
  EXPECT_EQ(outside.status().message(),
            "c.json: eos_token_id 100 is outside the vocabulary [0, 100)");
  config["eos_token_id"] = nullptr;
  StatusOr<ModelConfig> none = ModelConfig::parse(config.dump(), "c.json");
  ASSERT_TRUE(none.ok()) << none.status().message();
  EXPECT_TRUE(none->eosTokenIds.empty());
}

TEST(ConfigTest, OddHeadDimAllowedWithoutRoPELayers) {
  json config = baseConfig();
  config["head_dim"] = 31;
  config["sliding_window_pattern"] = 1; // Every layer full: no RoPE anywhere.
  StatusOr<ModelConfig> parsed = ModelConfig::parse(config.dump(), "c.json");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(parsed->headDim, 31);
  EXPECT_EQ(parsed->numFullLayers(), 8);
}

TEST(ConfigTest, RejectsNotJson) {
  StatusOr<ModelConfig> parsed = ModelConfig::parse("{\"a\": ", "config.json");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().message(),
            "config.json: not valid JSON: parse error at line 1, column 7: syntax error while "
            "parsing value - unexpected end of input; expected '[', '{', or a literal");
}

TEST(ConfigTest, RejectsMissingField) {
  json config = baseConfig();
  config.erase("hidden_size");
  EXPECT_EQ(parseError(config),
            "config.json: missing required field 'hidden_size'");
}

TEST(ConfigTest, RejectsNonPositiveSize) {
  json config = baseConfig();
  config["hidden_size"] = -3;
  EXPECT_EQ(parseError(config),
            "config.json: hidden_size must be positive, found -3");
}

TEST(ConfigTest, RejectsNonIntegerSize) {
  json config = baseConfig();
  config["vocab_size"] = "100";
  EXPECT_EQ(parseError(config),
            "config.json: vocab_size must be an integer, found \"100\"");
}

TEST(ConfigTest, RejectsOtherArchitecture) {
  json config = baseConfig();
  config["architectures"] = json::array({"LlamaForCausalLM"});
  EXPECT_EQ(parseError(config), "config.json: architectures must contain "
                                "Cohere2ForCausalLM, found "
                                "[\"LlamaForCausalLM\"]");
}

TEST(ConfigTest, RejectsKVHeadsNotDividingHeads) {
  json config = baseConfig();
  config["hidden_size"] = 4096;
  config["num_attention_heads"] = 32;
  config["num_key_value_heads"] = 5;
  EXPECT_EQ(parseError(config), "config.json: num_key_value_heads (5) must "
                                "divide num_attention_heads (32)");
}

TEST(ConfigTest, RejectsHiddenNotDivisibleWithoutHeadDim) {
  json config = baseConfig();
  config["hidden_size"] = 66;
  EXPECT_EQ(parseError(config),
            "config.json: hidden_size (66) is not divisible by "
            "num_attention_heads (4) and head_dim is not given");
}

TEST(ConfigTest, RejectsLayerTypesOfWrongLength) {
  json config = baseConfig();
  config["layer_types"] = {"sliding_attention", "sliding_attention",
                           "full_attention"};
  EXPECT_EQ(parseError(config), "config.json: layer_types has 3 entries, "
                                "expected num_hidden_layers = 8");
}

TEST(ConfigTest, RejectsUnknownLayerType) {
  json config = baseConfig();
  config["num_hidden_layers"] = 3;
  config["layer_types"] = {"sliding_attention", "full_attention", "foo"};
  EXPECT_EQ(parseError(config),
            "config.json: layer_types[2] is 'foo', expected "
            "'sliding_attention' or 'full_attention'");
}

TEST(ConfigTest, RejectsMissingPatternWithoutLayerTypes) {
  json config = baseConfig();
  config.erase("sliding_window_pattern");
  EXPECT_EQ(parseError(config),
            "config.json: missing required field 'sliding_window_pattern' "
            "(needed when there is no layer_types)");
}

TEST(ConfigTest, RejectsWindowBelowOne) {
  json config = baseConfig();
  config["sliding_window"] = 0;
  EXPECT_EQ(parseError(config),
            "config.json: sliding_window must be at least 1, found 0");
}

TEST(ConfigTest, RejectsOddHeadDimWithRoPE) {
  json config = baseConfig();
  config["head_dim"] = 31;
  EXPECT_EQ(parseError(config),
            "config.json: head_dim (31) must be even for RoPE");
}

TEST(ConfigTest, RejectsUntiedEmbeddings) {
  json config = baseConfig();
  config["tie_word_embeddings"] = false;
  EXPECT_EQ(parseError(config),
            "config.json: tie_word_embeddings is false, but Cohere2 computes "
            "the logits with the embedding matrix");
}

TEST(ConfigTest, RejectsRopeScaling) {
  json config = baseConfig();
  config["rope_scaling"] = {{"type", "linear"}, {"factor", 2.0}};
  EXPECT_EQ(parseError(config),
            "config.json: rope_scaling is not supported, found "
            "{\"factor\":2.0,\"type\":\"linear\"}");
}

TEST(ConfigTest, RejectsSizesAboveTheirLimits) {
  struct Case {
    const char *key;
    int64_t limit;
  } cases[] = {{"hidden_size", 1 << 20},
               {"intermediate_size", 1 << 20},
               {"num_hidden_layers", 1024},
               {"num_attention_heads", 1024},
               {"num_key_value_heads", 1024},
               {"vocab_size", 1 << 24},
               {"max_position_embeddings", 1 << 24},
               {"head_dim", 1024}};
  for (const Case &c : cases) {
    SCOPED_TRACE(c.key);
    json config = baseConfig();
    config[c.key] = c.limit + 1;
    EXPECT_EQ(parseError(config), "config.json: " + std::string(c.key) +
                                      " must be at most " +
                                      std::to_string(c.limit) + ", found " +
                                      std::to_string(c.limit + 1));
  }
  // 2^62 would make every weight offset overflow to 0.
  json config = baseConfig();
  config["hidden_size"] = int64_t(1) << 62;
  EXPECT_EQ(parseError(config), "config.json: hidden_size must be at most "
                                "1048576, found 4611686018427387904");
}

TEST(ConfigTest, AcceptsSizesAtTheirLimits) {
  json config = baseConfig();
  config["num_attention_heads"] = 1024;
  config["num_key_value_heads"] = 1024;
  config["head_dim"] = 1024;
  config["hidden_size"] = 1 << 20;
  config["intermediate_size"] = 1 << 20;
  config["num_hidden_layers"] = 1024;
  config["vocab_size"] = 1 << 24;
  config["max_position_embeddings"] = 1 << 24;
  StatusOr<ModelConfig> parsed = ModelConfig::parse(config.dump(), "c.json");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(parsed->hiddenSize, 1 << 20);
  EXPECT_EQ(parsed->headDim, 1024);
}

TEST(ConfigTest, RejectsDerivedHeadDimAboveLimit) {
  json config = baseConfig();
  config["hidden_size"] = 8192;
  config["num_attention_heads"] = 4; // head_dim 2048
  config["num_key_value_heads"] = 4;
  EXPECT_EQ(parseError(config),
            "config.json: head_dim (hidden_size / num_attention_heads) must be "
            "at most 1024, found 2048");
}

TEST(ConfigTest, AcceptsWindowLongerThanContext) {
  json config = baseConfig();
  config["sliding_window"] = 4096; // > max_position_embeddings 2048
  StatusOr<ModelConfig> parsed = ModelConfig::parse(config.dump(), "c.json");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(parsed->slidingWindow, 4096);
}

TEST(ConfigTest, RejectsOtherActivation) {
  json config = baseConfig();
  config["hidden_act"] = "gelu";
  EXPECT_EQ(parseError(config),
            "config.json: hidden_act must be 'silu' (the only MLP activation "
            "supported), found \"gelu\"");
  config["hidden_act"] = "silu";
  EXPECT_EQ(parseError(config), "");
}

TEST(ConfigTest, RejectsAttentionBias) {
  json config = baseConfig();
  config["attention_bias"] = true;
  EXPECT_EQ(parseError(config),
            "config.json: attention_bias must be false (attention projections "
            "without biases), found true");
  config["attention_bias"] = false;
  EXPECT_EQ(parseError(config), "");
}

TEST(ConfigTest, RejectsOtherModelType) {
  json config = baseConfig();
  config["model_type"] = "cohere";
  EXPECT_EQ(parseError(config),
            "config.json: model_type must be 'cohere2', found \"cohere\"");
  config["model_type"] = "cohere2";
  EXPECT_EQ(parseError(config), "");
}

TEST(ConfigTest, NoDifferenceBetweenFormsOfOneModel) {
  // The released form of tiny-cohere2's config (pattern 4 gives its layer
  // types S S S F S S S F, rope_theta at the top level).
  StatusOr<ModelConfig> current =
      ModelConfig::fromFile(dataPath("models/tiny-cohere2/config.json"));
  ASSERT_TRUE(current.ok()) << current.status().message();
  json released = json::parse(current->toJson());
  released.erase("layer_types");
  released.erase("rope_parameters");
  released["sliding_window_pattern"] = 4;
  released["rope_theta"] = 50000.0;
  StatusOr<ModelConfig> parsed = ModelConfig::parse(released.dump(), "r.json");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_FALSE(firstDifference(*parsed, *current).has_value());
}

TEST(ConfigTest, FirstDifferenceNamesFieldAndValues) {
  StatusOr<ModelConfig> a = ModelConfig::parse(baseConfig().dump(), "a.json");
  ASSERT_TRUE(a.ok()) << a.status().message();
  ModelConfig b = *a;
  b.vocabSize = 200;
  b.slidingWindow = 32;
  // Fields in alphabetical order: sliding_window comes before vocab_size.
  std::optional<ConfigDifference> d = firstDifference(b, *a);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->field, "sliding_window");
  EXPECT_EQ(d->found, "32");
  EXPECT_EQ(d->expected, "16");

  b = *a;
  b.layerKinds[2] = F;
  d = firstDifference(b, *a);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->field, "layer_types[2]");
  EXPECT_EQ(d->found, "\"full_attention\"");
  EXPECT_EQ(d->expected, "\"sliding_attention\"");

  b = *a;
  b.ropeTheta = 50000.0;
  d = firstDifference(b, *a);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->field, "rope_parameters.rope_theta");
  EXPECT_EQ(d->found, "50000.0");
  EXPECT_EQ(d->expected, "10000.0");

  b = *a;
  b.eosTokenIds = {3};
  d = firstDifference(b, *a);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->field, "eos_token_id");
  EXPECT_EQ(d->found, "[3]");
  EXPECT_EQ(d->expected, "[]");
}

TEST(ConfigTest, FromFileNamesMissingFile) {
  std::string path = ::testing::TempDir() + "/no-such-config.json";
  StatusOr<ModelConfig> config = ModelConfig::fromFile(path);
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().message(),
            path + ": cannot open (No such file or directory)");
}

TEST(ConfigTest, FromFileRefusesWhatIsNotARegularFile) {
  // /dev/zero would be read forever; a folder cannot be read.
  for (std::string path : {std::string("/dev/zero"), ::testing::TempDir()}) {
    StatusOr<ModelConfig> config = ModelConfig::fromFile(path);
    ASSERT_FALSE(config.ok());
    EXPECT_EQ(config.status().message(),
              path + ": not a regular file (expected a config.json)");
  }
}

TEST(ConfigTest, FromFileUsesPathInMessages) {
  std::string path = ::testing::TempDir() + "/bad-window-config-" +
                     std::to_string(::getpid()) + ".json";
  json config = baseConfig();
  config["sliding_window"] = 0;
  std::ofstream(path) << config.dump();
  StatusOr<ModelConfig> parsed = ModelConfig::fromFile(path);
  std::remove(path.c_str());
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().message(),
            path + ": sliding_window must be at least 1, found 0");
}

TEST(ConfigTest, ToJsonWritesCurrentForm) {
  StatusOr<ModelConfig> config =
      ModelConfig::fromFile(dataPath("configs/command-r7b.config.json"));
  ASSERT_TRUE(config.ok()) << config.status().message();
  json written = json::parse(config->toJson());
  EXPECT_EQ(written["architectures"], json::array({"Cohere2ForCausalLM"}));
  EXPECT_EQ(written["rope_parameters"],
            json::object({{"rope_theta", 50000.0}, {"rope_type", "default"}}));
  EXPECT_EQ(written["eos_token_id"], json::array({255001}));
  EXPECT_EQ(written["tie_word_embeddings"], true);
  EXPECT_EQ(written["head_dim"], 128);
  ASSERT_EQ(written["layer_types"].size(), 32u);
  EXPECT_EQ(written["layer_types"][2], "sliding_attention");
  EXPECT_EQ(written["layer_types"][3], "full_attention");
  EXPECT_FALSE(written.contains("sliding_window_pattern"));
}

TEST(ConfigTest, ToJsonRoundTrips) {
  for (const char *file :
       {"configs/command-r7b.config.json", "configs/command-a.config.json",
        "models/tiny-cohere2/config.json",
        "models/tiny-cohere2-bf16/config.json"}) {
    SCOPED_TRACE(file);
    StatusOr<ModelConfig> config = ModelConfig::fromFile(dataPath(file));
    ASSERT_TRUE(config.ok()) << config.status().message();
    StatusOr<ModelConfig> again =
        ModelConfig::parse(config->toJson(), "manifest");
    ASSERT_TRUE(again.ok()) << again.status().message();
    expectEqual(*config, *again);
  }
}

} // namespace
