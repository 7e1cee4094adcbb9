//===- Executor.h - Runs one model step on a target -----------------------===//
//
// The scheduler builds a StepInput (tokens of several sequences, prefill
// chunks and decode tokens alike) and an Executor runs the compiled step
// function on it: K and V of the step's tokens are written into the paged
// KV cache through the block tables, then each token attends over its own
// sequence's cached keys. Targets (host, cuda) implement it.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_RUNTIME_EXECUTOR_H
#define COHERE2C_RUNTIME_EXECUTOR_H

#include "Artifact/Manifest.h"
#include "Support/Status.h"

#include <cstdint>
#include <vector>

namespace cohere2c {

/// What a step may address: token ids below the vocabulary, and numBlocks
/// blocks of blockSize tokens in the KV pool every KV group (the manifest's
/// kv_groups) draws from; window[g] is group g's window (0: unbounded).
struct StepLimits {
  int64_t vocab = 0, blockSize = 1, numBlocks = 0;
  std::vector<int64_t> window;

  /// The limits of `manifest`'s model served with `numBlocks` blocks of
  /// `blockSize` tokens in its KV pool.
  static StepLimits of(const Manifest &manifest, int64_t blockSize,
                       int64_t numBlocks);
};

struct StepInput {
  /// [T]: token id, its position in its sequence, and its sequence's row in
  /// the block tables.
  std::vector<int32_t> ids, positions, seqRows;
  /// [T]: 1 for a generated token (its position at or past the prompt's
  /// length, also when recomputed after preemption), 0 for a prompt token.
  /// Targets may compute the two kinds with different kernels. (The cuda
  /// target's results also depend on the step's shape where it picks
  /// kernels by it: matrix-vector kernels for a step of one token, GEMM
  /// tilings by token count, prefill attention splits by tile count; to
  /// within rounding.)
  std::vector<int32_t> generated;
  /// Per KV group (the manifest's kv_groups): [numSeqs, tableWidth] block
  /// ids, row-major; entries outside what a token can see may be -1.
  std::vector<std::vector<int32_t>> tables;
  int64_t tableWidth = 0;
  int64_t numSeqs = 0;
  /// [R]: indices into the step's tokens whose logits are wanted.
  std::vector<int32_t> logitRows;
  /// Each logits row is wanted only for its token, greedy or sampled at a
  /// temperature (no sequence of the step records logits or asks for top-k,
  /// top-p or log-probabilities): the executor fills
  /// StepOutput::sampledTokens, and may leave StepOutput::logits unfilled.
  bool tokensOnly = false;
  /// tokensOnly steps, [R]: each logits row's temperature (0: greedy) and
  /// the seed of its Gumbel noise (lib/Artifact/GumbelNoise.h).
  std::vector<float> temperatures;
  std::vector<uint64_t> noiseSeeds;

  /// That the step only addresses what exists (the kernels index with it
  /// unchecked). Errors name what is inconsistent: per-token arrays of
  /// different lengths, a token id outside the vocabulary, a negative
  /// position, a generated flag other than 0 or 1, a sequence row outside
  /// [0, numSeqs), a logits row outside the tokens, not one block table per
  /// KV group, block tables not [numSeqs, tableWidth], and, for each
  /// sequence and KV group, a block its tokens can see (from the first key
  /// of the earliest one's window to the latest one's position) past the
  /// table width or outside [0, numBlocks).
  Status check(const StepLimits &limits) const;
  /// The indices of the generated tokens, in order.
  std::vector<int32_t> generatedRows() const;
  /// The most keys a prompt token (`generatedTokens` false: what sizes the
  /// prefill kernels) or a generated token (true: the split kernel) of the
  /// step sees before its window: its position + 1 (0 without such tokens).
  int64_t maxKeys(bool generatedTokens) const;
};

struct StepOutput {
  /// [R, vocab] f32, row r for token logitRows[r]; unspecified when the
  /// step was tokensOnly (the cuda target leaves it as it was).
  std::vector<float> logits;
  /// tokensOnly steps: [R], gumbelMaxToken() of each logits row at its
  /// temperature and noise seed (greedyToken() at temperature 0; -1 where
  /// a logit is NaN or infinite); otherwise unspecified.
  std::vector<int32_t> sampledTokens;
};

/// For targets that compute the logits on the host: when the step is
/// tokensOnly, output.sampledTokens = gumbelMaxToken() of each row of
/// output.logits ([R, vocab]).
void sampledTokensOnHost(const StepInput &input, int64_t vocab,
                         StepOutput &output);

class Executor {
public:
  virtual ~Executor() = default;
  /// Runs one step into `output` (its buffers are reused from step to
  /// step). Errors name the failing call.
  virtual Status run(const StepInput &input, StepOutput &output) = 0;
  /// Bytes of KV-cache memory per block (kvBytesPerBlock: the same in
  /// every KV group).
  virtual int64_t bytesPerBlock() const = 0;
};

} // namespace cohere2c

#endif // COHERE2C_RUNTIME_EXECUTOR_H
