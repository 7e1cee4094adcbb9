//===- Engine.h - Continuous batching over the paged KV cache -------------===//
//
// Serves requests to completion: admits them while the batch has room and
// the KV cache has blocks, runs steps that mix prefill chunks and decode
// tokens of every running request, samples, and preempts (then recomputes)
// the most recently admitted request when blocks run out; nothing is lost.
// The KV cache persists across run() calls, so a later request reuses the
// cached prefix of an earlier one. Not thread-safe.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_RUNTIME_SCHEDULER_ENGINE_H
#define COHERE2C_RUNTIME_SCHEDULER_ENGINE_H

#include "Executor.h"
#include "kv_cache/KVCacheManager.h"
#include "scheduler/Sampler.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace cohere2c {

struct Request {
  std::string id;
  std::vector<int32_t> promptIds;
  int64_t maxNewTokens = 16;
  SamplingParams sampling;
  /// Keep the logits of every computed position from recordLogitsFrom on
  /// (for --logits-out).
  bool recordLogits = false;
  int64_t recordLogitsFrom = 0;
};

struct RequestResult {
  std::string id;
  std::vector<int32_t> generatedIds;
  /// Prompt tokens whose KV came from the prefix cache at first admission.
  int64_t cachedTokens = 0;
  double ttftMs = 0, totalMs = 0; // from the start of run()
  /// With recordLogits: rows [firstLogitsRow, P + N - 1) of the sequence's
  /// logits, [rows, vocab] f32; row i is the distribution of token i + 1.
  /// firstLogitsRow is the larger of recordLogitsFrom and cachedTokens
  /// (positions before the latter were served from the cache).
  int64_t firstLogitsRow = 0;
  std::vector<float> logits;
};

struct EngineOptions {
  int64_t blockSize = 16;
  /// Blocks per KV group; 0 = defaultKVBlocks (room for maxBatch sequences
  /// of the full context, at most 4 GiB of KV cache on the host target).
  int64_t numBlocks = 0;
  /// Most prompt tokens of one request per step; 0 = the whole prompt (a
  /// preempted request recomputes its prompt + generated tokens in chunks
  /// of its prompt's length).
  int64_t prefillChunk = 0;
  /// Most requests in flight (1 serves them one after another).
  int64_t maxBatch = 1;
  bool prefixCache = true;
  bool ignoreEos = false;
};

/// Most host memory the default KV cache of a host-target artifact takes.
constexpr int64_t kMaxDefaultHostKVBytes = int64_t(4) << 30; // 4 GiB

/// Blocks per KV group when EngineOptions::numBlocks is 0: room for
/// maxBatch sequences of the whole context (max_position_embeddings); for
/// the host target, capped so that the pools of all groups take at most
/// kMaxDefaultHostKVBytes (kvBytesPerBlock), and at least 1.
int64_t defaultKVBlocks(const Manifest &manifest, const EngineOptions &options);

/// Steps are prefill steps when they compute a prompt token or several
/// tokens of one sequence (a chunk, also of generated tokens recomputed
/// after a preemption), else decode steps (one generated token per
/// sequence); tokens and times are counted by the kind of their step, so
/// that tokens / time is each kind's rate. A preemption is an eviction of
/// a sequence that had computed tokens since its admission.
struct EngineStats {
  int64_t steps = 0, prefillTokens = 0, decodeTokens = 0, preemptions = 0;
  double prefillMs = 0, decodeMs = 0;
  int64_t peakKVBytes = 0;            // blocks referenced by live sequences
};

class Engine {
public:
  /// Errors: options out of range (naming the option).
  static StatusOr<std::unique_ptr<Engine>>
  create(Executor &executor, const Manifest &manifest, EngineOptions options);

  /// Checks a request before it runs: a non-empty prompt, every id in
  /// [0, vocab), prompt + max_new_tokens within max_position_embeddings, and
  /// room for it alone in each KV group's numBlocks blocks: the full group
  /// needs ceil((P + N - 1) / B) blocks (the last sampled token is never fed
  /// back), a sliding group of window W at most the fewer of that and
  /// ceil((W + chunk) / B) + 2, chunk being the prefill chunk or the prompt
  /// length P. Errors name the request id and the offending value (for the
  /// KV cache: the blocks needed, the group and --kv-blocks).
  Status validate(const Request &request) const;

  /// Serves all requests (validated first; none runs if one is invalid).
  /// `onFinish` is called as each finishes; the results come back in the
  /// order of `requests`. Errors: an invalid request (validate), before any
  /// runs; an executor failure.
  StatusOr<std::vector<RequestResult>>
  run(const std::vector<Request> &requests,
      const std::function<void(const RequestResult &)> &onFinish = nullptr);

  const EngineStats &stats() const { return stats_; }
  const kv::KVCacheManager &kvCache() const { return *kvCache_; }
  /// KV bytes per block of each manager group (in kvCache() group order).
  const std::vector<int64_t> &bytesPerBlock() const { return bytesPerBlock_; }

private:
  struct Active;
  Engine(Executor &executor, const Manifest &manifest, EngineOptions options)
      : executor_(executor), manifest_(manifest), options_(options) {}
  /// Most tokens of request `r` computed in one step.
  int64_t maxChunk(const Request &r) const;
  /// Tokens of `a` to compute in the next step.
  int64_t nextChunk(const Active &a) const;
  Status step(std::vector<Active *> &running, std::vector<Active *> &waiting);

  Executor &executor_;
  const Manifest &manifest_;
  EngineOptions options_;
  std::unique_ptr<kv::KVCacheManager> kvCache_;
  /// KVGroupIndex of each manager group (the manager only has the groups
  /// the model has layers in).
  std::vector<KVGroupIndex> groupKinds_;
  std::vector<int64_t> bytesPerBlock_;
  kv::SeqId nextSeqId_ = 0;
  EngineStats stats_;
  /// The last step's logits ([rows, vocab] f32) or greedy tokens. Kept
  /// from step to step: a batch's rows (65 MB at batch 64 of a
  /// 256000-token vocabulary) newly allocated each step cost more than the
  /// copy that fills them.
  StepOutput output_;
};

} // namespace cohere2c

#endif // COHERE2C_RUNTIME_SCHEDULER_ENGINE_H
