//===- Manifest.h - What a compiled artifact says about itself ------------===//
//
// Every OUT.so carries a manifest (JSON, exported as the C string
// `cohere2c_manifest`): the model config, the target and precision it was
// compiled for, the weight layout its step function reads, and its KV-cache
// groups. The runtime checks it before binding weights.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_ARTIFACT_MANIFEST_H
#define COHERE2C_ARTIFACT_MANIFEST_H

#include "Artifact/LaunchPlan.h"
#include "Artifact/Precision.h"
#include "Artifact/WeightLayout.h"
#include "Model/Config.h"
#include "Support/Status.h"

#include <map>
#include <string>
#include <vector>

namespace cohere2c {

/// Layers that share a window and a block table form a KV group. A model's
/// groups hold the same number of layers, so that a block (B tokens of K
/// and V for each layer of a group) takes the same bytes in every group and
/// all groups draw their blocks from one pool, as vLLM's hybrid KV cache
/// manager does: a sliding group releases the blocks that fall out of its
/// window to the full groups. A window's layers are split into groups of
/// gcd(layer count of each window) layers (Command R7B: 8 full layers and
/// 24 sliding ones make one full group and three sliding groups of 8).
/// A block in any group is laid out as
/// [layers of the group][K, V][block size][KV heads][head_dim].
/// Groups are ordered by window (the full layers' 0 first), then by their
/// first layer; a group's index in that order is how the step ABI and the
/// launch plan name it.
struct KVGroup {
  int64_t window = 0;          // tokens a query sees; 0 = unbounded (full)
  std::vector<int64_t>
      layers; // model layer indices, ascending; position = slot in a block
  /// Index among the groups of its window when that window's layers are
  /// split over several, else -1.
  int64_t part = -1;

  /// "full" or "sliding<W>" ("sliding4096"), as the kernels are named, then
  /// ".<part>" when the window has several groups ("sliding4096.2"): for
  /// messages and metrics.
  std::string name() const;
};

/// The groups of layers of windows windowOfLayer[layer] (0: full
/// attention), in KVGroup's order and sizes.
std::vector<KVGroup>
kvGroupsOfWindows(const std::map<int64_t, int64_t> &windowOfLayer);

/// The groups the frontend's attention ops get from `config` (its layer
/// kinds and sliding window): what a manifest's kv_groups, read from the
/// compiled ops, must agree with.
std::vector<KVGroup> kvGroupsFor(const ModelConfig &config);

/// The artifact's exported symbols holding its manifest: the JSON text
/// (NUL-terminated) and its digest (a uint64_t, manifestDigest of the text).
inline constexpr const char *kManifestSymbol = "cohere2c_manifest";
inline constexpr const char *kManifestDigestSymbol = "cohere2c_manifest_digest";

/// XXH3-64 of a manifest's JSON text. The compiler stores it beside the
/// text; the runtime refuses a manifest whose digest differs (edited after
/// the code it describes was compiled).
uint64_t manifestDigest(const std::string &json);

struct Manifest {
  /// 2: weights_id, and OUT.weights files with a header (WeightsFile.h).
  /// 3: weights in the order of expectedTensors with q, k, v, gate, up
  /// adjacent (FP8 scales after each run); launch-plan column views.
  /// 4: launch-plan buffers sized by a named parameter ("rows"); the step
  /// input "generated" and the parameters decode_tokens, prefill_tiles.
  /// 5: every kernel waits for the launch before it (griddepcontrol.wait)
  /// before it reads or writes activations, so that the runtime may launch
  /// it early (programmatic dependent launch); the prefill_splits family of
  /// parameters; the step input greedy_tokens and the parameter greedy_rows.
  /// 6: fork and join steps, side-stream steps; the decode_splits family of
  /// parameters (the split attention kernel's splits an argument).
  /// 7: every kernel step carries its KernelSpec ("spec"); the o and down
  /// projections of FP8 layers write f32.
  /// 8: the launch plan names its weight-fill kernels ("weight_fill").
  /// 9: the split attention kernels take a block per KV head and their
  /// output before their splits and partials (the prefill kernel's order);
  /// the parameters decode_merge_tokens and token_merge_tokens (0 where one
  /// split stores the output and no merge runs).
  /// 10: one KV group per distinct window (kv_groups entries without a
  /// name); the plan's inputs kv_tables and kv_pool with a group in place
  /// of the full and sliding ones, one parameter table_width; kernel specs
  /// say whether the kernel synchronizes its grid ("grid_sync").
  /// 11: KV groups of one size (a window's layers split into several), all
  /// drawing blocks from one pool (the plan's kv_pool inputs one buffer).
  /// 12: GEMMs that add an addend ("plus") and one-token linear kernels
  /// with one (spec "addend"): the residual stream summed in their epilogue;
  /// greedy_tokens became sample_tokens (inputs temperatures, noise_seeds,
  /// sampled_tokens; parameter sampled_rows): temperature sampling on the
  /// device.
  /// 13: kv_cache_dtype ("auto" or "fp8").
  static constexpr int kFormatVersion = 13;

  ModelConfig config;
  std::string target;    // "host" or "cuda"
  std::string precision; // "f32", "bf16" or "fp8-rowwise"
  /// "auto" (the precision's activation dtype) or "fp8" (Precision.h).
  std::string kvCacheDtype = "auto";
  WeightLayout weights;
  /// The id in the header of the OUT.weights written with this artifact
  /// (WeightsFile.h: 32 lowercase hex digits); empty when compiled from a
  /// config alone, with no weights file.
  std::string weightsId;
  /// From the compiled attention ops (their windows are what the kernels
  /// were specialized on), checked against the config on parse.
  std::vector<KVGroup> kvGroups;
  /// The step as launches (cuda target only).
  LaunchPlan launchPlan;

  /// What the compiler would write for `config` at `target` and
  /// `precision`, less what only compiling gives (weight layout, launch
  /// plan): the KV groups come from the config (kvGroupsFor). For the
  /// engine's bookkeeping without an artifact (tests, host benchmarks).
  static Manifest ofConfig(const ModelConfig &config, std::string target,
                           std::string precision);

  std::string toJson() const;
  /// Errors name `source`: bad JSON, another format version, a missing
  /// field, an invalid config, a weights_id that is neither empty nor 32
  /// lowercase hex digits.
  static StatusOr<Manifest> parse(const std::string &text,
                                  const std::string &source);
};

/// Bytes of one KV block of any of m's groups (the layout of KVGroup, all
/// groups holding the same number of layers): layers in a group x 2 (K, V)
/// x blockSize x num_key_value_heads x head_dim x the size of the KV
/// cache's storage dtype (Precision::kvCache). `m` is a parsed manifest (a
/// known precision). With the config's limits (Config.h) and blockSize <= 2^16
/// this is at most 2^49.
int64_t kvBytesPerBlock(const Manifest &m, int64_t blockSize);

} // namespace cohere2c

#endif // COHERE2C_ARTIFACT_MANIFEST_H
