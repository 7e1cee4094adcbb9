//===- StepParams.h - The sizes of a cuda step, known only at run time ----===//
//
// A cuda artifact's launch plan fixes every size but those that change from
// step to step: the step's tokens, its logits rows, its block tables' width
// and the kernel splits chosen from them. The plan names them by StepParam
// (a closed set, so a plan naming another is malformed), and the runtime
// computes all of them once per step (stepParams).
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_ARTIFACT_STEPPARAMS_H
#define COHERE2C_ARTIFACT_STEPPARAMS_H

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace cohere2c {

/// The step parameters; stepParams says what each one is.
enum class StepParam : uint8_t {
  Tokens,
  Rows,
  BlockSize,
  TableWidth,
  DecodeTokens,
  PrefillTiles,
  PrefillSplits,
  PrefillBlocks,
  PrefillPartials,
  PrefillMergeTokens,
  DecodeSplits,
  DecodeSplitBlocks,
  TokenSplits,
  TokenSplitBlocks,
  DecodeMergeTokens,
  TokenMergeTokens,
  GemvToken,
  GemmTokens,
  SampledRows,
  SideStream,
};
inline constexpr int kNumStepParams = (int)StepParam::SideStream + 1;

/// The name of a parameter in a plan's text ("tokens", "decode_splits", ...).
std::string_view stepParamName(StepParam param);
/// The parameter of that name, or none.
std::optional<StepParam> stepParamNamed(std::string_view name);

/// The value of every step parameter in one step. Comparable, so that a
/// captured CUDA graph can be looked up by the sizes it was captured with.
struct StepParamValues {
  std::array<int64_t, kNumStepParams> values{};

  int64_t operator[](StepParam p) const { return values[(int)p]; }
  int64_t &operator[](StepParam p) { return values[(int)p]; }
  bool operator<(const StepParamValues &o) const { return values < o.values; }
  bool operator==(const StepParamValues &o) const { return values == o.values; }
};

/// The tensor-core prefill attention kernel: tokens per query tile, and
/// keys per step (its tiles start at multiples of it; its bf16 rounding of
/// the softmax weights depends on the tiling).
constexpr int64_t kPrefillTileTokens = 16;
constexpr int64_t kPrefillKeyTile = 32;
/// A step of fewer than kPrefillSplitTiles tiles splits each tile's keys
/// over up to kMaxPrefillSplits blocks (kPrefillSplitTiles / tiles), each
/// with at least kMinPrefillSplitKeyTiles key tiles of the longest sequence,
/// so that a short prompt over a long cached prefix still fills the GPU.
constexpr int64_t kPrefillSplitTiles = 128;
constexpr int64_t kMaxPrefillSplits = 16;
constexpr int64_t kMinPrefillSplitKeyTiles = 8;

/// The split (flash-decoding) attention kernels divide the keys a token
/// sees over `splits` blocks per KV head, chosen per step (splitsFor): many
/// where a step has few tokens (one token alone would leave most SMs idle),
/// few where it has many (each split costs a partial result to write and
/// merge), and none shorter than kMinDecodeSplitKeys keys of the token that
/// sees the most (the others' splits may be shorter, or empty). A block
/// computes one KV head's whole group of query heads, so `splitTokens` is
/// the step's tokens x splits that give enough warps for 8 KV heads
/// (Command R7B and Command A): kTokenSplitTokens for the CUDA-core kernel
/// (4 warps a block: about 4096 warps), kDecodeSplitTokens for the
/// tensor-core decode kernel (one warp a block: about 2048 warps, two per
/// resident warp of an H200; more splits would shorten each warp's keys to
/// a few tiles, and a warp's fixed cost, its loads of q, the block table
/// and the first tile, one after another, is several tiles' worth).
constexpr int64_t kMaxDecodeSplits = 32;
constexpr int64_t kTokenSplitTokens = 128;
constexpr int64_t kDecodeSplitTokens = 256;
constexpr int64_t kMinDecodeSplitKeys = 16;
/// Splits for `tokens` tokens of a split kernel, the longest seeing
/// `maxKeys` keys: splitTokens / tokens rounded down to a power of two, at
/// most maxKeys / kMinDecodeSplitKeys, in [1, kMaxDecodeSplits].
int64_t splitsFor(int64_t tokens, int64_t maxKeys, int64_t splitTokens);

/// Steps of at most this many tokens run the plan's side-stream steps on the
/// side stream (step parameter side_stream). Measured on an H200 (Command
/// R7B shapes, bench/RESULTS.md): the side stream gains in steps of 1 to 128
/// tokens (fp8 decode at batch 1 +12%, prefill of 128 tokens 14-22%), but
/// prefill of 2048 and 8191 tokens in bf16 lost 2-4% (its GEMMs and prefill
/// attention already fill the GPU; run together they contend). Between 128
/// and 2048 tokens it was not measured.
constexpr int64_t kSideStreamMaxTokens = 128;

/// A step is a decode step when it has one generated token per sequence
/// and wants every token's logits.
bool isDecodeStep(int64_t tokens, int64_t generated, int64_t numSeqs, int64_t rows);

/// The parameters of a step of `tokens` tokens (`generated` of them
/// generated, the rest prompt tokens), `rows` of them wanting logits:
///   tokens, rows, block_size; table_width: the width of every KV group's
///   block tables;
///   decode_tokens: the step's generated tokens (rows of "generated_rows");
///   prefill_tiles: ceil(tokens / kPrefillTileTokens) when it has a prompt
///   token, else 0;
///   prefill_splits: blocks sharing a tile's keys: kPrefillSplitTiles /
///   prefill_tiles, at most ceil(maxKeys / kPrefillKeyTile) /
///   kMinPrefillSplitKeyTiles, in [1, kMaxPrefillSplits] (maxKeys: the
///   step's StepInput::maxKeys);
///   prefill_blocks: prefill_tiles x prefill_splits;
///   prefill_partials: tokens x prefill_splits when prefill_splits > 1, else
///   0 (rows of the split partial results); prefill_merge_tokens: tokens
///   when prefill_splits > 1, else 0;
///   decode_splits: splitsFor(decode_tokens, maxGeneratedKeys: the most
///   keys a generated token sees, kDecodeSplitTokens); decode_split_blocks:
///   decode_tokens x decode_splits (the split kernel over generated tokens);
///   token_splits, token_split_blocks: the same over all tokens, the most keys
///   of any, kTokenSplitTokens (f32 plans run the split kernel for every
///   token); decode_merge_tokens, token_merge_tokens: decode_tokens (tokens)
///   when decode_splits (token_splits) > 1, else 0 (with one split the kernel
///   stores its output itself: no partial results to merge); gemv_token: 1 in a
///   step of one token, else 0; gemm_tokens: tokens in any other step, else 0
///   (linear layers of one token are matrix-vector kernels, the others GEMMs;
///   SwiGLU and its quantization split one token's row over blocks);
///   sampled_rows: rows when `tokensOnly` (the caller wants the token
///   sampled from each logits row, not the row: StepInput::tokensOnly),
///   else 0;
///   side_stream: 1 when tokens <= kSideStreamMaxTokens (the plan's side
///   steps run on the side stream), else 0 (every step on the main one).
/// A kernel for one kind of token is launched over decode_tokens or
/// prefill_blocks (zero blocks: not launched) and skips the other kind.
StepParamValues stepParams(int64_t tokens, int64_t generated, int64_t rows,
                           int64_t blockSize, int64_t tableWidth,
                           int64_t maxKeys, int64_t maxGeneratedKeys,
                           bool tokensOnly);

} // namespace cohere2c

#endif // COHERE2C_ARTIFACT_STEPPARAMS_H
