//===- StepParams.cpp -----------------------------------------------------===//

#include "Artifact/StepParams.h"
#include "Support/EnumNames.h"

#include <algorithm>

namespace cohere2c {

namespace {

constexpr std::array<std::string_view, kNumStepParams> kNames = {
    "tokens",
    "rows",
    "block_size",
    "table_width",
    "decode_tokens",
    "prefill_tiles",
    "prefill_splits",
    "prefill_blocks",
    "prefill_partials",
    "prefill_merge_tokens",
    "decode_splits",
    "decode_split_blocks",
    "token_splits",
    "token_split_blocks",
    "decode_merge_tokens",
    "token_merge_tokens",
    "gemv_token",
    "gemm_tokens",
    "sampled_rows",
    "side_stream"};

} // namespace

std::string_view stepParamName(StepParam param) { return enumName(kNames, param); }

std::optional<StepParam> stepParamNamed(std::string_view name) {
  return enumNamed<StepParam>(kNames, name);
}

bool isDecodeStep(int64_t tokens, int64_t generated, int64_t numSeqs, int64_t rows) {
  return tokens > 0 && generated == tokens && tokens == numSeqs && rows == tokens;
}

int64_t splitsFor(int64_t tokens, int64_t maxKeys, int64_t splitTokens) {
  int64_t wanted = tokens ? splitTokens / tokens : 1;
  wanted = std::clamp<int64_t>(std::min(wanted, maxKeys / kMinDecodeSplitKeys), 1,
                               kMaxDecodeSplits);
  int64_t splits = 1;
  while (splits * 2 <= wanted)
    splits *= 2;
  return splits;
}

StepParamValues stepParams(int64_t tokens, int64_t generated, int64_t rows,
                           int64_t blockSize, int64_t tableWidth,
                           int64_t maxKeys, int64_t maxGeneratedKeys,
                           bool tokensOnly) {
  int64_t tiles =
      generated < tokens ? (tokens + kPrefillTileTokens - 1) / kPrefillTileTokens : 0;
  int64_t keyTiles = (maxKeys + kPrefillKeyTile - 1) / kPrefillKeyTile;
  int64_t splits =
      tiles ? std::clamp<int64_t>(std::min(kPrefillSplitTiles / tiles,
                                           keyTiles / kMinPrefillSplitKeyTiles),
                                  1, kMaxPrefillSplits)
            : 1;
  int64_t decodeSplits = splitsFor(generated, maxGeneratedKeys, kDecodeSplitTokens);
  int64_t tokenSplits =
      splitsFor(tokens, std::max(maxKeys, maxGeneratedKeys), kTokenSplitTokens);
  using P = StepParam;
  StepParamValues v;
  v[P::Tokens] = tokens;
  v[P::Rows] = rows;
  v[P::BlockSize] = blockSize;
  v[P::TableWidth] = tableWidth;
  v[P::DecodeTokens] = generated;
  v[P::PrefillTiles] = tiles;
  v[P::PrefillSplits] = splits;
  v[P::PrefillBlocks] = tiles * splits;
  v[P::PrefillPartials] = splits > 1 ? tokens * splits : 0;
  v[P::PrefillMergeTokens] = splits > 1 ? tokens : 0;
  v[P::DecodeSplits] = decodeSplits;
  v[P::DecodeSplitBlocks] = generated * decodeSplits;
  v[P::TokenSplits] = tokenSplits;
  v[P::TokenSplitBlocks] = tokens * tokenSplits;
  v[P::DecodeMergeTokens] = decodeSplits > 1 ? generated : 0;
  v[P::TokenMergeTokens] = tokenSplits > 1 ? tokens : 0;
  v[P::GemvToken] = tokens == 1 ? 1 : 0;
  v[P::GemmTokens] = tokens == 1 ? 0 : tokens;
  v[P::SampledRows] = tokensOnly ? rows : 0;
  v[P::SideStream] = tokens <= kSideStreamMaxTokens ? 1 : 0;
  return v;
}

} // namespace cohere2c
