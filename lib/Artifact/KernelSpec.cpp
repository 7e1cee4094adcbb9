//===- KernelSpec.cpp -----------------------------------------------------===//

#include "Artifact/KernelSpec.h"

#include <algorithm>
#include <utility>

namespace cohere2c {

namespace {

constexpr std::pair<KernelFamily, std::string_view> kFamilyNames[] = {
    {KernelFamily::Embedding, "embedding"},
    {KernelFamily::LayerNorm, "layer_norm"},
    {KernelFamily::LayerNormQuantFP8, "layer_norm_quant_fp8"},
    {KernelFamily::QuantizeFP8, "quantize_fp8"},
    {KernelFamily::SwiGLU, "swiglu"},
    {KernelFamily::SwiGLUQuantFP8, "swiglu_quant_fp8"},
    {KernelFamily::ResidualSum, "residual_sum"},
    {KernelFamily::GatherRows, "gather_rows"},
    {KernelFamily::GreedyTokens, "greedy_tokens"},
    {KernelFamily::KVAppend, "kv_append"},
    {KernelFamily::Attention, "attention"},
    {KernelFamily::AttentionPrefill, "attention_prefill"},
    {KernelFamily::AttentionMerge, "attention_merge"},
    {KernelFamily::Gemv, "gemv"},
    {KernelFamily::GemvFP8, "gemv_fp8"},
};

constexpr std::pair<KernelRows, std::string_view> kRowsNames[] = {
    {KernelRows::All, "all"},
    {KernelRows::Generated, "generated"},
    {KernelRows::Prompt, "prompt"},
};

template <typename E, size_t N>
std::string_view nameIn(const std::pair<E, std::string_view> (&table)[N],
                        E value) {
  auto it =
      std::find_if(std::begin(table), std::end(table),
                   [&](const auto &entry) { return entry.first == value; });
  return it == std::end(table) ? std::string_view() : it->second;
}

template <typename E, size_t N>
std::optional<E> namedIn(const std::pair<E, std::string_view> (&table)[N],
                         std::string_view name) {
  auto it =
      std::find_if(std::begin(table), std::end(table),
                   [&](const auto &entry) { return entry.second == name; });
  return it == std::end(table) ? std::nullopt : std::optional<E>(it->first);
}

} // namespace

std::string_view kernelFamilyName(KernelFamily family) {
  return nameIn(kFamilyNames, family);
}
std::optional<KernelFamily> kernelFamilyNamed(std::string_view name) {
  return namedIn(kFamilyNames, name);
}
std::string_view kernelRowsName(KernelRows rows) {
  return nameIn(kRowsNames, rows);
}
std::optional<KernelRows> kernelRowsNamed(std::string_view name) {
  return namedIn(kRowsNames, name);
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
  case KernelFamily::GreedyTokens:
  case KernelFamily::AttentionMerge:
    return {1};
  case KernelFamily::KVAppend:
    return spec.rope ? std::vector<int>{5, 10} : std::vector<int>{5};
  case KernelFamily::Attention:
    return {5};
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
