//===- Config.h - The Cohere2 model description from HF config.json -------===//
//
// Parses a Hugging Face config.json of a Cohere2ForCausalLM model in both
// forms it is published in:
//   - released (transformers 4.48): `sliding_window_pattern`, `rope_theta`,
//     no `layer_types`;
//   - current (transformers 5): `layer_types`, `rope_parameters.rope_theta`.
// Layer i is full attention iff (i + 1) % sliding_window_pattern == 0 unless
// `layer_types` says otherwise. head_dim defaults to hidden_size /
// num_attention_heads. Unknown keys are ignored.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_MODEL_CONFIG_H
#define COHERE2C_MODEL_CONFIG_H

#include "Support/Status.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cohere2c {

/// How a layer attends: sliding-window attention with interleaved RoPE, or
/// full causal attention with no position encoding.
enum class LayerKind { Sliding, Full };

struct ModelConfig {
  int64_t hiddenSize = 0;
  int64_t intermediateSize = 0;
  int64_t numLayers = 0;
  int64_t numHeads = 0;
  int64_t numKVHeads = 0;
  int64_t headDim = 0;
  int64_t vocabSize = 0;
  /// Keys a sliding layer's query at position p sees: p - W < j <= p.
  int64_t slidingWindow = 0;
  double ropeTheta = 10000.0;
  double layerNormEps = 1e-5;
  double logitScale = 1.0;
  /// The longest sequence (prompt + generated tokens) the model accepts.
  int64_t maxPositionEmbeddings = 0;
  /// `eos_token_id`: one id or a list of ids; empty when the config has none.
  std::vector<int64_t> eosTokenIds;
  /// One entry per layer.
  std::vector<LayerKind> layerKinds;

  int64_t numSlidingLayers() const;
  int64_t numFullLayers() const;

  /// Parses config.json text. `source` names the file in error messages.
  /// Errors (message starts with `source`): not JSON; an architecture other
  /// than Cohere2ForCausalLM; `model_type` other than "cohere2", `hidden_act`
  /// other than "silu", `attention_bias` other than false (when present); a
  /// missing required field; a non-positive size; a size above its
  /// plausibility limit (hidden_size, intermediate_size <= 2^20; head_dim <=
  /// 1024; num_hidden_layers, num_attention_heads, num_key_value_heads <=
  /// 1024; vocab_size, max_position_embeddings <= 2^24), which keeps every
  /// weight offset inside int64; num_attention_heads not divisible by
  /// num_key_value_heads; a window < 1; `layer_types` of the wrong length or
  /// with an unknown kind; odd head_dim while a layer uses RoPE;
  /// tie_word_embeddings false.
  static StatusOr<ModelConfig> parse(const std::string &text,
                                     const std::string &source);
  /// Reads and parses a file; a missing file, or one that is not a regular
  /// file (a folder, /dev/zero), is an error naming it.
  static StatusOr<ModelConfig> fromFile(const std::string &path);

  /// The config in the current form (`layer_types`, `rope_parameters`), for
  /// manifests: parse(toJson()) gives back an equal config.
  std::string toJson() const;
};

const char *layerKindName(LayerKind kind); // "sliding_attention" / "full_attention"

/// A field in which two configs differ: its name in toJson() (a path such as
/// "layer_types[3]" or "rope_parameters.rope_theta") and both values as JSON,
/// for a message (jsonExcerpt: at most 80 bytes each).
struct ConfigDifference {
  std::string field, found, expected;
};

/// The first field, in the alphabetical order of toJson()'s names, in which
/// `found` differs from `expected`; none when both describe the same model
/// (whichever form their config.json had).
std::optional<ConfigDifference> firstDifference(const ModelConfig &found,
                                                const ModelConfig &expected);

} // namespace cohere2c

#endif // COHERE2C_MODEL_CONFIG_H
