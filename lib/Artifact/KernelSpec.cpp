//===- KernelSpec.cpp -----------------------------------------------------===//

#include "Artifact/KernelSpec.h"
#include "Support/EnumNames.h"

namespace cohere2c {

namespace {

// In the order of the enums.
constexpr std::array<std::string_view, 17> kFamilyNames = {
    "embedding",
    "layer_norm",
    "layer_norm_quant_fp8",
    "quantize_fp8",
    "swiglu",
    "swiglu_quant_fp8",
    "residual_sum",
    "gather_rows",
    "sample_tokens",
    "kv_append",
    "attention",
    "attention_prefill",
    "attention_merge",
    "gemv",
    "gemv_fp8",
    "random_uniform",
    "random_uniform_fp8"};
static_assert(kFamilyNames.size() == (size_t)KernelFamily::RandomUniformFP8 + 1);
constexpr std::array<std::string_view, 3> kRowsNames = {"all", "generated",
                                                        "prompt"};
static_assert(kRowsNames.size() == (size_t)KernelRows::Prompt + 1);

} // namespace

std::string_view kernelFamilyName(KernelFamily family) {
  return enumName(kFamilyNames, family);
}
std::optional<KernelFamily> kernelFamilyNamed(std::string_view name) {
  return enumNamed<KernelFamily>(kFamilyNames, name);
}
std::string_view kernelRowsName(KernelRows rows) {
  return enumName(kRowsNames, rows);
}
std::optional<KernelRows> kernelRowsNamed(std::string_view name) {
  return enumNamed<KernelRows>(kRowsNames, name);
}

std::vector<int> rowStrideArguments(const KernelSpec &spec) {
  switch (spec.family) {
  case KernelFamily::KVAppend:
    return spec.rope ? std::vector<int>{0, 1, 9} : std::vector<int>{0, 1};
  case KernelFamily::Attention:
  case KernelFamily::AttentionPrefill:
    return {0};
  case KernelFamily::SwiGLU:
  case KernelFamily::SwiGLUQuantFP8:
    return {0, 1};
  default:
    return {};
  }
}

std::vector<int> outputArguments(const KernelSpec &spec, int count) {
  switch (spec.family) {
  case KernelFamily::Embedding:
  case KernelFamily::LayerNorm:
  case KernelFamily::SwiGLU:
  case KernelFamily::GatherRows:
    return {2};
  case KernelFamily::LayerNormQuantFP8:
  case KernelFamily::SwiGLUQuantFP8:
    return {2, 3};
  case KernelFamily::QuantizeFP8:
    return {1, 2};
  case KernelFamily::AttentionMerge:
    return {1};
  case KernelFamily::SampleTokens:
    return {3};
  case KernelFamily::RandomUniform:
    return {0};
  case KernelFamily::RandomUniformFP8:
    return {0, 1};
  case KernelFamily::KVAppend:
    return spec.rope ? std::vector<int>{5, 10} : std::vector<int>{5};
  case KernelFamily::Attention:
    return {5, 10};
  case KernelFamily::AttentionPrefill:
    return {5, 11};
  case KernelFamily::ResidualSum:
  case KernelFamily::Gemv:
  case KernelFamily::GemvFP8:
    return {count - 1};
  }
  return {};
}

} // namespace cohere2c
