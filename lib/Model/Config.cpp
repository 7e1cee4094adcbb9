//===- Config.cpp - The Cohere2 model description from HF config.json -----===//
//
// Every lookup checks the JSON type before get<>(): this code is linked into
// code built with -fno-exceptions, so nlohmann/json must never throw.
//
//===----------------------------------------------------------------------===//
#include "Model/Config.h"
#include "Support/Json.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <sys/stat.h>

using nlohmann::json;

namespace cohere2c {

namespace {

constexpr const char *kArchitecture = "Cohere2ForCausalLM";

// Plausibility limits, far above any published Cohere2 model (Command A:
// hidden 12288, 64 layers, 96 heads, head_dim 128, vocab 256000, context
// 131072). They keep every weight offset and KV size well inside int64: the
// largest weight layout they allow is below 2^56 bytes.
constexpr int64_t kMaxWidth = int64_t(1) << 20; // hidden, intermediate sizes
constexpr int64_t kMaxHeadDim = 1024;
constexpr int64_t kMaxLayers = 1024;
constexpr int64_t kMaxHeads = 1024;              // query and KV heads
constexpr int64_t kMaxTokens = int64_t(1) << 24; // vocab, context

/// Builds "<source>: <message>" errors for one config file.
class FieldReader {
public:
  FieldReader(const json &root, const std::string &source)
      : root(root), source(source) {}

  Status error(const std::string &message) const {
    return Status::error(source + ": " + message);
  }

  StatusOr<const json *> required(const char *key) const {
    auto it = root.find(key);
    if (it == root.end())
      return error(std::string("missing required field '") + key + "'");
    return &*it;
  }

  StatusOr<int64_t> integer(const char *key, const json &value) const {
    bool fits = value.is_number_integer() &&
                (!value.is_number_unsigned() ||
                 value.get<uint64_t>() <=
                     uint64_t(std::numeric_limits<int64_t>::max()));
    if (!fits)
      return error(std::string(key) + " must be an integer, found " +
                   jsonExcerpt(value));
    return value.get<int64_t>();
  }

  /// A required integer in [1, limit].
  StatusOr<int64_t>
  positive(const char *key,
           int64_t limit = std::numeric_limits<int64_t>::max()) const {
    StatusOr<const json *> value = required(key);
    if (!value.ok())
      return value.status();
    StatusOr<int64_t> n = integer(key, **value);
    if (n.ok() && *n <= 0)
      return error(std::string(key) + " must be positive, found " +
                   std::to_string(*n));
    if (n.ok() && *n > limit)
      return error(std::string(key) + " must be at most " +
                   std::to_string(limit) + ", found " + std::to_string(*n));
    return n;
  }

  StatusOr<double> number(const char *key, const json &value) const {
    if (!value.is_number())
      return error(std::string(key) + " must be a number, found " +
                   jsonExcerpt(value));
    return value.get<double>();
  }

  StatusOr<double> requiredNumber(const char *key) const {
    StatusOr<const json *> value = required(key);
    if (!value.ok())
      return value.status();
    return number(key, **value);
  }

private:
  const json &root;
  const std::string &source;
};

Status parseLayerKinds(const json &root, const FieldReader &reader,
                       ModelConfig &config) {
  auto types = root.find("layer_types");
  if (types != root.end() && !types->is_null()) {
    if (!types->is_array())
      return reader.error("layer_types must be a list, found " +
                          jsonExcerpt(*types));
    if (int64_t(types->size()) != config.numLayers)
      return reader.error("layer_types has " + std::to_string(types->size()) +
                          " entries, expected num_hidden_layers = " +
                          std::to_string(config.numLayers));
    for (size_t i = 0; i < types->size(); ++i) {
      const json &type = (*types)[i];
      std::string name = type.is_string() ? type.get<std::string>() : "";
      if (name == layerKindName(LayerKind::Sliding)) {
        config.layerKinds.push_back(LayerKind::Sliding);
      } else if (name == layerKindName(LayerKind::Full)) {
        config.layerKinds.push_back(LayerKind::Full);
      } else {
        std::string found =
            type.is_string() ? "'" + excerpt(name) + "'" : jsonExcerpt(type);
        return reader.error("layer_types[" + std::to_string(i) + "] is " +
                            found +
                            ", expected 'sliding_attention' or "
                            "'full_attention'");
      }
    }
    return Status::success();
  }
  if (!root.contains("sliding_window_pattern"))
    return reader.error("missing required field 'sliding_window_pattern' "
                        "(needed when there is no layer_types)");
  StatusOr<int64_t> pattern = reader.positive("sliding_window_pattern");
  if (!pattern.ok())
    return pattern.status();
  for (int64_t i = 0; i < config.numLayers; ++i)
    config.layerKinds.push_back((i + 1) % *pattern == 0 ? LayerKind::Full
                                                        : LayerKind::Sliding);
  return Status::success();
}

/// `rope_parameters.rope_theta` (current form), else `rope_theta` (released
/// form), else the default. Scaled RoPE variants are rejected rather than
/// silently computed as plain RoPE.
Status parseRope(const json &root, const FieldReader &reader,
                 ModelConfig &config) {
  auto scaling = root.find("rope_scaling");
  if (scaling != root.end() && !scaling->is_null())
    return reader.error("rope_scaling is not supported, found " +
                        jsonExcerpt(*scaling));
  const json *theta = nullptr;
  const char *key = "rope_theta";
  auto params = root.find("rope_parameters");
  if (params != root.end() && !params->is_null()) {
    if (!params->is_object())
      return reader.error("rope_parameters must be an object, found " +
                          jsonExcerpt(*params));
    auto type = params->find("rope_type");
    if (type != params->end() && *type != "default")
      return reader.error("rope_parameters.rope_type must be 'default', "
                          "found " +
                          jsonExcerpt(*type));
    auto it = params->find("rope_theta");
    if (it != params->end()) {
      theta = &*it;
      key = "rope_parameters.rope_theta";
    }
  }
  if (!theta) {
    auto it = root.find("rope_theta");
    if (it == root.end())
      return Status::success();
    theta = &*it;
  }
  StatusOr<double> value = reader.number(key, *theta);
  if (!value.ok())
    return value.status();
  if (!(*value > 0))
    return reader.error(std::string(key) + " must be positive, found " +
                        jsonExcerpt(*theta));
  config.ropeTheta = *value;
  return Status::success();
}

Status parseEosTokenIds(const json &root, const FieldReader &reader,
                        ModelConfig &config) {
  auto eos = root.find("eos_token_id");
  if (eos == root.end())
    return Status::success();
  StatusOr<std::vector<int64_t>> ids =
      parseTokenIds(*eos, "eos_token_id", config.vocabSize, "the vocabulary");
  if (!ids.ok())
    return reader.error(ids.status().message());
  config.eosTokenIds = *ids;
  return Status::success();
}

/// Fields that, when present, must have the one value Cohere2 has: another
/// value describes a model the compiled code would compute wrongly.
Status checkFixedFields(const json &root, const FieldReader &reader) {
  auto modelType = root.find("model_type");
  if (modelType != root.end() && *modelType != "cohere2")
    return reader.error("model_type must be 'cohere2', found " +
                        jsonExcerpt(*modelType));
  auto act = root.find("hidden_act");
  if (act != root.end() && *act != "silu")
    return reader.error("hidden_act must be 'silu' (the only MLP activation "
                        "supported), found " +
                        jsonExcerpt(*act));
  auto bias = root.find("attention_bias");
  if (bias != root.end() && *bias != false)
    return reader.error("attention_bias must be false (attention projections "
                        "without biases), found " +
                        jsonExcerpt(*bias));
  return Status::success();
}

/// A field of an object that must hold one of `allowed`; an absent field
/// counts as null, unless `required`.
struct FieldRule {
  const char *key;
  std::vector<json> allowed;
  bool required = false;
};

/// Checks `object` (at `path`, e.g. "quantization_config.") against `rules`.
/// Errors name the field by its path from the file's root.
Status expectFields(const FieldReader &reader, const json &object,
                    const std::string &path,
                    const std::vector<FieldRule> &rules) {
  for (const FieldRule &rule : rules) {
    auto it = object.find(rule.key);
    if (it == object.end() && rule.required)
      return reader.error("missing required field '" + path + rule.key + "'");
    json value = it == object.end() ? json() : *it;
    if (std::find(rule.allowed.begin(), rule.allowed.end(), value) !=
        rule.allowed.end())
      continue;
    std::string expected;
    for (const json &a : rule.allowed)
      expected += (expected.empty() ? "" : " or ") + a.dump();
    return reader.error(path + rule.key + " is " + jsonExcerpt(value) +
                        ", but cohere2c reads FP8 checkpoints in "
                        "compressed-tensors' FP8 dynamic scheme only, where "
                        "it is " +
                        expected);
  }
  return Status::success();
}

/// The object `parent[key]`, or an error naming it; absent or null is
/// nullptr when `optional`.
StatusOr<const json *> objectField(const FieldReader &reader,
                                   const json &parent, const std::string &path,
                                   const char *key, bool optional) {
  auto it = parent.find(key);
  if (optional && (it == parent.end() || it->is_null()))
    return nullptr;
  if (it == parent.end() || !it->is_object())
    return reader.error(path + key + " must be an object, found " +
                        (it == parent.end() ? "none" : jsonExcerpt(*it)));
  return &*it;
}

/// One of config_groups: FP8 e4m3 weights with a scale per output channel;
/// activations, if described, quantized per token at run time.
Status checkQuantizationGroup(const FieldReader &reader, const json &group,
                              const std::string &path) {
  StatusOr<const json *> weights =
      objectField(reader, group, path, "weights", false);
  if (!weights.ok())
    return weights.status();
  if (Status s = expectFields(reader, **weights, path + "weights.",
                              {{"num_bits", {8}, true},
                               {"type", {"float"}, true},
                               {"strategy", {"channel"}, true},
                               {"symmetric", {true, nullptr}},
                               {"dynamic", {false, nullptr}},
                               {"group_size", {nullptr}},
                               {"block_structure", {nullptr}}});
      !s.ok())
    return s;
  if (Status s = expectFields(reader, group, path,
                              {{"output_activations", {nullptr}}});
      !s.ok())
    return s;
  StatusOr<const json *> inputs =
      objectField(reader, group, path, "input_activations", true);
  if (!inputs.ok())
    return inputs.status();
  if (!*inputs) // weights alone: activations are quantized as the recipe says
    return Status::success();
  return expectFields(reader, **inputs, path + "input_activations.",
                      {{"num_bits", {8}, true},
                       {"type", {"float"}, true},
                       {"strategy", {"token"}, true},
                       {"dynamic", {true}, true},
                       {"symmetric", {true, nullptr}}});
}

/// quantization_config, when given, describes compressed-tensors' "FP8
/// dynamic" scheme, the one FP8 checkpoint layout cohere2c reads; the
/// tensors then say which linear weights are FP8 (checkTensors), so
/// `targets` and `ignore` are not read. Another scheme's tensors (blocks,
/// groups, static activation scales, integers, a quantized KV cache) would
/// be misread as this one's, and so would a model whose weights are
/// rotated (transform_config: online Hadamard transforms not applied here).
Status checkQuantizationConfig(const json &root, const FieldReader &reader) {
  StatusOr<const json *> q =
      objectField(reader, root, "", "quantization_config", true);
  if (!q.ok())
    return q.status();
  if (!*q)
    return Status::success();
  const std::string path = "quantization_config.";
  if (Status s =
          expectFields(reader, **q, path,
                       {{"quant_method", {"compressed-tensors"}, true},
                        {"format", {"float-quantized", nullptr}},
                        {"quantization_status", {"compressed", nullptr}},
                        {"kv_cache_scheme", {nullptr}},
                        {"transform_config", {nullptr, json::object()}}});
      !s.ok())
    return s;
  // Older compressed-tensors wrote a sparsity_config of format "dense" on
  // every quantized model: it leaves the tensors as they are.
  auto sparsity = (*q)->find("sparsity_config");
  if (sparsity != (*q)->end() && !sparsity->empty() &&
      !(sparsity->is_object() && sparsity->value("format", json()) == "dense"))
    return reader.error(path + "sparsity_config is " + jsonExcerpt(*sparsity) +
                        ", but cohere2c reads dense tensors only (null, {} or "
                        "format \"dense\")");
  StatusOr<const json *> groups =
      objectField(reader, **q, path, "config_groups", false);
  if (!groups.ok())
    return groups.status();
  if ((*groups)->empty())
    return reader.error(path + "config_groups has no group");
  for (const auto &[name, group] : (*groups)->items()) {
    std::string at = path + "config_groups." + name;
    if (!group.is_object())
      return reader.error(at + " must be an object, found " +
                          jsonExcerpt(group));
    if (Status s = checkQuantizationGroup(reader, group, at + "."); !s.ok())
      return s;
  }
  return Status::success();
}

} // namespace

const char *layerKindName(LayerKind kind) {
  return kind == LayerKind::Sliding ? "sliding_attention" : "full_attention";
}

int64_t ModelConfig::numSlidingLayers() const {
  return std::count(layerKinds.begin(), layerKinds.end(), LayerKind::Sliding);
}

int64_t ModelConfig::numFullLayers() const {
  return std::count(layerKinds.begin(), layerKinds.end(), LayerKind::Full);
}

StatusOr<ModelConfig> ModelConfig::parse(const std::string &text,
                                         const std::string &source) {
  StatusOr<json> parsed = parseJson(text, source);
  if (!parsed.ok())
    return parsed.status();
  const json &root = *parsed;
  if (!root.is_object())
    return Status::error(source + ": expected a JSON object, found " +
                         std::string(root.type_name()));
  FieldReader reader(root, source);

  StatusOr<const json *> architectures = reader.required("architectures");
  if (!architectures.ok())
    return architectures.status();
  const json &archs = **architectures;
  if (!archs.is_array() ||
      std::find(archs.begin(), archs.end(), kArchitecture) == archs.end())
    return reader.error(std::string("architectures must contain ") +
                        kArchitecture + ", found " + jsonExcerpt(archs));
  if (Status s = checkFixedFields(root, reader); !s.ok())
    return s;
  if (Status s = checkQuantizationConfig(root, reader); !s.ok())
    return s;

  ModelConfig config;
  struct {
    const char *key;
    int64_t *field;
    int64_t limit;
  } sizes[] = {
      {"hidden_size", &config.hiddenSize, kMaxWidth},
      {"intermediate_size", &config.intermediateSize, kMaxWidth},
      {"num_hidden_layers", &config.numLayers, kMaxLayers},
      {"num_attention_heads", &config.numHeads, kMaxHeads},
      {"num_key_value_heads", &config.numKVHeads, kMaxHeads},
      {"vocab_size", &config.vocabSize, kMaxTokens},
      {"max_position_embeddings", &config.maxPositionEmbeddings, kMaxTokens}};
  for (const auto &size : sizes) {
    StatusOr<int64_t> value = reader.positive(size.key, size.limit);
    if (!value.ok())
      return value.status();
    *size.field = *value;
  }

  StatusOr<const json *> window = reader.required("sliding_window");
  if (!window.ok())
    return window.status();
  StatusOr<int64_t> windowValue = reader.integer("sliding_window", **window);
  if (!windowValue.ok())
    return windowValue.status();
  if (*windowValue < 1)
    return reader.error("sliding_window must be at least 1, found " +
                        std::to_string(*windowValue));
  config.slidingWindow = *windowValue;

  StatusOr<double> eps = reader.requiredNumber("layer_norm_eps");
  if (!eps.ok())
    return eps.status();
  if (!(*eps > 0))
    return reader.error("layer_norm_eps must be positive, found " +
                        json(*eps).dump());
  config.layerNormEps = *eps;

  StatusOr<double> logitScale = reader.requiredNumber("logit_scale");
  if (!logitScale.ok())
    return logitScale.status();
  config.logitScale = *logitScale;

  if (config.numHeads % config.numKVHeads != 0)
    return reader.error("num_key_value_heads (" +
                        std::to_string(config.numKVHeads) +
                        ") must divide num_attention_heads (" +
                        std::to_string(config.numHeads) + ")");

  auto headDimField = root.find("head_dim");
  if (headDimField != root.end() && !headDimField->is_null()) {
    StatusOr<int64_t> headDim = reader.positive("head_dim", kMaxHeadDim);
    if (!headDim.ok())
      return headDim.status();
    config.headDim = *headDim;
  } else if (config.hiddenSize % config.numHeads != 0) {
    return reader.error("hidden_size (" + std::to_string(config.hiddenSize) +
                        ") is not divisible by num_attention_heads (" +
                        std::to_string(config.numHeads) +
                        ") and head_dim is not given");
  } else {
    config.headDim = config.hiddenSize / config.numHeads;
    if (config.headDim > kMaxHeadDim)
      return reader.error("head_dim (hidden_size / num_attention_heads) must "
                          "be at most " +
                          std::to_string(kMaxHeadDim) + ", found " +
                          std::to_string(config.headDim));
  }

  if (Status s = parseLayerKinds(root, reader, config); !s.ok())
    return s;
  if (config.headDim % 2 != 0 && config.numSlidingLayers() > 0)
    return reader.error("head_dim (" + std::to_string(config.headDim) +
                        ") must be even for RoPE");
  if (Status s = parseRope(root, reader, config); !s.ok())
    return s;
  if (Status s = parseEosTokenIds(root, reader, config); !s.ok())
    return s;

  auto tie = root.find("tie_word_embeddings");
  if (tie != root.end()) {
    if (!tie->is_boolean())
      return reader.error("tie_word_embeddings must be true or false, found " +
                          jsonExcerpt(*tie));
    if (!tie->get<bool>())
      return reader.error("tie_word_embeddings is false, but Cohere2 computes "
                          "the logits with the embedding matrix");
  }
  return config;
}

StatusOr<ModelConfig> ModelConfig::fromFile(const std::string &path) {
  // Reading /dev/zero (or a pipe nobody writes) would never end.
  struct stat info;
  if (::stat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode))
    return Status::error(path +
                         ": not a regular file (expected a config.json)");
  std::ifstream file(path, std::ios::binary);
  if (!file)
    return Status::error(path + ": cannot open (" + std::strerror(errno) + ")");
  std::ostringstream text;
  text << file.rdbuf();
  if (file.bad())
    return Status::error(path + ": cannot read");
  return parse(text.str(), path);
}

namespace {

json toJsonValue(const ModelConfig &config) {
  json layerTypes = json::array();
  for (LayerKind kind : config.layerKinds)
    layerTypes.push_back(layerKindName(kind));
  return {
      {"architectures", json::array({kArchitecture})},
      {"model_type", "cohere2"},
      {"hidden_size", config.hiddenSize},
      {"intermediate_size", config.intermediateSize},
      {"num_hidden_layers", config.numLayers},
      {"num_attention_heads", config.numHeads},
      {"num_key_value_heads", config.numKVHeads},
      {"head_dim", config.headDim},
      {"vocab_size", config.vocabSize},
      {"sliding_window", config.slidingWindow},
      {"layer_types", layerTypes},
      {"rope_parameters",
       {{"rope_theta", config.ropeTheta}, {"rope_type", "default"}}},
      {"layer_norm_eps", config.layerNormEps},
      {"logit_scale", config.logitScale},
      {"max_position_embeddings", config.maxPositionEmbeddings},
      {"eos_token_id", config.eosTokenIds},
      {"tie_word_embeddings", true},
  };
}

/// The first leaf (objects by key, same-length arrays by index) where `found`
/// and `expected` differ, named by its path from `field`.
std::optional<ConfigDifference> firstDifference(const json &found,
                                                const json &expected,
                                                const std::string &field) {
  if (found == expected)
    return std::nullopt;
  if (found.is_object() && expected.is_object()) {
    for (auto it = found.begin(); it != found.end(); ++it) {
      auto other = expected.find(it.key());
      if (other == expected.end())
        break;
      std::string path = field.empty() ? it.key() : field + "." + it.key();
      if (auto d = firstDifference(*it, *other, path))
        return d;
    }
  } else if (found.is_array() && expected.is_array() &&
             found.size() == expected.size()) {
    for (size_t i = 0; i < found.size(); ++i)
      if (auto d = firstDifference(found[i], expected[i],
                                   field + "[" + std::to_string(i) + "]"))
        return d;
  }
  return ConfigDifference{field, jsonExcerpt(found), jsonExcerpt(expected)};
}

} // namespace

std::string ModelConfig::toJson() const { return toJsonValue(*this).dump(2); }

std::optional<ConfigDifference> firstDifference(const ModelConfig &found,
                                                const ModelConfig &expected) {
  return firstDifference(toJsonValue(found), toJsonValue(expected), "");
}

} // namespace cohere2c
