//===- Manifest.cpp -------------------------------------------------------===//

#include "Artifact/Manifest.h"
#include "Artifact/WeightsFile.h"
#include "Support/Json.h"

#include <nlohmann/json.hpp>

#include <cassert>

// xxHash header-only, as in the KV cache's block hashes.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace cohere2c {

uint64_t manifestDigest(const std::string &json) {
  return XXH3_64bits(json.data(), json.size());
}

using nlohmann::json;

std::vector<KVGroup> kvGroupsFor(const ModelConfig &config) {
  std::vector<KVGroup> groups(kNumKVGroups);
  groups[kFullGroup].name = "full";
  groups[kSlidingGroup].name = "sliding";
  groups[kSlidingGroup].window = config.slidingWindow;
  for (int64_t i = 0; i < config.numLayers; ++i)
    groups[config.layerKinds[i] == LayerKind::Full ? kFullGroup : kSlidingGroup]
        .layers.push_back(i);
  return groups;
}

int64_t kvBytesPerBlock(const Manifest &m, KVGroupIndex group,
                        int64_t blockSize) {
  StatusOr<Precision> precision = Precision::forTarget(m.precision, m.target);
  assert(precision.ok() && "the precision of a parsed manifest is known");
  return (int64_t)m.kvGroups[group].layers.size() * 2 * blockSize *
         m.config.numKVHeads * m.config.headDim *
         (int64_t)dtypeSize(precision->activations);
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
    groupsJson.push_back(
        {{"name", g.name}, {"window", g.window}, {"layers", g.layers}});
  json j = {{"format_version", kFormatVersion},
            {"config", json::parse(config.toJson())},
            {"target", target},
            {"precision", precision},
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
/// They must be the full and the sliding group, in that order, and agree
/// with the layer kinds and window of the manifest's config.
StatusOr<std::vector<KVGroup>> parseKVGroups(const json &j, const ModelConfig &config,
                                             const std::string &source) {
  auto bad = [&](const std::string &what) {
    return Status::error(source + ": manifest kv_groups " + what);
  };
  const json *groups = j.contains("kv_groups") ? &j.at("kv_groups") : nullptr;
  if (!groups || !groups->is_array() || groups->size() != kNumKVGroups)
    return bad("must be an array of the full and the sliding group");
  std::vector<KVGroup> parsed;
  for (const json &g : *groups) {
    if (!g.is_object() || !g.contains("name") || !g["name"].is_string() ||
        !g.contains("window") || !g["window"].is_number_integer() || !g.contains("layers") ||
        !g["layers"].is_array())
      return bad("entry " + jsonExcerpt(g) +
                 " must have a name, a window and layers");
    KVGroup group{g["name"].get<std::string>(), g["window"].get<int64_t>(), {}};
    for (const json &layer : g["layers"]) {
      if (!layer.is_number_integer())
        return bad("entry " + jsonExcerpt(g) + ": layers must be integers");
      group.layers.push_back(layer.get<int64_t>());
    }
    parsed.push_back(std::move(group));
  }
  std::vector<KVGroup> expected = kvGroupsFor(config);
  for (int i = 0; i < kNumKVGroups; ++i) {
    const KVGroup &p = parsed[i], &e = expected[i];
    // A group without layers has no window to agree on.
    if (p.name != e.name || p.layers != e.layers || (!e.layers.empty() && p.window != e.window))
      return bad("entry " + jsonExcerpt(groups->at(i)) +
                 " disagrees with the config (" + e.name +
                 " window " + std::to_string(e.window) + ", " +
                 std::to_string(e.layers.size()) + " layers)");
  }
  return parsed;
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
  for (const char *key : {"config", "target", "precision"})
    if (!j.contains(key))
      return Status::error(source + ": manifest lacks '" + key + "'");
  if (!j["target"].is_string() || !j["precision"].is_string())
    return Status::error(source + ": manifest target and precision must be strings");
  StatusOr<ModelConfig> config =
      ModelConfig::parse(j["config"].dump(), source + " (manifest config)");
  if (!config.ok())
    return config.status();
  Manifest m;
  m.config = *config;
  m.target = j["target"].get<std::string>();
  m.precision = j["precision"].get<std::string>();
  if (m.target != "host" && m.target != "cuda")
    return Status::error(source + ": unknown target '" + m.target + "'");
  StatusOr<Precision> precision = Precision::forTarget(m.precision, m.target);
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
    if (Status s = plan->check(m.weights, source); !s.ok())
      return s;
    m.launchPlan = std::move(*plan);
  }
  return m;
}

} // namespace cohere2c
