//===- Manifest.cpp -------------------------------------------------------===//

#include "Artifact/Manifest.h"
#include "Artifact/WeightsFile.h"
#include "Support/Json.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cassert>
#include <numeric>
#include <utility>

// xxHash header-only, as in the KV cache's block hashes.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace cohere2c {

uint64_t manifestDigest(const std::string &json) {
  return XXH3_64bits(json.data(), json.size());
}

using nlohmann::json;

std::string KVGroup::name() const {
  return (window ? "sliding" + std::to_string(window) : std::string("full")) +
         (part >= 0 ? "." + std::to_string(part) : std::string());
}

std::vector<KVGroup>
kvGroupsOfWindows(const std::map<int64_t, int64_t> &windowOfLayer) {
  std::map<int64_t, std::vector<int64_t>> layersOf;
  for (auto [layer, window] : windowOfLayer)
    layersOf[window].push_back(layer);
  int64_t size = 0;
  for (const auto &[window, layers] : layersOf)
    size = std::gcd(size, (int64_t)layers.size());
  std::vector<KVGroup> groups;
  for (const auto &[window, layers] : layersOf) {
    int64_t parts = (int64_t)layers.size() / size;
    for (int64_t p = 0; p < parts; ++p)
      groups.push_back(
          {window,
           {layers.begin() + p * size, layers.begin() + (p + 1) * size},
           parts > 1 ? p : -1});
  }
  return groups;
}

std::vector<KVGroup> kvGroupsFor(const ModelConfig &config) {
  std::map<int64_t, int64_t> windowOfLayer;
  for (int64_t i = 0; i < config.numLayers; ++i)
    windowOfLayer[i] =
        config.layerKinds[i] == LayerKind::Full ? 0 : config.slidingWindow;
  return kvGroupsOfWindows(windowOfLayer);
}

Manifest Manifest::ofConfig(const ModelConfig &config, std::string target,
                            std::string precision) {
  Manifest m;
  m.config = config;
  m.target = std::move(target);
  m.precision = std::move(precision);
  m.kvGroups = kvGroupsFor(config);
  return m;
}

int64_t kvBytesPerBlock(const Manifest &m, int64_t blockSize) {
  StatusOr<Precision> precision =
      Precision::forTarget(m.precision, m.target, m.kvCacheDtype);
  assert(precision.ok() && "the precision of a parsed manifest is known");
  assert(!m.kvGroups.empty() && "a parsed manifest has KV groups");
  assert(std::all_of(m.kvGroups.begin(), m.kvGroups.end(),
                     [&](const KVGroup &g) {
                       return g.layers.size() == m.kvGroups[0].layers.size();
                     }) &&
         "the groups of a parsed manifest hold the same number of layers");
  return (int64_t)m.kvGroups[0].layers.size() * 2 * blockSize *
         m.config.numKVHeads * m.config.headDim *
         (int64_t)dtypeSize(precision->kvCache);
}

std::string Manifest::toJson() const {
  json weightsJson = json::array();
  for (const WeightEntry &w : weights.entries)
    weightsJson.push_back({{"name", w.name},
                           {"shape", w.shape},
                           {"dtype", dtypeName(w.dtype)},
                           {"offset", w.offset},
                           {"bytes", w.numBytes}});
  json groupsJson = json::array();
  for (const KVGroup &g : kvGroups)
    groupsJson.push_back({{"window", g.window}, {"layers", g.layers}});
  json j = {{"format_version", kFormatVersion},
            {"config", json::parse(config.toJson())},
            {"target", target},
            {"precision", precision},
            {"kv_cache_dtype", kvCacheDtype},
            {"weights_bytes", weights.totalBytes},
            {"weights_id", weightsId},
            {"weights", weightsJson},
            {"kv_groups", groupsJson}};
  if (target == "cuda")
    j["launch_plan"] = json::parse(launchPlan.toJson());
  return j.dump();
}

namespace {

/// The manifest's kv_groups: the groups the compiler read from the
/// attention ops (their windows are what the kernels were specialized on).
/// They must be the groups of the layer kinds and window of the manifest's
/// config, in KVGroup's order.
StatusOr<std::vector<KVGroup>> parseKVGroups(const json &j, const ModelConfig &config,
                                             const std::string &source) {
  auto bad = [&](const std::string &what) {
    return Status::error(source + ": manifest kv_groups " + what);
  };
  const json *groups = j.contains("kv_groups") ? &j.at("kv_groups") : nullptr;
  if (!groups || !groups->is_array())
    return bad("must be an array of {window, layers}");
  std::vector<KVGroup> parsed;
  for (const json &g : *groups) {
    if (!g.is_object() || !g.contains("window") ||
        !g["window"].is_number_integer() || !g.contains("layers") ||
        !g["layers"].is_array())
      return bad("entry " + jsonExcerpt(g) + " must have a window and layers");
    KVGroup group{g["window"].get<int64_t>(), {}};
    for (const json &layer : g["layers"]) {
      if (!layer.is_number_integer())
        return bad("entry " + jsonExcerpt(g) + ": layers must be integers");
      group.layers.push_back(layer.get<int64_t>());
    }
    parsed.push_back(std::move(group));
  }
  std::vector<KVGroup> expected = kvGroupsFor(config);
  auto describe = [](const std::vector<KVGroup> &gs) {
    std::string text;
    for (const KVGroup &g : gs)
      text += (text.empty() ? "" : ", ") + g.name() + " (" +
              std::to_string(g.layers.size()) + " layers)";
    return text.empty() ? std::string("none") : text;
  };
  bool agree = parsed.size() == expected.size();
  for (size_t i = 0; agree && i < parsed.size(); ++i)
    agree = parsed[i].window == expected[i].window &&
            parsed[i].layers == expected[i].layers;
  if (!agree)
    return bad(jsonExcerpt(*groups) +
               " disagree with the config's groups: " + describe(expected));
  return expected;
}

} // namespace

StatusOr<Manifest> Manifest::parse(const std::string &text,
                                   const std::string &source) {
  StatusOr<json> parsed = parseJson(text, source + ": the manifest");
  if (!parsed.ok())
    return parsed.status();
  json &j = *parsed;
  if (!j.is_object())
    return Status::error(source + ": the manifest is not a JSON object");
  if (!j.contains("format_version") || j["format_version"] != kFormatVersion)
    return Status::error(source + ": manifest format_version must be " +
                         std::to_string(kFormatVersion) +
                         " (compiled by another version of cohere2c-compile: "
                         "compile the model again)");
  for (const char *key : {"config", "target", "precision", "kv_cache_dtype"})
    if (!j.contains(key))
      return Status::error(source + ": manifest lacks '" + key + "'");
  if (!j["target"].is_string() || !j["precision"].is_string() ||
      !j["kv_cache_dtype"].is_string())
    return Status::error(
        source +
        ": manifest target, precision and kv_cache_dtype must be strings");
  StatusOr<ModelConfig> config =
      ModelConfig::parse(j["config"].dump(), source + " (manifest config)");
  if (!config.ok())
    return config.status();
  Manifest m;
  m.config = *config;
  m.target = j["target"].get<std::string>();
  m.precision = j["precision"].get<std::string>();
  m.kvCacheDtype = j["kv_cache_dtype"].get<std::string>();
  if (m.target != "host" && m.target != "cuda")
    return Status::error(source + ": unknown target '" + m.target + "'");
  StatusOr<Precision> precision =
      Precision::forTarget(m.precision, m.target, m.kvCacheDtype);
  if (!precision.ok())
    return Status::error(source + ": " + precision.status().message());
  // The layout is a function of the config and precision: rebuild it rather
  // than trust a second copy, and check the recorded total agrees.
  m.weights = WeightLayout::forModel(m.config, precision->activations,
                                     precision->fp8Linear);
  if (!j.contains("weights_bytes") || j["weights_bytes"] != m.weights.totalBytes)
    return Status::error(source + ": manifest weights_bytes disagrees with the "
                                  "layout of its config");
  if (!j.contains("weights_id") || !j["weights_id"].is_string() ||
      !isWeightsId(j["weights_id"].get<std::string>()))
    return Status::error(source + ": manifest weights_id must be empty or 32 "
                                  "lowercase hex digits");
  m.weightsId = j["weights_id"].get<std::string>();
  StatusOr<std::vector<KVGroup>> groups = parseKVGroups(j, m.config, source);
  if (!groups.ok())
    return groups.status();
  m.kvGroups = std::move(*groups);
  if (m.target == "cuda") {
    if (!j.contains("launch_plan"))
      return Status::error(source + ": a cuda manifest needs a launch_plan");
    StatusOr<LaunchPlan> plan = LaunchPlan::parse(j["launch_plan"].dump(), source);
    if (!plan.ok())
      return plan.status();
    if (Status s = plan->check(m.weights, (int64_t)m.kvGroups.size(), source);
        !s.ok())
      return s;
    m.launchPlan = std::move(*plan);
  }
  return m;
}

} // namespace cohere2c
