//===- LaunchPlan.h - The step of a cuda artifact, as launches ------------===//
//
// A cuda artifact's step is a fixed sequence of kernel launches and GEMMs,
// recorded by the compiler (convert-attn-to-gpu) and replayed by the runtime
// on a main and a side CUDA stream that fork and join (and so capturable in
// a CUDA graph). Sizes that change from step to step (tokens, logits rows,
// block table width) are named parameters; everything else was fixed at
// compile time.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_ARTIFACT_LAUNCHPLAN_H
#define COHERE2C_ARTIFACT_LAUNCHPLAN_H

#include "Artifact/WeightLayout.h"
#include "Model/SafeTensors.h"
#include "Support/Status.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace cohere2c {

/// An activation buffer of the step: [rows, width] of dtype, rows being the
/// value of the step parameter rowsParam ("tokens", "rows", "decode_tokens").
struct PlanBuffer {
  std::string name;
  int64_t width = 0;
  DType dtype = DType::F32;
  std::string rowsParam = "tokens";
};

/// A kernel argument.
struct PlanArg {
  enum class Kind {
    Buffer, // a PlanBuffer, by name
    Weight, // a weight (WeightLayout), by name
    Input,  // a step input: ids, positions, seqs, generated (flags),
            // generated_rows (their indices), full_tables, full_pool,
            // sliding_tables, sliding_pool, logit_rows, logits,
            // greedy_tokens (the greedy token of each logits row, i32)
    Param,  // a step parameter (i64, stepParams)
    Int     // an i64 constant
  };
  Kind kind = Kind::Int;
  std::string name;
  int64_t value = 0;
  // Buffer: the columns [column, column + width) of each row (width 0: all
  // of them), e.g. k inside the output of the GEMM that merged q, k and v.
  // A kernel reads such a view with the buffer's width as its row stride.
  // Weight: width > 0 is the number of elements the kernel reads from the
  // weight's start on (a merged group's entries, laid out back to back).
  int64_t column = 0, width = 0;
};

/// A step of the plan. The runtime replays kernels and GEMMs on two
/// streams: the main one, and a side one for branches of the model that
/// need nothing the main stream computes after their inputs (a layer's MLP,
/// which the attention chain of the same layer does not feed). Fork: the
/// side stream waits for what the main stream has enqueued so far; Join:
/// the main stream waits for the side stream. Steps marked `side` lie
/// between a Fork and its Join (LaunchPlan::check). Between the two, no
/// buffer that one stream writes is read or written by the other (the
/// compiler frees no buffer for reuse before the Join). A step whose
/// parameter side_stream is 0 runs every step on the main stream, in plan
/// order (forks and joins do nothing).
struct PlanStep {
  enum class Kind { Kernel, Gemm, Fork, Join };
  Kind kind = Kind::Kernel;
  bool side = false; // Kernel, Gemm: run on the side stream
  // Kernel: grid (gridX, gridY, 1), block (blockX, 1, 1); gridX is the
  // parameter named by gridXParam (a launch with gridX 0 is skipped).
  std::string kernel;
  std::string gridXParam = "tokens";
  int64_t gridY = 1, blockX = 1;
  std::vector<PlanArg> args;
  // Gemm: c[m, n] = alpha * a[m, k] @ weight[n, k]^T, m = the parameter
  // mParam; a and c are buffers or inputs (args[0] = a, args[1] = c).
  // weight[n, k] starts at the named weight and may span the entries laid
  // out after it (projections of one input merged into one GEMM).
  // FP8 rowwise GEMM when weightScale names the weight's per-output-channel
  // scales: a is e4m3 with per-token scales args[2], c[m, n] = alpha *
  // a_scale[m] * w_scale[n] * sum_k a[m, k] w[n, k].
  std::string weight, weightScale;
  std::string mParam = "tokens";
  int64_t n = 0, k = 0;
  double alpha = 1.0;
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

/// The split (flash-decoding) attention kernel divides the keys a token
/// sees over `splits` blocks per head, chosen per step (splitsFor): many
/// where a step has few tokens (one token alone would leave most SMs idle),
/// few where it has many (each split costs a partial result to write and
/// merge), and none shorter than kMinDecodeSplitKeys keys of the token that
/// sees the most (the others' splits may be shorter, or empty). Measured
/// against a constant 4 splits (bench/RESULTS.md, fp8 Command R7B on an
/// H200, tokens/s): one token at 8064 keys 216.0 -> 247.5 (16 splits), 64
/// tokens at 512 keys 4628 -> 5608 (1 split), one token at 512 keys
/// unchanged (8 splits).
constexpr int64_t kMaxDecodeSplits = 16;
constexpr int64_t kDecodeSplitTokens = 16; // splits = kDecodeSplitTokens / tokens
constexpr int64_t kMinDecodeSplitKeys = 64;
/// Splits for `tokens` tokens of the split kernel, the longest seeing
/// `maxKeys` keys: kDecodeSplitTokens / tokens rounded down to a power of two,
/// at most maxKeys / kMinDecodeSplitKeys, in [1, kMaxDecodeSplits].
int64_t splitsFor(int64_t tokens, int64_t maxKeys);

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

/// The named parameters of a step of `tokens` tokens (`generated` of them
/// generated, the rest prompt tokens), `rows` of them wanting logits:
///   tokens, rows, block_size, full_table_width, sliding_table_width;
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
///   keys a generated token sees); decode_split_blocks: decode_tokens x
///   decode_splits (the split kernel over generated tokens); token_splits,
///   token_split_blocks: the same over all tokens, the most keys of any
///   (f32 plans run the split kernel for every token);
///   gemv_token: 1 in a step of one token, else 0; gemm_tokens: tokens in
///   any other step, else 0 (linear layers of one token are matrix-vector
///   kernels, the others GEMMs);
///   greedy_rows: rows when `greedyOnly` (the caller wants each logits
///   row's greedy token, not the row: StepInput::greedyOnly), else 0;
///   side_stream: 1 when tokens <= kSideStreamMaxTokens (the plan's side
///   steps run on the side stream), else 0 (every step on the main one).
/// A kernel for one kind of token is launched over decode_tokens or
/// prefill_blocks (zero blocks: not launched) and skips the other kind.
std::map<std::string, int64_t> stepParams(int64_t tokens, int64_t generated, int64_t rows,
                                          int64_t blockSize, int64_t fullTableWidth,
                                          int64_t slidingTableWidth, int64_t maxKeys,
                                          int64_t maxGeneratedKeys, bool greedyOnly);

struct LaunchPlan {
  std::vector<PlanBuffer> buffers;
  std::vector<PlanStep> steps;

  std::string toJson() const;
  /// Errors name `source` and the malformed entry.
  static StatusOr<LaunchPlan> parse(const std::string &json,
                                    const std::string &source);
  /// That every name resolves and every size is in range, so that the
  /// runtime never launches with a missing pointer: buffers (unique, width
  /// > 0, views inside them), weights (in `weights`; a GEMM's [n, k] weight
  /// and its n scales inside the weights), step inputs, kernel grids
  /// (grid_y in [1, 65535], block_x in [1, 1024]), forks and joins (paired,
  /// not nested, side steps between them, no buffer column or step input
  /// named by both streams between them). Errors name `source` and the
  /// entry.
  Status check(const WeightLayout &weights, const std::string &source) const;
};

} // namespace cohere2c

#endif // COHERE2C_ARTIFACT_LAUNCHPLAN_H
